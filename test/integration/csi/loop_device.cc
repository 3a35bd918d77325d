#include "integration/csi/loop_device.h"

#include <fcntl.h>
#include <linux/capability.h>
#include <linux/loop.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "common/run_command.h"
#include "csi/node/mountinfo.h"

namespace ccm::csi::testing {
namespace fs = std::filesystem;

namespace {
// unshare(CLONE_NEWNS) fails with EINVAL once the process has a second thread (gRPC, the API
// emulator), so the namespace is entered while static objects are built, before main().
const absl::Status kEnteredAtStart = EnterPrivateMountNamespace();
}  // namespace

absl::Status EnterPrivateMountNamespace() {
  static const absl::Status result = [] {
    if (unshare(CLONE_NEWNS) != 0) return absl::ErrnoToStatus(errno, "unshare(CLONE_NEWNS)");
    if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
      return absl::ErrnoToStatus(errno, "mount --make-rprivate /");
    }
    return absl::OkStatus();
  }();
  return result;
}

absl::StatusOr<std::unique_ptr<LoopDevice>> LoopDevice::Create(const std::string& dir,
                                                               uint64_t size_bytes) {
  static int counter = 0;
  const std::string file = absl::StrCat(dir, "/disk-", getpid(), "-", counter++, ".img");
  int file_fd = open(file.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (file_fd < 0) return absl::ErrnoToStatus(errno, absl::StrCat("create ", file));
  if (ftruncate(file_fd, static_cast<off_t>(size_bytes)) != 0) {
    close(file_fd);
    return absl::ErrnoToStatus(errno, "ftruncate");
  }
  close(file_fd);
  auto dev = Attach(file);
  if (!dev.ok()) {
    std::error_code ec;
    fs::remove(file, ec);
    return dev.status();
  }
  (*dev)->owns_file_ = true;
  return dev;
}

absl::StatusOr<std::unique_ptr<LoopDevice>> LoopDevice::Attach(const std::string& file) {
  auto dev = std::unique_ptr<LoopDevice>(new LoopDevice());
  dev->file_ = file;
  int file_fd = open(file.c_str(), O_RDWR | O_CLOEXEC);
  if (file_fd < 0) return absl::ErrnoToStatus(errno, absl::StrCat("open ", file));
  int ctl = open("/dev/loop-control", O_RDWR | O_CLOEXEC);
  if (ctl < 0) {
    close(file_fd);
    return absl::ErrnoToStatus(errno, "open /dev/loop-control");
  }
  absl::Status last = absl::UnavailableError("no free loop device");
  for (int attempt = 0; attempt < 20; ++attempt) {
    int n = ioctl(ctl, LOOP_CTL_GET_FREE);
    if (n < 0) {
      last = absl::ErrnoToStatus(errno, "LOOP_CTL_GET_FREE");
      break;
    }
    std::string path = absl::StrCat("/dev/loop", n);
    int fd = open(path.c_str(), O_RDWR | O_CLOEXEC);
    if (fd < 0) {
      last = absl::ErrnoToStatus(errno, absl::StrCat("open ", path));
      continue;
    }
    loop_config config;
    std::memset(&config, 0, sizeof(config));
    config.fd = static_cast<uint32_t>(file_fd);
    config.info.lo_flags = LO_FLAGS_AUTOCLEAR;
    std::strncpy(reinterpret_cast<char*>(config.info.lo_file_name), file.c_str(), LO_NAME_SIZE - 1);
    if (ioctl(fd, LOOP_CONFIGURE, &config) == 0) {
      dev->path_ = path;
      dev->fd_ = fd;
      close(ctl);
      close(file_fd);
      return dev;
    }
    // EBUSY: someone else configured this free device between GET_FREE and CONFIGURE.
    last = absl::ErrnoToStatus(errno, absl::StrCat("LOOP_CONFIGURE ", path));
    close(fd);
  }
  close(ctl);
  close(file_fd);
  return last;
}

LoopDevice::~LoopDevice() {
  Release();
  if (!owns_file_) return;
  std::error_code ec;
  fs::remove(file_, ec);
}

void LoopDevice::Release() {
  if (fd_ < 0) return;
  // Anything still mounted from the device would keep it attached: unmount it first.
  std::ifstream in("/proc/self/mountinfo");
  std::stringstream text;
  text << in.rdbuf();
  auto mounts = node::ParseMountInfo(text.str());
  if (mounts.ok()) {
    for (auto it = mounts->rbegin(); it != mounts->rend(); ++it) {
      if (it->source == path_) umount2(it->mount_point.c_str(), MNT_DETACH);
    }
  }
  ioctl(fd_, LOOP_CLR_FD, 0);  // detaches now when idle; autoclear covers a busy device
  close(fd_);
  fd_ = -1;
}

absl::Status LoopDevice::Grow(uint64_t new_size_bytes) {
  if (truncate(file_.c_str(), static_cast<off_t>(new_size_bytes)) != 0) {
    return absl::ErrnoToStatus(errno, absl::StrCat("truncate ", file_));
  }
  if (ioctl(fd_, LOOP_SET_CAPACITY, 0) != 0) {
    return absl::ErrnoToStatus(errno, absl::StrCat("LOOP_SET_CAPACITY ", path_));
  }
  return absl::OkStatus();
}

bool HasCapability(int cap) {
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2] = {};
  if (syscall(SYS_capget, &header, data) != 0) return false;
  return (data[cap / 32].effective & (1u << (cap % 32))) != 0;
}

std::vector<std::string> LoopDevicesBackedUnder(const std::string& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/sys/block", ec)) {
    std::string name = e.path().filename().string();
    if (!absl::StartsWith(name, "loop")) continue;
    std::ifstream in(e.path() / "loop" / "backing_file");
    std::string backing;
    std::getline(in, backing);
    if (absl::StartsWith(backing, dir)) out.push_back(absl::StrCat("/dev/", name, " ", backing));
  }
  return out;
}

std::vector<std::string> MountsUnder(const std::string& dir) {
  std::ifstream in("/proc/self/mountinfo");
  std::stringstream text;
  text << in.rdbuf();
  std::vector<std::string> out;
  auto mounts = node::ParseMountInfo(text.str());
  if (!mounts.ok()) return {mounts.status().ToString()};
  for (const auto& m : *mounts) {
    if (absl::StartsWith(m.mount_point, dir) || absl::StartsWith(m.source, dir)) {
      out.push_back(m.mount_point);
    }
  }
  return out;
}

void UnmountAllUnder(const std::string& dir) {
  std::vector<std::string> points = MountsUnder(dir);
  // Deepest (and most recent) first.
  std::sort(points.begin(), points.end(), [](const auto& a, const auto& b) { return a > b; });
  for (const auto& p : points) umount2(p.c_str(), MNT_DETACH);
}

absl::StatusOr<std::string> RunTool(const std::vector<std::string>& argv) {
  absl::StatusOr<CommandResult> r = RunCommand(argv);
  if (!r.ok()) return r.status();
  if (r->exit_code != 0) {
    return absl::InternalError(
        absl::StrCat(CommandLine(argv), " exited with ", r->exit_code, ": ", r->output));
  }
  return r->output;
}

}  // namespace ccm::csi::testing
