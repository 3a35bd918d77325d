#pragma once
// /proc/self/mountinfo, parsed: what is mounted where, from which device, with which options.
// The node service reads it to decide whether a stage or publish was already done (idempotency)
// and with the same arguments (AlreadyExists otherwise). Pure: the caller reads the file.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ccm::csi::node {

// One line of mountinfo (proc(5)); paths are unescaped (\040 -> ' ').
struct MountInfo {
  int id = 0;
  int parent_id = 0;
  uint32_t major = 0;  // st_dev of files in this mount
  uint32_t minor = 0;
  std::string root;         // the directory of the filesystem mounted here ("/" unless a bind)
  std::string mount_point;  // where
  std::string options;      // per-mount options: "rw,nosuid,relatime"
  std::string fs_type;      // "ext4", "xfs", "devtmpfs"
  std::string source;       // "/dev/loop3", as given to mount(2)
  std::string super_options;

  bool read_only() const;                       // "ro" among the per-mount options
  bool HasOption(absl::string_view opt) const;  // per-mount or superblock option
};

// InvalidArgument naming the line for a line that does not have the ten fields and the "-"
// separator. An empty text is an empty table.
absl::StatusOr<std::vector<MountInfo>> ParseMountInfo(absl::string_view text);

// The mount visible at `mount_point` (the last one mounted there: mounts stack), if any.
// `mount_point` must be normalised the way the kernel prints it (absolute, no trailing '/').
std::optional<MountInfo> FindMountAt(const std::vector<MountInfo>& mounts,
                                     absl::string_view mount_point);

// Every mount of the device major:minor (its staging mount and the bind mounts of publish).
std::vector<MountInfo> MountsOfDevice(const std::vector<MountInfo>& mounts, uint32_t major,
                                      uint32_t minor);

}  // namespace ccm::csi::node
