#pragma once
// In-memory stand-ins for the Node service's seams (src/csi/node: mounter.h, device_finder.h,
// filesystem.h), for table tests of the RPCs' decisions without root, loop devices or tools.
// They behave as the kernel and the tools do where the service can tell: a mount needs an
// existing directory, mounts stack, a bind mount of a device node makes the target that device,
// Remove() leaves a non-empty directory, unmounting nothing is FailedPrecondition. Every call is
// recorded ("Mount /dev/sdb /stage ext4 rw"), and any method can be made to fail.
// Not thread-safe: one test thread.

#include <sys/sysmacros.h>

#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "csi/node/device_finder.h"
#include "csi/node/filesystem.h"
#include "csi/node/mounter.h"

namespace ccm::csi::node::testing {

// Injected failures by method name ("Mount", "FindDisk", "Format", ...), and the call log.
class FakeCalls {
 public:
  void Fail(const std::string& method, absl::Status s) { fail_[method] = std::move(s); }
  void Clear(const std::string& method) { fail_.erase(method); }
  const std::vector<std::string>& calls() const { return calls_; }
  // How many calls start with `prefix`.
  int Count(const std::string& prefix) const;

 protected:
  // Records `call` and returns the failure set for `method` (OK when none).
  absl::Status Enter(const std::string& method, const std::string& call);

 private:
  std::map<std::string, absl::Status> fail_;
  std::vector<std::string> calls_;
};

class FakeMounter final : public Mounter, public FakeCalls {
 public:
  FakeMounter();  // "/" exists
  // Test set-up (not recorded).
  void AddDir(const std::string& path);
  void AddFile(const std::string& path);
  void AddDevice(const std::string& path, dev_t rdev);
  // A mount as if made earlier (another process, a restart).
  void AddMount(MountInfo m) { mounts_.push_back(std::move(m)); }
  void SetStatFs(FsStats stats) { statfs_ = stats; }
  bool Exists(const std::string& path) const { return paths_.contains(path); }
  const std::vector<MountInfo>& mounts() const { return mounts_; }

  absl::Status Mount(const std::string& source, const std::string& target,
                     const std::string& fs_type, const std::vector<std::string>& options) override;
  absl::Status BindMount(const std::string& source, const std::string& target,
                         const std::vector<std::string>& options) override;
  absl::Status Unmount(const std::string& target) override;
  absl::StatusOr<std::vector<MountInfo>> Mounts() override;
  std::string Resolve(const std::string& path) override;
  absl::StatusOr<PathStat> Stat(const std::string& path) override;
  absl::Status MakeDir(const std::string& path) override;
  absl::Status MakeFile(const std::string& path) override;
  absl::Status Remove(const std::string& path) override;
  absl::StatusOr<FsStats> StatFs(const std::string& path) override;

 private:
  MountInfo NewMount(const std::string& target, const std::vector<std::string>& options);
  std::map<std::string, PathStat> paths_;
  std::vector<MountInfo> mounts_;
  FsStats statfs_;
  int next_id_ = 100;
};

class FakeDeviceFinder final : public DeviceFinder, public FakeCalls {
 public:
  // An attached disk: FindDisk(uuid) gives /dev/<name> with `rdev`, of `size` bytes.
  void AddDisk(const std::string& uuid, const std::string& path, dev_t rdev, uint64_t size);
  void Detach(const std::string& uuid);  // the disk and its device node are gone
  void SetSize(const std::string& path, uint64_t size) { sizes_[path] = size; }
  // What a Rescan of `path` makes its size (vCenter grew the disk; the guest sees it now).
  void SetSizeAfterRescan(const std::string& path, uint64_t size) { rescanned_[path] = size; }

  absl::StatusOr<BlockDevice> FindDisk(const std::string& disk_uuid) override;
  absl::StatusOr<dev_t> DeviceNumber(const std::string& path) override;
  absl::StatusOr<uint64_t> DeviceSize(const std::string& path) override;
  absl::Status Rescan(const std::string& device_path) override;

 private:
  std::map<std::string, BlockDevice> disks_;  // by uuid
  std::map<std::string, uint64_t> sizes_;     // by device path
  std::map<std::string, uint64_t> rescanned_;
};

class FakeFilesystems final : public Filesystems, public FakeCalls {
 public:
  // What Probe finds on `device` ("" nothing, "ext4", "dos", ...).
  void Set(const std::string& device, const std::string& what) { on_[device] = what; }
  std::string On(const std::string& device) const;

  absl::StatusOr<std::string> Probe(const std::string& device) override;
  absl::Status Format(const std::string& fs_type, const std::string& device) override;
  absl::Status Grow(const std::string& fs_type, const std::string& device,
                    const std::string& mount_point) override;

 private:
  std::map<std::string, std::string> on_;
};

}  // namespace ccm::csi::node::testing
