#pragma once
// Filesystems on a device: the seam the Node service probes, formats and grows through.
// ToolFilesystems runs the tools (Debian: util-linux blkid, e2fsprogs, xfsprogs); the decisions
// around them are csi/core (DecideFormat, MkfsArgv). FakeFilesystems (test/testing/fake_node.h)
// serves the service's table tests.

#include <string>

#include "absl/status/statusor.h"

namespace ccm::csi::node {

class Filesystems {
 public:
  virtual ~Filesystems() = default;
  // What the device holds: its filesystem type, else its partition table type (a disk with
  // partitions is not empty), else "" (nothing). FailedPrecondition when there is more than one
  // signature, so such a disk is neither formatted nor mounted.
  virtual absl::StatusOr<std::string> Probe(const std::string& device) = 0;
  // A new filesystem of `fs_type` on the device. Internal with the tool's output when it fails.
  virtual absl::Status Format(const std::string& fs_type, const std::string& device) = 0;
  // Grows the filesystem mounted at `mount_point` from `device` to the device's size, online.
  // InvalidArgument for a type that cannot grow; FailedPrecondition when the process lacks the
  // capability the kernel wants (named in the message).
  virtual absl::Status Grow(const std::string& fs_type, const std::string& device,
                            const std::string& mount_point) = 0;
};

class ToolFilesystems final : public Filesystems {
 public:
  // blkid's low-level probe (-p: the device itself, never the cache); exit status 2 is nothing
  // there, 8 ("ambivalent") more than one signature.
  absl::StatusOr<std::string> Probe(const std::string& device) override;
  // mkfs (MkfsArgv, with this kernel's release from uname).
  absl::Status Format(const std::string& fs_type, const std::string& device) override;
  // resize2fs <device> for ext2/3/4, xfs_growfs -d <mount point> for xfs.
  absl::Status Grow(const std::string& fs_type, const std::string& device,
                    const std::string& mount_point) override;
};

}  // namespace ccm::csi::node
