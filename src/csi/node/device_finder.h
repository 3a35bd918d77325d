#pragma once
// The block devices of attached disks: the seam the Node service finds and sizes disks through.
// SysfsDeviceFinder finds a disk the way udev names it, <by-id dir>/wwn-0x<disk UUID> (the
// reference's osutils GetDiskPath), rescanning the SCSI hosts when the link is not there yet (a
// hot-added disk shows up only after a rescan on some guests) and waiting a bounded time, on the
// injected Clock, for udev to create it. FakeDeviceFinder (test/testing/fake_node.h) serves the
// service's table tests.
//
// Thread-safety: implementations are callable from any thread.

#include <sys/types.h>

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/clock.h"

namespace ccm::csi::node {

struct DeviceFinderOptions {
  std::string by_id_dir = "/dev/disk/by-id";
  std::string scsi_host_dir = "/sys/class/scsi_host";  // host*/scan get "- - -"
  // How long FindDisk waits for a missing link after the rescan. 0: look once.
  absl::Duration wait = absl::Seconds(10);
  absl::Duration poll = absl::Milliseconds(100);
  Clock* clock = nullptr;  // null: the real clock
};

struct BlockDevice {
  std::string link;  // <by-id dir>/wwn-0x<uuid>
  std::string path;  // the device node it resolves to, e.g. /dev/sdb
  dev_t rdev = 0;    // its major:minor
};

class DeviceFinder {
 public:
  virtual ~DeviceFinder() = default;
  // `disk_uuid` as DiskUuidFromPublishContext formats it. NotFound when the disk is not
  // attached (its link still missing or dangling after the rescan and the wait: the message
  // names the UUID, the path looked at and how long we waited). FailedPrecondition when the link
  // leads to something that is not a block device.
  virtual absl::StatusOr<BlockDevice> FindDisk(const std::string& disk_uuid) = 0;
  // The device node's rdev: FailedPrecondition when `path` is not a block device, NotFound when
  // it does not exist.
  virtual absl::StatusOr<dev_t> DeviceNumber(const std::string& path) = 0;
  // The size in bytes of the block device at `path`.
  virtual absl::StatusOr<uint64_t> DeviceSize(const std::string& path) = 0;
  // Asks the kernel to read the size of a SCSI disk again, after vCenter grew it. Devices that
  // cannot be rescanned (loop, virtio) are left alone: OK.
  virtual absl::Status Rescan(const std::string& device_path) = 0;
};

class SysfsDeviceFinder final : public DeviceFinder {
 public:
  explicit SysfsDeviceFinder(DeviceFinderOptions options);

  absl::StatusOr<BlockDevice> FindDisk(const std::string& disk_uuid) override;
  absl::StatusOr<dev_t> DeviceNumber(const std::string& path) override;
  absl::StatusOr<uint64_t> DeviceSize(const std::string& path) override;
  absl::Status Rescan(const std::string& device_path) override;

  // Writes "- - -" to every <scsi_host_dir>/host*/scan; returns how many hosts were asked. A
  // missing directory (no SCSI hosts, as in a container) is 0, not an error.
  int RescanScsiHosts() const;
  const DeviceFinderOptions& options() const { return options_; }

 private:
  DeviceFinderOptions options_;
  Clock& clock_;
};

}  // namespace ccm::csi::node
