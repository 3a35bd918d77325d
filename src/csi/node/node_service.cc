#include "csi/node/node_service.h"

#include "absl/strings/str_cat.h"
#include "common/logging.h"
#include "csi/server/grpc_status.h"

namespace ccm::csi::node {
namespace {

// One log line per failed RPC, here where the result leaves the plugin.
grpc::Status Answer(absl::string_view rpc, absl::string_view volume_id, const absl::Status& s) {
  if (!s.ok()) LOG_WARN("{} {}: {}", rpc, volume_id, s.ToString());
  return ToGrpcStatus(s);
}

absl::Status Busy(absl::string_view volume_id) {
  return absl::AbortedError(
      absl::StrCat("an operation on volume ", volume_id, " is already in progress"));
}

}  // namespace

NodeService::NodeService(NodeServiceOptions options)
    : finder_(std::move(options.devices)),
      mounter_(std::move(options.mountinfo_path)),
      info_(std::move(options.info)) {}

NodeService::VolumeLock::VolumeLock(NodeService* s, std::string id) : s_(s), id_(std::move(id)) {
  absl::MutexLock l(&s_->mu_);
  acquired_ = s_->busy_.insert(id_).second;
}

NodeService::VolumeLock::~VolumeLock() {
  if (!acquired_) return;
  absl::MutexLock l(&s_->mu_);
  s_->busy_.erase(id_);
}

grpc::Status NodeService::NodeStageVolume(grpc::ServerContext*,
                                          const ::csi::v1::NodeStageVolumeRequest* req,
                                          ::csi::v1::NodeStageVolumeResponse*) {
  if (req->volume_id().empty()) {
    return Answer("NodeStageVolume", "", absl::InvalidArgumentError("volume_id is required"));
  }
  VolumeLock lock(this, req->volume_id());
  return Answer("NodeStageVolume", req->volume_id(),
                lock.acquired() ? Stage(*req) : Busy(req->volume_id()));
}

grpc::Status NodeService::NodeUnstageVolume(grpc::ServerContext*,
                                            const ::csi::v1::NodeUnstageVolumeRequest* req,
                                            ::csi::v1::NodeUnstageVolumeResponse*) {
  if (req->volume_id().empty()) {
    return Answer("NodeUnstageVolume", "", absl::InvalidArgumentError("volume_id is required"));
  }
  VolumeLock lock(this, req->volume_id());
  return Answer("NodeUnstageVolume", req->volume_id(),
                lock.acquired() ? Unstage(*req) : Busy(req->volume_id()));
}

grpc::Status NodeService::NodePublishVolume(grpc::ServerContext*,
                                            const ::csi::v1::NodePublishVolumeRequest* req,
                                            ::csi::v1::NodePublishVolumeResponse*) {
  if (req->volume_id().empty()) {
    return Answer("NodePublishVolume", "", absl::InvalidArgumentError("volume_id is required"));
  }
  VolumeLock lock(this, req->volume_id());
  return Answer("NodePublishVolume", req->volume_id(),
                lock.acquired() ? Publish(*req) : Busy(req->volume_id()));
}

grpc::Status NodeService::NodeUnpublishVolume(grpc::ServerContext*,
                                              const ::csi::v1::NodeUnpublishVolumeRequest* req,
                                              ::csi::v1::NodeUnpublishVolumeResponse*) {
  if (req->volume_id().empty()) {
    return Answer("NodeUnpublishVolume", "", absl::InvalidArgumentError("volume_id is required"));
  }
  VolumeLock lock(this, req->volume_id());
  return Answer("NodeUnpublishVolume", req->volume_id(),
                lock.acquired() ? Unpublish(*req) : Busy(req->volume_id()));
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
  if (req->volume_id().empty()) {
    return Answer("NodeExpandVolume", "", absl::InvalidArgumentError("volume_id is required"));
  }
  VolumeLock lock(this, req->volume_id());
  return Answer("NodeExpandVolume", req->volume_id(),
                lock.acquired() ? Expand(*req, resp) : Busy(req->volume_id()));
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
