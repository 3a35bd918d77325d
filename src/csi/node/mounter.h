#pragma once
// The node's mount table and the paths mounts sit on: the seam the Node service does all its
// mount and path I/O through (aws-ebs-csi-driver's Mounter). SystemMounter is the real thing
// (mount(2), umount2(2), /proc/self/mountinfo, the filesystem), tested on loop devices in a
// private mount namespace; FakeMounter (test/testing/fake_node.h) keeps a table in memory for the
// service's table tests.
//
// Thread-safety: implementations are callable from any thread. Whether two calls on the same
// path may overlap is the caller's business (the node service locks per volume).

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "csi/node/mountinfo.h"

namespace ccm::csi::node {

enum class PathKind { kMissing, kDirectory, kBlockDevice, kOther };

struct PathStat {
  PathKind kind = PathKind::kMissing;
  dev_t rdev = 0;  // a block device's major:minor
};

// statvfs(3)'s figures the stats RPC reports.
struct FsStats {
  uint64_t frsize = 0, blocks = 0, bfree = 0, bavail = 0, files = 0, ffree = 0;
};

class Mounter {
 public:
  virtual ~Mounter() = default;

  // mount(2) of a filesystem on a device; `options` as mount(8) takes them (mount_options.h).
  // Errors carry the errno's code (absl::ErrnoToStatus) and name source, target and type.
  virtual absl::Status Mount(const std::string& source, const std::string& target,
                             const std::string& fs_type,
                             const std::vector<std::string>& options) = 0;
  // A bind mount of `source` (a directory or a device node) at `target`, with the per-mount
  // flags of `options` ("ro", "nosuid", ...) applied; when they cannot be, nothing stays mounted,
  // so a read-only request never leaves a writable mount behind.
  virtual absl::Status BindMount(const std::string& source, const std::string& target,
                                 const std::vector<std::string>& options) = 0;
  // Nothing mounted there: FailedPrecondition.
  virtual absl::Status Unmount(const std::string& target) = 0;
  // The mount table as this process sees it.
  virtual absl::StatusOr<std::vector<MountInfo>> Mounts() = 0;
  // FindMountAt on a fresh table.
  absl::StatusOr<std::optional<MountInfo>> MountAt(const std::string& path);

  // `path` (absolute) as the kernel prints it in mountinfo: symlinks of its existing part
  // resolved, no "." / ".." / trailing '/'.
  virtual std::string Resolve(const std::string& path) = 0;
  // What is at `path` (symlinks followed); kMissing when nothing is.
  virtual absl::StatusOr<PathStat> Stat(const std::string& path) = 0;
  // The directory and its missing parents.
  virtual absl::Status MakeDir(const std::string& path) = 0;
  // An empty file (kept when one exists), its missing parents created.
  virtual absl::Status MakeFile(const std::string& path) = 0;
  // A file or an empty directory; anything else stays, with an error.
  virtual absl::Status Remove(const std::string& path) = 0;
  virtual absl::StatusOr<FsStats> StatFs(const std::string& path) = 0;
};

class SystemMounter final : public Mounter {
 public:
  explicit SystemMounter(std::string mountinfo_path = "/proc/self/mountinfo")
      : mountinfo_path_(std::move(mountinfo_path)) {}

  absl::Status Mount(const std::string& source, const std::string& target,
                     const std::string& fs_type, const std::vector<std::string>& options) override;
  absl::Status BindMount(const std::string& source, const std::string& target,
                         const std::vector<std::string>& options) override;
  absl::Status Unmount(const std::string& target) override;
  absl::StatusOr<std::vector<MountInfo>> Mounts() override;
  std::string Resolve(const std::string& path) override;
  absl::StatusOr<PathStat> Stat(const std::string& path) override;
  absl::Status MakeDir(const std::string& path) override;
  absl::Status MakeFile(const std::string& path) override;
  absl::Status Remove(const std::string& path) override;
  absl::StatusOr<FsStats> StatFs(const std::string& path) override;

 private:
  std::string mountinfo_path_;
};

}  // namespace ccm::csi::node
