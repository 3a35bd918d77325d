#pragma once
// The node's mount table: mount(2), umount2(2) and /proc/self/mountinfo. The real thing only;
// tests run it against loop devices in a private mount namespace.
//
// Thread-safety: stateless apart from its options; callable from any thread. Whether two calls
// on the same path may overlap is the caller's business (the node service locks per volume).

#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "csi/node/mountinfo.h"

namespace ccm::csi::node {

class Mounter {
 public:
  explicit Mounter(std::string mountinfo_path = "/proc/self/mountinfo")
      : mountinfo_path_(std::move(mountinfo_path)) {}

  // mount(2) of a filesystem on a device; `options` as mount(8) takes them (mount_options.h).
  // Errors carry the errno's code (absl::ErrnoToStatus) and name source, target and type.
  absl::Status Mount(const std::string& source, const std::string& target,
                     const std::string& fs_type, const std::vector<std::string>& options) const;

  // A bind mount of `source` (a directory or a device node) at `target`. The kernel ignores
  // per-mount flags on the bind itself, so "ro", "nosuid", ... are applied by a remount right
  // after; when that fails the bind is undone, so a read-only request never leaves a writable
  // mount behind.
  absl::Status BindMount(const std::string& source, const std::string& target,
                         const std::vector<std::string>& options) const;

  // umount2(target, 0). Nothing mounted there: FailedPrecondition (EINVAL).
  absl::Status Unmount(const std::string& target) const;

  // The mount table as this process sees it.
  absl::StatusOr<std::vector<MountInfo>> Mounts() const;

  // FindMountAt on a fresh table.
  absl::StatusOr<std::optional<MountInfo>> MountAt(const std::string& path) const;

 private:
  std::string mountinfo_path_;
};

}  // namespace ccm::csi::node
