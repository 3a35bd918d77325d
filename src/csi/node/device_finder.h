#pragma once
// Finds the block device of an attached disk the way udev names it: <by-id dir>/wwn-0x<disk
// UUID> (the reference's osutils GetDiskPath), rescanning the SCSI hosts when the link is not
// there yet (a hot-added disk shows up only after a rescan on some guests) and waiting a bounded
// time for udev to create it.
//
// Thread-safety: stateless apart from its options; callable from any thread.

#include <sys/types.h>

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace ccm::csi::node {

struct DeviceFinderOptions {
  std::string by_id_dir = "/dev/disk/by-id";
  std::string scsi_host_dir = "/sys/class/scsi_host";  // host*/scan get "- - -"
  // How long FindDisk waits for a missing link after the rescan. 0: look once.
  absl::Duration wait = absl::Seconds(10);
  absl::Duration poll = absl::Milliseconds(100);
};

struct BlockDevice {
  std::string link;  // <by-id dir>/wwn-0x<uuid>
  std::string path;  // the device node it resolves to, e.g. /dev/sdb
  dev_t rdev = 0;    // its major:minor
};

class DeviceFinder {
 public:
  explicit DeviceFinder(DeviceFinderOptions options) : options_(std::move(options)) {}

  // `disk_uuid` as DiskUuidFromPublishContext formats it. NotFound when the link is still
  // missing (or dangling) after the rescan and the wait: the message names the UUID, the path
  // looked at and how long we waited. FailedPrecondition when the link leads to something that is
  // not a block device.
  absl::StatusOr<BlockDevice> FindDisk(const std::string& disk_uuid) const;

  // Writes "- - -" to every <scsi_host_dir>/host*/scan; returns how many hosts were asked. A
  // missing directory (no SCSI hosts, as in a container) is 0, not an error.
  int RescanScsiHosts() const;

  const DeviceFinderOptions& options() const { return options_; }

 private:
  DeviceFinderOptions options_;
};

// stat(2) of a device node: its rdev, FailedPrecondition when `path` is not a block device,
// NotFound when it does not exist.
absl::StatusOr<dev_t> BlockDeviceNumber(const std::string& path);

// The size in bytes of the block device at `path` (BLKGETSIZE64).
absl::StatusOr<uint64_t> BlockDeviceSize(const std::string& path);

// Asks the kernel to re-read the size of a SCSI disk (/sys/class/block/<name>/device/rescan),
// after vCenter grew it. Devices without that file (loop, virtio) are left alone: OK.
absl::Status RescanBlockDevice(const std::string& device_path);

}  // namespace ccm::csi::node
