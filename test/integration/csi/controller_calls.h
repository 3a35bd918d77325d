#pragma once
// One call per Controller RPC on a test's socket (a stub from ControllerEnv::controller()), shared
// by ControllerFixture (one environment per suite) and the suites that start one per test.

#include <cstdint>
#include <string>

#include "csi/proto/csi.grpc.pb.h"
#include "integration/csi/controller_env.h"

namespace ccm::csi::testing {

inline constexpr int64_t kGiB = int64_t{1024} * 1024 * 1024;
using ControllerStub = ::csi::v1::Controller::Stub;

inline grpc::Status CallCreate(ControllerStub& c, const ::csi::v1::CreateVolumeRequest& req,
                               ::csi::v1::CreateVolumeResponse* resp = nullptr) {
  grpc::ClientContext ctx;
  ::csi::v1::CreateVolumeResponse ignored;
  return c.CreateVolume(&ctx, req, resp != nullptr ? resp : &ignored);
}

inline grpc::Status CallDelete(ControllerStub& c, const std::string& id) {
  grpc::ClientContext ctx;
  ::csi::v1::DeleteVolumeRequest req;
  req.set_volume_id(id);
  ::csi::v1::DeleteVolumeResponse resp;
  return c.DeleteVolume(&ctx, req, &resp);
}

// A publish request for a mount volume.
inline ::csi::v1::ControllerPublishVolumeRequest PubReq(const std::string& id,
                                                        const std::string& node) {
  ::csi::v1::ControllerPublishVolumeRequest req;
  req.set_volume_id(id);
  req.set_node_id(node);
  *req.mutable_volume_capability() = MountCap();
  return req;
}

inline grpc::Status CallPublish(ControllerStub& c,
                                const ::csi::v1::ControllerPublishVolumeRequest& req,
                                ::csi::v1::ControllerPublishVolumeResponse* resp = nullptr) {
  grpc::ClientContext ctx;
  ::csi::v1::ControllerPublishVolumeResponse ignored;
  return c.ControllerPublishVolume(&ctx, req, resp != nullptr ? resp : &ignored);
}

inline grpc::Status CallUnpublish(ControllerStub& c, const std::string& id,
                                  const std::string& node) {
  grpc::ClientContext ctx;
  ::csi::v1::ControllerUnpublishVolumeRequest req;
  req.set_volume_id(id);
  req.set_node_id(node);
  ::csi::v1::ControllerUnpublishVolumeResponse resp;
  return c.ControllerUnpublishVolume(&ctx, req, &resp);
}

inline grpc::Status CallList(ControllerStub& c, const std::string& token, int32_t max,
                             ::csi::v1::ListVolumesResponse* resp) {
  grpc::ClientContext ctx;
  ::csi::v1::ListVolumesRequest req;
  req.set_starting_token(token);
  req.set_max_entries(max);
  return c.ListVolumes(&ctx, req, resp);
}

}  // namespace ccm::csi::testing
