#pragma once
// Real block devices for the node tests: sparse files attached as loop devices, presented in a
// test by-id directory as wwn-0x<disk uuid> links the way udev does for an attached vSphere disk.
//
// Isolation and clean-up, on every exit path:
//  - the test process enters a private mount namespace before main() (EnterPrivateMountNamespace
//    from a static initializer: unshare(CLONE_NEWNS) must run before any thread exists), with /
//    made rprivate, so no mount of ours is ever visible to the host, and all of them vanish with
//    the namespace when the process exits, however it exits;
//  - loop devices are configured with LO_FLAGS_AUTOCLEAR and held by one open fd: the kernel
//    detaches a device when its last user (our fd, a mount) is gone, so even a crash or SIGKILL
//    leaves no loop device behind; the destructor also unmounts what is left and closes the fd.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace ccm::csi::testing {

// unshare(CLONE_NEWNS) + mount --make-rprivate /. Idempotent; the result of the first call.
absl::Status EnterPrivateMountNamespace();

class LoopDevice {
 public:
  // A sparse file of `size_bytes` in `dir`, attached to a free loop device (retried when another
  // process takes the same free device first).
  static absl::StatusOr<std::unique_ptr<LoopDevice>> Create(const std::string& dir,
                                                            uint64_t size_bytes);
  // An existing file (a simulated CNS volume's disk) attached to a free loop device; the file
  // is left in place when the device goes.
  static absl::StatusOr<std::unique_ptr<LoopDevice>> Attach(const std::string& file);
  ~LoopDevice();
  LoopDevice(const LoopDevice&) = delete;
  LoopDevice& operator=(const LoopDevice&) = delete;

  const std::string& path() const { return path_; }  // /dev/loopN
  const std::string& backing_file() const { return file_; }

  // Grows the backing file and tells the loop driver (losetup -c): what vCenter's extend and
  // the guest's rescan do to a real disk.
  absl::Status Grow(uint64_t new_size_bytes);
  // Lets go of the device: with nothing mounted from it, the kernel detaches it (the disk
  // "vanishes" as after a detach in vCenter).
  void Release();

 private:
  LoopDevice() = default;
  std::string file_;
  std::string path_;
  int fd_ = -1;
  bool owns_file_ = false;
};

// Loop devices whose backing file lies under `dir` (from /sys/block/loop*/loop/backing_file),
// and mounts whose mount point or source lies under it (from /proc/self/mountinfo): what the
// suite checks is empty at the end.
std::vector<std::string> LoopDevicesBackedUnder(const std::string& dir);
std::vector<std::string> MountsUnder(const std::string& dir);
// Whether this process has the capability (CAP_SYS_RESOURCE: online ext4 growth) in effect.
bool HasCapability(int cap);
// Unmounts (lazily, deepest first) everything mounted under `dir`.
void UnmountAllUnder(const std::string& dir);

// Runs a tool for a test (mkfs, df); its output, or an error with the output.
absl::StatusOr<std::string> RunTool(const std::vector<std::string>& argv);

}  // namespace ccm::csi::testing
