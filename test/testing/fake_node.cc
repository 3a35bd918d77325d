#include "testing/fake_node.h"

#include <filesystem>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace ccm::csi::node::testing {
namespace {

std::string Parent(const std::string& path) {
  std::string p = std::filesystem::path(path).parent_path().string();
  return p.empty() ? "/" : p;
}

bool ReadOnly(const std::vector<std::string>& options) {
  for (const std::string& o : options) {
    if (o == "ro") return true;
  }
  return false;
}

}  // namespace

int FakeCalls::Count(const std::string& prefix) const {
  int n = 0;
  for (const std::string& c : calls_) n += absl::StartsWith(c, prefix) ? 1 : 0;
  return n;
}

absl::Status FakeCalls::Enter(const std::string& method, const std::string& call) {
  calls_.push_back(call);
  auto it = fail_.find(method);
  return it == fail_.end() ? absl::OkStatus() : it->second;
}

FakeMounter::FakeMounter() { paths_["/"] = {PathKind::kDirectory, 0}; }

void FakeMounter::AddDir(const std::string& path) {
  for (std::string p = path; !paths_.contains(p); p = Parent(p)) {
    paths_[p] = {PathKind::kDirectory, 0};
  }
}

void FakeMounter::AddFile(const std::string& path) {
  AddDir(Parent(path));
  paths_[path] = {PathKind::kOther, 0};
}

void FakeMounter::AddDevice(const std::string& path, dev_t rdev) {
  AddDir(Parent(path));
  paths_[path] = {PathKind::kBlockDevice, rdev};
}

MountInfo FakeMounter::NewMount(const std::string& target,
                                const std::vector<std::string>& options) {
  MountInfo m;
  m.id = next_id_++;
  m.mount_point = target;
  m.options = ReadOnly(options) ? "ro,relatime" : "rw,relatime";
  m.root = "/";
  return m;
}

absl::Status FakeMounter::Mount(const std::string& source, const std::string& target,
                                const std::string& fs_type,
                                const std::vector<std::string>& options) {
  if (absl::Status s = Enter("Mount", absl::StrCat("Mount ", source, " ", target, " ", fs_type, " ",
                                                   absl::StrJoin(options, ",")));
      !s.ok()) {
    return s;
  }
  auto t = paths_.find(target);
  if (t == paths_.end() || t->second.kind != PathKind::kDirectory) {
    return absl::NotFoundError(absl::StrCat("mount ", source, " at ", target, ": no directory"));
  }
  MountInfo m = NewMount(target, options);
  if (fs_type == "nfs" || fs_type == "nfs4") {  // an export: an anonymous device, as the kernel
    m.major = 0;
    m.minor = static_cast<uint32_t>(next_id_);
  } else {
    auto dev = paths_.find(source);
    if (dev == paths_.end() || dev->second.kind != PathKind::kBlockDevice) {
      return absl::NotFoundError(absl::StrCat("mount ", source, ": no such device"));
    }
    m.major = major(dev->second.rdev);
    m.minor = minor(dev->second.rdev);
  }
  m.fs_type = fs_type;
  m.source = source;
  mounts_.push_back(m);
  return absl::OkStatus();
}

absl::Status FakeMounter::BindMount(const std::string& source, const std::string& target,
                                    const std::vector<std::string>& options) {
  if (absl::Status s = Enter("BindMount", absl::StrCat("BindMount ", source, " ", target, " ",
                                                       absl::StrJoin(options, ",")));
      !s.ok()) {
    return s;
  }
  auto src = paths_.find(source);
  if (src == paths_.end() || !paths_.contains(target)) {
    return absl::NotFoundError(absl::StrCat("bind mount ", source, " at ", target, ": missing"));
  }
  MountInfo m = NewMount(target, options);
  if (src->second.kind == PathKind::kBlockDevice) {
    // As the kernel shows it: a file of devtmpfs; the target is now that device node.
    m.major = 0;
    m.minor = 5;
    m.root = "/" + std::filesystem::path(source).filename().string();
    m.fs_type = "devtmpfs";
    m.source = "udev";
    paths_[target] = src->second;
  } else if (std::optional<MountInfo> under = FindMountAt(mounts_, source)) {
    m.major = under->major;
    m.minor = under->minor;
    m.root = under->root;
    m.fs_type = under->fs_type;
    m.source = under->source;
  } else {
    m.root = source;
    m.fs_type = "ext4";
    m.source = "/dev/root";
  }
  mounts_.push_back(m);
  return absl::OkStatus();
}

absl::Status FakeMounter::Unmount(const std::string& target) {
  if (absl::Status s = Enter("Unmount", absl::StrCat("Unmount ", target)); !s.ok()) return s;
  for (auto it = mounts_.rbegin(); it != mounts_.rend(); ++it) {
    if (it->mount_point != target) continue;
    if (it->fs_type == "devtmpfs") paths_[target] = {PathKind::kOther, 0};  // the file again
    mounts_.erase(std::next(it).base());
    return absl::OkStatus();
  }
  return absl::FailedPreconditionError(absl::StrCat("unmount ", target, ": not mounted"));
}

absl::StatusOr<std::vector<MountInfo>> FakeMounter::Mounts() {
  if (absl::Status s = Enter("Mounts", "Mounts"); !s.ok()) return s;
  return mounts_;
}

std::string FakeMounter::Resolve(const std::string& path) {
  std::string s = std::filesystem::path(path).lexically_normal().string();
  while (s.size() > 1 && s.back() == '/') s.pop_back();
  return s;
}

