#include "csi/node/mounter.h"

#include <sys/mount.h>

#include <cerrno>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "csi/node/mount_options.h"

namespace ccm::csi::node {
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

absl::Status Mounter::Mount(const std::string& source, const std::string& target,
                            const std::string& fs_type,
                            const std::vector<std::string>& options) const {
  MountFlags f = ParseMountOptions(options);
  if (mount(source.c_str(), target.c_str(), fs_type.c_str(), f.flags,
            f.data.empty() ? nullptr : f.data.c_str()) != 0) {
    return ErrnoError(errno, absl::StrCat("mount ", source, " at ", target, " (", fs_type,
                                          ", options \"", absl::StrJoin(options, ","), "\")"));
  }
  return absl::OkStatus();
}

absl::Status Mounter::BindMount(const std::string& source, const std::string& target,
                                const std::vector<std::string>& options) const {
  MountFlags f = ParseMountOptions(options);
  if (mount(source.c_str(), target.c_str(), nullptr, MS_BIND, nullptr) != 0) {
    return ErrnoError(errno, absl::StrCat("bind mount ", source, " at ", target));
  }
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

absl::Status Mounter::Unmount(const std::string& target) const {
  if (umount2(target.c_str(), 0) != 0) {
    return ErrnoError(errno, absl::StrCat("unmount ", target));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<MountInfo>> Mounter::Mounts() const {
  std::ifstream in(mountinfo_path_);
  if (!in) return ErrnoError(errno, absl::StrCat("read ", mountinfo_path_));
  std::stringstream text;
  text << in.rdbuf();
  return ParseMountInfo(text.str());
}

absl::StatusOr<std::optional<MountInfo>> Mounter::MountAt(const std::string& path) const {
  absl::StatusOr<std::vector<MountInfo>> mounts = Mounts();
  if (!mounts.ok()) return mounts.status();
  return FindMountAt(*mounts, path);
}

}  // namespace ccm::csi::node
