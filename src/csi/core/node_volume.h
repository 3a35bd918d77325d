#pragma once
// The node plugin's pure decisions (issue 13): the volume limit it reports, whether to format a
// device, how to format and mount it. The I/O side runs blkid, mkfs and mount(2) with these.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ccm::csi {

// NodeGetInfo.max_volumes_per_node: 59 (the current reference's default) when $MAX_VOLUMES_PER_NODE
// is unset, empty or 0; otherwise its decimal value in [1, 255] (vSphere 8's limit), an override
// older references read.
// InvalidArgument for anything else, naming the value (the reference fails NodeGetInfo with
// Internal; we report it at start-up, where it is a configuration error).
absl::StatusOr<int64_t> MaxVolumesPerNode(std::optional<absl::string_view> env_value);

// What to do with a device about to be staged with a filesystem.
enum class FormatAction {
  kFormat,  // no filesystem: mkfs, then mount
  kMount,   // mount what is there (as mount_fs_type)
};
struct FormatDecision {
  FormatAction action = FormatAction::kMount;
  std::string mount_fs_type;  // the type to pass to mount(2)
};

// `existing`: blkid's TYPE for the device (PTTYPE when it found only a partition table), empty
// when blkid found nothing (exit status 2). `requested`: the capability's type, already checked by
// MountFsType (ext4, ext3 or xfs). Never formats a device that holds anything:
//  - nothing there: kFormat, unless `read_only` (a read-only volume is never formatted):
//    FailedPrecondition;
//  - the requested type: kMount;
//  - ext2 or ext3 when ext4 is asked: kMount as the existing type (the data is kept; ext4's
//    driver reads them, and mount-utils does the same);
//  - anything else (another filesystem, LVM, LUKS, a partition table): FailedPrecondition naming
//    both types.
absl::StatusOr<FormatDecision> DecideFormat(absl::string_view existing, absl::string_view requested,
                                            bool read_only);

// mkfs's argv for an empty device, as the reference's gofsutil runs it: "mkfs.<fs> -F <dev>" for
// ext3/ext4 (-F: the whole device, no partition prompt), "mkfs.<fs> <dev>" for xfs. For xfs on a
// node whose kernel (`kernel_release`, uname -r: "5.4.0-150-generic") is older than 5.10, also
// "-m bigtime=0 -m inobtcount=0", as the reference: xfsprogs 5.15+ turns both features on and
// such kernels cannot mount the result. A release that does not parse counts as old (the flags
// only keep the filesystem mountable by old kernels).
std::vector<std::string> MkfsArgv(absl::string_view fs_type, absl::string_view device,
                                  absl::string_view kernel_release);

// True when `kernel_release` is at least major.minor.
bool KernelAtLeast(absl::string_view kernel_release, int major, int minor);

// Options for mounting at the staging path: the capability's mount_flags, "nouuid" for xfs (as
// osutils EnsureMountVol: a clone carries the same xfs UUID), "ro" when read-only; duplicates
// dropped, order kept.
std::vector<std::string> StageMountOptions(absl::string_view fs_type,
                                           const std::vector<std::string>& mount_flags,
                                           bool read_only);

// Options for the bind mount staging -> target: "bind", the capability's mount_flags and "ro"
// when NodePublishVolume asks read-only.
std::vector<std::string> PublishMountOptions(const std::vector<std::string>& mount_flags,
                                             bool read_only);

// NodePublishVolume of a raw block volume with readonly: InvalidArgument, as the reference ("read
// only not supported for Block Volume": a read-only bind of a device node does not stop writes).
absl::Status CheckBlockPublish(bool read_only);

}  // namespace ccm::csi
