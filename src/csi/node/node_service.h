#pragma once
// The CSI Node service of csi.vsphere.vmware.com for block volumes (CNS First Class Disks
// attached to this node's VM), behaving like the reference's node.go with the spec's error codes:
//
//  NodeStageVolume     finds the disk (<by-id>/wwn-0x<diskUUID>, rescan + bounded wait); mount
//                      volumes: blkid, mkfs only when the device holds nothing (DecideFormat: a
//                      disk with data is never formatted, another filesystem is
//                      FailedPrecondition), mount at the staging path; block volumes: nothing.
//  NodeUnstageVolume   unmounts the staging path (the directory stays: the CO owns it).
//  NodePublishVolume   bind mount staging -> target (a directory we create), read-only when
//                      asked; raw block: bind mount of the device node onto a file we create.
//  NodeUnpublishVolume unmounts the target and removes what we created there.
//  NodeGetVolumeStats  statvfs bytes and inodes; block: the device size; volume_condition
//                      abnormal when the mount is gone or its device vanished.
//  NodeExpandVolume    resize2fs / xfs_growfs online; block volumes: nothing to do.
//  NodeGetInfo         node_info.h.
//
// Idempotency: the same call again answers OK, found out from the mount table (not from memory,
// so it holds across restarts of the plugin); a different volume or options at a path already in
// use is AlreadyExists. Required fields missing: InvalidArgument. A second call on a volume
// while one is in progress: Aborted (the CO retries).
//
// I/O goes through the NodeIo seams, so every branch here is table-tested on fakes
// (node_service_test.cc) and the real implementations once on loop devices.
//
// Thread-safety: every RPC may run on any gRPC thread; per-volume serialisation is internal.

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "csi/core/publish_context.h"
#include "csi/core/types.h"
#include "csi/node/device_finder.h"
#include "csi/node/filesystem.h"
#include "csi/node/mounter.h"
#include "csi/node/node_info.h"
#include "csi/proto/csi.grpc.pb.h"
#include "csi/server/volume_locks.h"

namespace ccm::csi::node {

struct NodeServiceOptions {
  DeviceFinderOptions devices;
  NodeInfoOptions info;
  std::string mountinfo_path = "/proc/self/mountinfo";
};

// The service's I/O (mounter.h, device_finder.h, filesystem.h); a null one is the real one made
// from the options. Tests hand in fakes.
struct NodeIo {
  std::shared_ptr<Mounter> mounter;
  std::shared_ptr<DeviceFinder> devices;
  std::shared_ptr<Filesystems> filesystems;
};

class NodeService final : public ::csi::v1::Node::Service {
 public:
  explicit NodeService(NodeServiceOptions options, NodeIo io = {});

  grpc::Status NodeStageVolume(grpc::ServerContext* ctx,
                               const ::csi::v1::NodeStageVolumeRequest* req,
                               ::csi::v1::NodeStageVolumeResponse* resp) override;
  grpc::Status NodeUnstageVolume(grpc::ServerContext* ctx,
                                 const ::csi::v1::NodeUnstageVolumeRequest* req,
                                 ::csi::v1::NodeUnstageVolumeResponse* resp) override;
  grpc::Status NodePublishVolume(grpc::ServerContext* ctx,
                                 const ::csi::v1::NodePublishVolumeRequest* req,
                                 ::csi::v1::NodePublishVolumeResponse* resp) override;
  grpc::Status NodeUnpublishVolume(grpc::ServerContext* ctx,
                                   const ::csi::v1::NodeUnpublishVolumeRequest* req,
                                   ::csi::v1::NodeUnpublishVolumeResponse* resp) override;
  grpc::Status NodeGetVolumeStats(grpc::ServerContext* ctx,
                                  const ::csi::v1::NodeGetVolumeStatsRequest* req,
                                  ::csi::v1::NodeGetVolumeStatsResponse* resp) override;
  grpc::Status NodeExpandVolume(grpc::ServerContext* ctx,
                                const ::csi::v1::NodeExpandVolumeRequest* req,
                                ::csi::v1::NodeExpandVolumeResponse* resp) override;
  grpc::Status NodeGetCapabilities(grpc::ServerContext* ctx,
                                   const ::csi::v1::NodeGetCapabilitiesRequest* req,
                                   ::csi::v1::NodeGetCapabilitiesResponse* resp) override;
  grpc::Status NodeGetInfo(grpc::ServerContext* ctx, const ::csi::v1::NodeGetInfoRequest* req,
                           ::csi::v1::NodeGetInfoResponse* resp) override;

 private:
  // `op` under the lock of `volume_id` (required), answered and logged as `rpc`.
  grpc::Status Locked(absl::string_view rpc, const std::string& volume_id,
                      const std::function<absl::Status()>& op);
  // The canonical form of a required absolute path (Mounter::Resolve).
  absl::StatusOr<std::string> CanonicalPath(absl::string_view path, absl::string_view field);
  // NodeGetVolumeStats' and NodeExpandVolume's volume_path, canonical; a relative path is
  // NotFound (it names no volume), an empty one InvalidArgument.
  absl::StatusOr<std::string> VolumePath(absl::string_view path);

  absl::Status Stage(const ::csi::v1::NodeStageVolumeRequest& req);
  absl::Status Unstage(const ::csi::v1::NodeUnstageVolumeRequest& req);
  absl::Status Publish(const ::csi::v1::NodePublishVolumeRequest& req);
  // A file volume (node_file.cc): the NFS export of its publish context mounted at `target`.
  absl::Status PublishFile(const std::string& volume, const VolumeCapability& cap,
                           const std::string& target, const StringMap& publish_context,
                           bool readonly_flag);
  absl::Status PublishBlock(const std::string& volume, const std::string& target,
                            const BlockDevice& dev, const std::optional<MountInfo>& at_target);
  absl::Status Unpublish(const ::csi::v1::NodeUnpublishVolumeRequest& req);
  absl::Status Stats(const ::csi::v1::NodeGetVolumeStatsRequest& req,
                     ::csi::v1::NodeGetVolumeStatsResponse* resp);
  absl::Status CheckMountDevice(const MountInfo& m);
  absl::Status Expand(const ::csi::v1::NodeExpandVolumeRequest& req,
                      ::csi::v1::NodeExpandVolumeResponse* resp);
  // Unmounts `path` until nothing is mounted there (mounts can stack), at most 8 times.
  absl::Status UnmountAll(const std::string& path, const std::string& what, bool* unmounted);

  std::shared_ptr<Mounter> mounter_;
  std::shared_ptr<DeviceFinder> devices_;
  std::shared_ptr<Filesystems> filesystems_;
  const NodeInfoSource info_;
  VolumeLocks locks_;
};

}  // namespace ccm::csi::node
