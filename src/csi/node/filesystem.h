#pragma once
// Filesystem tools on a device: blkid to see what it holds, mkfs to format an empty one,
// resize2fs / xfs_growfs to grow a mounted one (Debian: util-linux, e2fsprogs, xfsprogs).

#include <string>

#include "absl/status/statusor.h"

namespace ccm::csi::node {

// What blkid's low-level probe (-p: reads the device itself, never the cache) finds: the
// filesystem TYPE, else the partition table's PTTYPE (a disk with partitions is not empty),
// else "" (blkid exit status 2: nothing there). FailedPrecondition when blkid finds more than one
// signature (exit status 8: "ambivalent"), so such a disk is neither formatted nor mounted.
absl::StatusOr<std::string> ProbeFilesystem(const std::string& device);

// mkfs (MkfsArgv). Internal with the tool's output when it fails.
absl::Status Format(const std::string& fs_type, const std::string& device);

// Grows the filesystem mounted at `mount_point` from `device` to the device's size, online:
// resize2fs <device> for ext2/3/4, xfs_growfs -d <mount point> for xfs. InvalidArgument for
// another type; FailedPrecondition when the kernel refuses an ext4 resize for want of
// CAP_SYS_RESOURCE (named in the message).
absl::Status GrowFilesystem(const std::string& fs_type, const std::string& device,
                            const std::string& mount_point);

}  // namespace ccm::csi::node
