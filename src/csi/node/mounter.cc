#include "csi/node/mounter.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "csi/node/mount_options.h"

namespace ccm::csi::node {
namespace fs = std::filesystem;
namespace {

absl::Status ErrnoError(int err, const std::string& what) {
  if (err == EINVAL) {
    // mount(2) and umount2(2) say EINVAL for "not a mount point", bad options and a missing
    // superblock alike; FailedPrecondition keeps it apart from our own argument checks.
    absl::Status s = absl::ErrnoToStatus(err, what);
    return absl::FailedPreconditionError(s.message());
  }
  return absl::ErrnoToStatus(err, what);
}

}  // namespace

absl::StatusOr<std::optional<MountInfo>> Mounter::MountAt(const std::string& path) {
  absl::StatusOr<std::vector<MountInfo>> mounts = Mounts();
  if (!mounts.ok()) return mounts.status();
  return FindMountAt(*mounts, path);
}

// The first address getaddrinfo(3) gives for `host` (mount.nfs does the same).
static absl::StatusOr<std::string> ResolveHost(const std::string& host) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  if (int rc = getaddrinfo(host.c_str(), nullptr, &hints, &res); rc != 0) {
    return absl::UnavailableError(
        absl::StrCat("resolve NFS server ", host, ": ", gai_strerror(rc)));
  }
  char buf[INET6_ADDRSTRLEN] = {0};
  const void* a =
      res->ai_family == AF_INET
          ? static_cast<const void*>(&reinterpret_cast<sockaddr_in*>(res->ai_addr)->sin_addr)
          : static_cast<const void*>(&reinterpret_cast<sockaddr_in6*>(res->ai_addr)->sin6_addr);
  inet_ntop(res->ai_family, a, buf, sizeof(buf));
  freeaddrinfo(res);
  return std::string(buf);
}

absl::Status SystemMounter::Mount(const std::string& source, const std::string& target,
                                  const std::string& fs_type,
                                  const std::vector<std::string>& options) {
  MountFlags f = ParseMountOptions(options);
  if (IsNfsType(fs_type)) {
    absl::StatusOr<std::string> data = NfsMountData(source, f.data, ResolveHost);
    if (!data.ok()) return data.status();
    f.data = *data;
  }
  if (mount(source.c_str(), target.c_str(), fs_type.c_str(), f.flags,
            f.data.empty() ? nullptr : f.data.c_str()) != 0) {
    const int err = errno;
    absl::Status s = ErrnoError(err, absl::StrCat("mount ", source, " at ", target, " (", fs_type,
                                                  ", data \"", f.data, "\")"));
    if (err == ENODEV && IsNfsType(fs_type)) {  // no "nfs4" filesystem in this kernel
      return absl::Status(s.code(), absl::StrCat(s.message(),
                                                 ": this node's kernel has no NFS client (the "
                                                 "nfs / nfsv4 modules); file volumes need it"));
    }
    return s;
  }
  return absl::OkStatus();
}

absl::Status SystemMounter::BindMount(const std::string& source, const std::string& target,
                                      const std::vector<std::string>& options) {
  MountFlags f = ParseMountOptions(options);
  if (mount(source.c_str(), target.c_str(), nullptr, MS_BIND, nullptr) != 0) {
    return ErrnoError(errno, absl::StrCat("bind mount ", source, " at ", target));
  }
  // The kernel ignores per-mount flags on the bind itself: a remount applies them.
  unsigned long per_mount = PerMountFlags(f.flags);
  if (per_mount == 0) return absl::OkStatus();
  if (mount(nullptr, target.c_str(), nullptr, MS_BIND | MS_REMOUNT | per_mount, nullptr) != 0) {
    int err = errno;
    umount2(target.c_str(), MNT_DETACH);
    return ErrnoError(err, absl::StrCat("remount bind mount ", target, " with \"",
                                        absl::StrJoin(options, ","), "\""));
  }
  return absl::OkStatus();
}

absl::Status SystemMounter::Unmount(const std::string& target) {
  if (umount2(target.c_str(), 0) != 0) {
    return ErrnoError(errno, absl::StrCat("unmount ", target));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<MountInfo>> SystemMounter::Mounts() {
  std::ifstream in(mountinfo_path_);
  if (!in) return ErrnoError(errno, absl::StrCat("read ", mountinfo_path_));
  std::stringstream text;
  text << in.rdbuf();
  return ParseMountInfo(text.str());
}

std::string SystemMounter::Resolve(const std::string& path) {
  std::error_code ec;
  fs::path c = fs::weakly_canonical(fs::path(path), ec);
  if (ec) c = fs::path(path).lexically_normal();
  std::string s = c.string();
  while (s.size() > 1 && s.back() == '/') s.pop_back();
  return s;
}

absl::StatusOr<PathStat> SystemMounter::Stat(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return PathStat{};
    return absl::ErrnoToStatus(errno, absl::StrCat("stat ", path));
  }
  PathStat out;
  out.kind = S_ISDIR(st.st_mode)   ? PathKind::kDirectory
             : S_ISBLK(st.st_mode) ? PathKind::kBlockDevice
                                   : PathKind::kOther;
  out.rdev = st.st_rdev;
  return out;
}

absl::Status SystemMounter::MakeDir(const std::string& path) {
  std::error_code ec;
  fs::create_directories(path, ec);
  if (ec) return absl::InternalError(absl::StrCat("create directory ", path, ": ", ec.message()));
  return absl::OkStatus();
}

absl::Status SystemMounter::MakeFile(const std::string& path) {
  if (absl::Status s = MakeDir(fs::path(path).parent_path().string()); !s.ok()) return s;
  int fd = open(path.c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0640);
  if (fd < 0) return absl::ErrnoToStatus(errno, absl::StrCat("create ", path));
  close(fd);
  return absl::OkStatus();
}

absl::Status SystemMounter::Remove(const std::string& path) {
  std::error_code ec;
  if (!fs::remove(path, ec) && ec) {
    return absl::FailedPreconditionError(absl::StrCat("remove ", path, ": ", ec.message()));
  }
  return absl::OkStatus();
}

absl::StatusOr<FsStats> SystemMounter::StatFs(const std::string& path) {
  struct statvfs vfs;
  if (statvfs(path.c_str(), &vfs) != 0) {
    return absl::ErrnoToStatus(errno, absl::StrCat("statvfs ", path));
  }
  return FsStats{vfs.f_frsize, vfs.f_blocks, vfs.f_bfree, vfs.f_bavail, vfs.f_files, vfs.f_ffree};
}

}  // namespace ccm::csi::node
