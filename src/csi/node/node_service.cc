#include "csi/node/node_service.h"

#include "absl/strings/str_cat.h"
#include "common/logging.h"
#include "csi/node/node_util.h"
#include "csi/server/grpc_status.h"

namespace ccm::csi::node {
namespace {

// One log line per failed RPC, here where the result leaves the plugin.
grpc::Status Answer(absl::string_view rpc, absl::string_view volume_id, const absl::Status& s) {
  if (!s.ok()) LOG_WARN("{} {}: {}", rpc, volume_id, s.ToString());
  return ToGrpcStatus(s);
}

}  // namespace

NodeService::NodeService(NodeServiceOptions options, NodeIo io)
    : mounter_(io.mounter ? std::move(io.mounter)
                          : std::make_shared<SystemMounter>(std::move(options.mountinfo_path))),
      devices_(io.devices ? std::move(io.devices)
                          : std::make_shared<SysfsDeviceFinder>(std::move(options.devices))),
      filesystems_(io.filesystems ? std::move(io.filesystems)
                                  : std::make_shared<ToolFilesystems>()),
      info_(std::move(options.info)) {}

grpc::Status NodeService::Locked(absl::string_view rpc, const std::string& volume_id,
                                 const std::function<absl::Status()>& op) {
  if (volume_id.empty())
    return Answer(rpc, "", absl::InvalidArgumentError("volume_id is required"));
  absl::StatusOr<VolumeLocks::Guard> lock = locks_.TryLock(volume_id);
  return Answer(rpc, volume_id, lock.ok() ? op() : lock.status());
}

absl::StatusOr<std::string> NodeService::CanonicalPath(absl::string_view path,
                                                       absl::string_view field) {
  if (absl::Status s = Require(path, field); !s.ok()) return s;
  if (path.front() != '/') {
    return absl::InvalidArgumentError(absl::StrCat(field, " ", path, " is not an absolute path"));
  }
  return mounter_->Resolve(std::string(path));
}

absl::StatusOr<std::string> NodeService::VolumePath(absl::string_view path) {
  if (absl::Status s = Require(path, "volume_path"); !s.ok()) return s;
  // The kubelet names a volume by its absolute path: a relative one names nothing here (the
  // spec's NOT_FOUND for NodeGetVolumeStats and NodeExpandVolume, as csi-sanity checks).
  if (path.front() != '/') {
    return absl::NotFoundError(
        absl::StrCat("volume_path ", path, " does not exist (not an absolute path)"));
  }
  return mounter_->Resolve(std::string(path));
}

grpc::Status NodeService::NodeStageVolume(grpc::ServerContext*,
                                          const ::csi::v1::NodeStageVolumeRequest* req,
                                          ::csi::v1::NodeStageVolumeResponse*) {
  return Locked("NodeStageVolume", req->volume_id(), [&] { return Stage(*req); });
}

grpc::Status NodeService::NodeUnstageVolume(grpc::ServerContext*,
                                            const ::csi::v1::NodeUnstageVolumeRequest* req,
                                            ::csi::v1::NodeUnstageVolumeResponse*) {
  return Locked("NodeUnstageVolume", req->volume_id(), [&] { return Unstage(*req); });
}

grpc::Status NodeService::NodePublishVolume(grpc::ServerContext*,
                                            const ::csi::v1::NodePublishVolumeRequest* req,
                                            ::csi::v1::NodePublishVolumeResponse*) {
  return Locked("NodePublishVolume", req->volume_id(), [&] { return Publish(*req); });
}

grpc::Status NodeService::NodeUnpublishVolume(grpc::ServerContext*,
                                              const ::csi::v1::NodeUnpublishVolumeRequest* req,
                                              ::csi::v1::NodeUnpublishVolumeResponse*) {
  return Locked("NodeUnpublishVolume", req->volume_id(), [&] { return Unpublish(*req); });
}

grpc::Status NodeService::NodeGetVolumeStats(grpc::ServerContext*,
                                             const ::csi::v1::NodeGetVolumeStatsRequest* req,
                                             ::csi::v1::NodeGetVolumeStatsResponse* resp) {
  // No volume lock: the kubelet asks for stats of every volume every minute, and a read must
  // not turn a concurrent stage or publish into Aborted (nor wait behind a long mkfs).
  return Answer("NodeGetVolumeStats", req->volume_id(), Stats(*req, resp));
}

grpc::Status NodeService::NodeExpandVolume(grpc::ServerContext*,
                                           const ::csi::v1::NodeExpandVolumeRequest* req,
                                           ::csi::v1::NodeExpandVolumeResponse* resp) {
  return Locked("NodeExpandVolume", req->volume_id(), [&] { return Expand(*req, resp); });
}

grpc::Status NodeService::NodeGetCapabilities(grpc::ServerContext*,
                                              const ::csi::v1::NodeGetCapabilitiesRequest*,
                                              ::csi::v1::NodeGetCapabilitiesResponse* resp) {
  // The reference's three, plus VOLUME_CONDITION: NodeGetVolumeStats fills volume_condition,
  // and the spec lets a plugin do so only when it announces the capability.
  using Rpc = ::csi::v1::NodeServiceCapability::RPC;
  for (Rpc::Type t : {Rpc::STAGE_UNSTAGE_VOLUME, Rpc::EXPAND_VOLUME, Rpc::GET_VOLUME_STATS,
                      Rpc::VOLUME_CONDITION}) {
    resp->add_capabilities()->mutable_rpc()->set_type(t);
  }
  return grpc::Status::OK;
}

grpc::Status NodeService::NodeGetInfo(grpc::ServerContext*, const ::csi::v1::NodeGetInfoRequest*,
                                      ::csi::v1::NodeGetInfoResponse* resp) {
  absl::StatusOr<NodeInfo> info = info_.Get();
  if (!info.ok()) return Answer("NodeGetInfo", "", info.status());
  resp->set_node_id(info->node_id);
  resp->set_max_volumes_per_node(info->max_volumes_per_node);
  if (!info->topology.empty()) {
    auto* segments = resp->mutable_accessible_topology()->mutable_segments();
    for (const auto& [k, v] : info->topology) (*segments)[k] = v;
  }
  return grpc::Status::OK;
}

}  // namespace ccm::csi::node
