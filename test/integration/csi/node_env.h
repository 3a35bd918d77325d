#pragma once
// The Node service over the real gRPC unix socket, on real loop devices in this process's private
// mount namespace: a CsiServer with Identity + Node, a by-id directory of the test's own, and
// helpers that make a disk (a loop device linked as wwn-0x<uuid>) and the common requests.
// Everything the environment made is undone by its destructor (mounts, loop devices, files).

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "csi/node/node_service.h"
#include "csi/proto/csi.grpc.pb.h"
#include "csi/server/csi_server.h"
#include "integration/csi/loop_device.h"

namespace ccm::csi::testing {

inline constexpr uint64_t kMiB = 1024 * 1024;
// xfs refuses filesystems under 300 MB; the files are sparse, so this costs nothing.
inline constexpr uint64_t kDiskSize = 512 * kMiB;

// "/tmp/csi-node-<pid>-": every directory, file and loop device of this process's tests is
// under it, so the leak check cannot confuse them with another process's.
std::string TestDirPrefix();

struct Disk {
  std::string uuid;  // 32 hex digits, as the controller's publish context carries it
  std::unique_ptr<LoopDevice> loop;
};

class NodeEnv {
 public:
  // `wait`: how long the node waits for a missing disk link. `info`: NodeGetInfo's sources.
  static absl::StatusOr<std::unique_ptr<NodeEnv>> Start(absl::Duration wait = absl::Seconds(20),
                                                        node::NodeInfoOptions info = {});
  ~NodeEnv();

  ::csi::v1::Node::Stub& node() { return *stub_; }
  const std::string& dir() const { return dir_; }
  const std::string& by_id_dir() const { return by_id_; }

  // A fresh loop device of `size` with a random disk UUID, linked under the by-id directory.
  absl::StatusOr<Disk> NewDisk(uint64_t size = kDiskSize);
  // A disk UUID and a loop device, not linked yet (the disk is "being attached").
  absl::StatusOr<Disk> NewUnlinkedDisk(uint64_t size = kDiskSize);
  absl::Status Link(const std::string& uuid, const std::string& device);

  // A staging directory (created, as the kubelet does) and a target path (not created: the
  // plugin makes it) with unique names.
  std::string NewStagingDir();
  std::string NewTargetPath();

  static std::string NewDiskUuid();

 private:
  NodeEnv() = default;
  std::string dir_;
  std::string by_id_;
  int counter_ = 0;
  std::unique_ptr<CsiServer> server_;
  std::unique_ptr<::csi::v1::Node::Stub> stub_;
};

// Requests with the common fields set.
::csi::v1::VolumeCapability NodeMountCap(
    const std::string& fs = "ext4",
    ::csi::v1::VolumeCapability::AccessMode::Mode mode =
        ::csi::v1::VolumeCapability::AccessMode::SINGLE_NODE_WRITER,
    const std::vector<std::string>& flags = {});
::csi::v1::VolumeCapability NodeBlockCap();
::csi::v1::NodeStageVolumeRequest StageReq(const std::string& volume, const std::string& uuid,
                                           const std::string& staging,
                                           const ::csi::v1::VolumeCapability& cap);
::csi::v1::NodePublishVolumeRequest PublishReq(const std::string& volume, const std::string& uuid,
                                               const std::string& staging,
                                               const std::string& target,
                                               const ::csi::v1::VolumeCapability& cap,
                                               bool readonly = false);
::csi::v1::NodeUnpublishVolumeRequest UnpublishReq(const std::string& volume,
                                                   const std::string& target);
::csi::v1::NodeUnstageVolumeRequest UnstageReq(const std::string& volume,
                                               const std::string& staging);

// Small file helpers: write `text` to `path` (fsync'd), read it back; errno-carrying errors.
absl::Status WriteFile(const std::string& path, const std::string& text);
absl::StatusOr<std::string> ReadFile(const std::string& path);

}  // namespace ccm::csi::testing
