#include "csi/node/device_finder.h"

#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <optional>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/logging.h"
#include "csi/core/publish_context.h"

namespace ccm::csi::node {
namespace fs = std::filesystem;

namespace {

// The link's target when it resolves to an existing file; nullopt when the link is missing or
// dangling (udev removes the link when the disk goes; a dangling one is as good as missing).
std::optional<std::string> Resolve(const std::string& link) {
  std::error_code ec;
  fs::path real = fs::canonical(link, ec);
  if (ec) return std::nullopt;
  return real.string();
}

}  // namespace

SysfsDeviceFinder::SysfsDeviceFinder(DeviceFinderOptions options)
    : options_(std::move(options)), clock_(options_.clock ? *options_.clock : Clock::Real()) {}

int SysfsDeviceFinder::RescanScsiHosts() const {
  std::error_code ec;
  int hosts = 0;
  for (const auto& entry : fs::directory_iterator(options_.scsi_host_dir, ec)) {
    if (!absl::StartsWith(entry.path().filename().string(), "host")) continue;
    std::ofstream scan(entry.path() / "scan");
    scan << "- - -";
    scan.flush();
    if (scan) {
      ++hosts;
    } else {
      LOG_WARN("SCSI rescan of {} failed", (entry.path() / "scan").string());
    }
  }
  return hosts;
}

absl::StatusOr<BlockDevice> SysfsDeviceFinder::FindDisk(const std::string& disk_uuid) {
  const std::string link = DiskLinkPath(options_.by_id_dir, disk_uuid);
  std::optional<std::string> real = Resolve(link);
  int hosts = -1;
  if (!real) {
    hosts = RescanScsiHosts();
    const absl::Time deadline = clock_.Now() + options_.wait;
    while (!(real = Resolve(link)) && clock_.Now() < deadline) {
      clock_.SleepFor(std::min(options_.poll, deadline - clock_.Now()), nullptr);
    }
  }
  if (!real) {
    return absl::NotFoundError(
        absl::StrCat("disk ", disk_uuid, " is not attached to this node: ", link,
                     " did not appear within ", absl::FormatDuration(options_.wait),
                     " after a rescan of ", hosts, " SCSI host(s) in ", options_.scsi_host_dir));
  }
  absl::StatusOr<dev_t> rdev = DeviceNumber(*real);
  if (!rdev.ok()) {
    return absl::FailedPreconditionError(
        absl::StrCat("disk ", disk_uuid, ": ", link, " -> ", rdev.status().message()));
  }
  return BlockDevice{link, *real, *rdev};
}

absl::StatusOr<dev_t> SysfsDeviceFinder::DeviceNumber(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) return absl::ErrnoToStatus(errno, absl::StrCat("stat ", path));
  if (!S_ISBLK(st.st_mode)) {
    return absl::FailedPreconditionError(absl::StrCat(path, " is not a block device"));
  }
  return st.st_rdev;
}

absl::StatusOr<uint64_t> SysfsDeviceFinder::DeviceSize(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return absl::ErrnoToStatus(errno, absl::StrCat("open ", path));
  uint64_t size = 0;
  int rc = ioctl(fd, BLKGETSIZE64, &size);
  int err = errno;
  close(fd);
  if (rc != 0) return absl::ErrnoToStatus(err, absl::StrCat("size of ", path));
  return size;
}

absl::Status SysfsDeviceFinder::Rescan(const std::string& device_path) {
  fs::path rescan =
      fs::path("/sys/class/block") / fs::path(device_path).filename() / "device" / "rescan";
  std::error_code ec;
  if (!fs::exists(rescan, ec)) return absl::OkStatus();
  std::ofstream out(rescan);
  out << "1";
  out.flush();
  if (!out) return absl::InternalError(absl::StrCat("rescan of ", device_path, " failed"));
  return absl::OkStatus();
}

}  // namespace ccm::csi::node