absl::StatusOr<PathStat> FakeMounter::Stat(const std::string& path) {
  if (absl::Status s = Enter("Stat", absl::StrCat("Stat ", path)); !s.ok()) return s;
  auto it = paths_.find(path);
  return it == paths_.end() ? PathStat{} : it->second;
}

absl::Status FakeMounter::MakeDir(const std::string& path) {
  if (absl::Status s = Enter("MakeDir", absl::StrCat("MakeDir ", path)); !s.ok()) return s;
  for (std::string p = path;; p = Parent(p)) {
    auto it = paths_.find(p);
    if (it != paths_.end() && it->second.kind != PathKind::kDirectory) {
      return absl::InternalError(absl::StrCat("create directory ", path, ": ", p, " is a file"));
    }
    if (p == "/") break;
  }
  AddDir(path);
  return absl::OkStatus();
}

absl::Status FakeMounter::MakeFile(const std::string& path) {
  if (absl::Status s = Enter("MakeFile", absl::StrCat("MakeFile ", path)); !s.ok()) return s;
  auto it = paths_.find(path);
  if (it != paths_.end() && it->second.kind == PathKind::kDirectory) {
    return absl::FailedPreconditionError(absl::StrCat("create ", path, ": Is a directory"));
  }
  if (it == paths_.end()) AddFile(path);
  return absl::OkStatus();
}

absl::Status FakeMounter::Remove(const std::string& path) {
  if (absl::Status s = Enter("Remove", absl::StrCat("Remove ", path)); !s.ok()) return s;
  if (!paths_.contains(path)) return absl::OkStatus();
  if (FindMountAt(mounts_, path)) {
    return absl::FailedPreconditionError(absl::StrCat("remove ", path, ": busy"));
  }
  auto next = paths_.upper_bound(path);
  if (next != paths_.end() && absl::StartsWith(next->first, path + "/")) {
    return absl::FailedPreconditionError(absl::StrCat("remove ", path, ": Directory not empty"));
  }
  paths_.erase(path);
  return absl::OkStatus();
}

absl::StatusOr<FsStats> FakeMounter::StatFs(const std::string& path) {
  if (absl::Status s = Enter("StatFs", absl::StrCat("StatFs ", path)); !s.ok()) return s;
  return statfs_;
}

void FakeDeviceFinder::AddDisk(const std::string& uuid, const std::string& path, dev_t rdev,
                               uint64_t size) {
  disks_[uuid] = BlockDevice{"/dev/disk/by-id/wwn-0x" + uuid, path, rdev};
  sizes_[path] = size;
}

void FakeDeviceFinder::Detach(const std::string& uuid) {
  auto it = disks_.find(uuid);
  if (it == disks_.end()) return;
  sizes_.erase(it->second.path);
  disks_.erase(it);
}

absl::StatusOr<BlockDevice> FakeDeviceFinder::FindDisk(const std::string& disk_uuid) {
  if (absl::Status s = Enter("FindDisk", absl::StrCat("FindDisk ", disk_uuid)); !s.ok()) return s;
  auto it = disks_.find(disk_uuid);
  if (it == disks_.end()) {
    return absl::NotFoundError(absl::StrCat("disk ", disk_uuid, " is not attached to this node"));
  }
  return it->second;
}

absl::StatusOr<dev_t> FakeDeviceFinder::DeviceNumber(const std::string& path) {
  if (absl::Status s = Enter("DeviceNumber", absl::StrCat("DeviceNumber ", path)); !s.ok()) {
    return s;
  }
  for (const auto& [uuid, d] : disks_) {
    if (d.path == path) return d.rdev;
  }
  return absl::NotFoundError(absl::StrCat("stat ", path, ": No such file or directory"));
}

absl::StatusOr<uint64_t> FakeDeviceFinder::DeviceSize(const std::string& path) {
  if (absl::Status s = Enter("DeviceSize", absl::StrCat("DeviceSize ", path)); !s.ok()) return s;
  auto it = sizes_.find(path);
  if (it == sizes_.end()) return absl::NotFoundError(absl::StrCat("open ", path));
  return it->second;
}

absl::Status FakeDeviceFinder::Rescan(const std::string& device_path) {
  if (absl::Status s = Enter("Rescan", absl::StrCat("Rescan ", device_path)); !s.ok()) return s;
  if (auto it = rescanned_.find(device_path); it != rescanned_.end()) {
    sizes_[device_path] = it->second;
  }
  return absl::OkStatus();
}

std::string FakeFilesystems::On(const std::string& device) const {
  auto it = on_.find(device);
  return it == on_.end() ? "" : it->second;
}

absl::StatusOr<std::string> FakeFilesystems::Probe(const std::string& device) {
  if (absl::Status s = Enter("Probe", absl::StrCat("Probe ", device)); !s.ok()) return s;
  return On(device);
}

absl::Status FakeFilesystems::Format(const std::string& fs_type, const std::string& device) {
  if (absl::Status s = Enter("Format", absl::StrCat("Format ", fs_type, " ", device)); !s.ok()) {
    return s;
  }
  on_[device] = fs_type;
  return absl::OkStatus();
}

absl::Status FakeFilesystems::Grow(const std::string& fs_type, const std::string& device,
                                   const std::string& mount_point) {
  return Enter("Grow", absl::StrCat("Grow ", fs_type, " ", device, " ", mount_point));
}

}  // namespace ccm::csi::node::testing
