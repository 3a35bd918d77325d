#pragma once
// The CSI Identity service: who the plugin is, what it offers, and whether it is ready.
//
// Capabilities. The reference (pkg/csi/service/identity.go) announces CONTROLLER_SERVICE and
// VOLUME_ACCESSIBILITY_CONSTRAINTS from both of its plugins and no VolumeExpansion capability (it
// offers expansion through the controller's EXPAND_VOLUME capability only; the external-resizer
// looks at that). We announce CONTROLLER_SERVICE only where the Controller service is served,
// so a client of the node socket is not told to call controller RPCs that answer Unimplemented;
// VOLUME_ACCESSIBILITY_CONSTRAINTS as configured (the binary announces it from both plugins, as
// the reference: the spec requires it from any plugin that may return accessible_topology, the
// node plugin's NodeGetInfo included); VolumeExpansion
// types only as configured (none by default, as the reference).
//
// Probe. `ready` answers ready (true), still starting (false), or unhealthy (an error, passed on
// as the gRPC error: the livenessprobe sidecar then fails the container's liveness check).

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "csi/proto/csi.grpc.pb.h"

namespace ccm::csi {

struct IdentityOptions {
  std::string name;            // required; csi.vsphere.vmware.com for this driver
  std::string vendor_version;  // required
  std::map<std::string, std::string> manifest;
  bool controller_service = false;
  bool accessibility_constraints = false;
  std::vector<::csi::v1::PluginCapability::VolumeExpansion::Type> volume_expansion;
  std::function<absl::StatusOr<bool>()> ready;  // null: always ready
};

// The spec's rule for GetPluginInfoResponse.name: at most 63 characters, domain-name notation,
// alphanumerics at both ends, dashes, dots and alphanumerics between.
absl::Status ValidatePluginName(const std::string& name);

class IdentityService final : public ::csi::v1::Identity::Service {
 public:
  // Fails when the name or version breaks the spec's rules: a plugin that cannot answer
  // GetPluginInfo correctly should not start at all.
  static absl::StatusOr<std::unique_ptr<IdentityService>> Create(IdentityOptions options);

  grpc::Status GetPluginInfo(grpc::ServerContext* ctx, const ::csi::v1::GetPluginInfoRequest* req,
                             ::csi::v1::GetPluginInfoResponse* resp) override;
  grpc::Status GetPluginCapabilities(grpc::ServerContext* ctx,
                                     const ::csi::v1::GetPluginCapabilitiesRequest* req,
                                     ::csi::v1::GetPluginCapabilitiesResponse* resp) override;
  grpc::Status Probe(grpc::ServerContext* ctx, const ::csi::v1::ProbeRequest* req,
                     ::csi::v1::ProbeResponse* resp) override;

 private:
  explicit IdentityService(IdentityOptions options) : options_(std::move(options)) {}
  const IdentityOptions options_;
};

}  // namespace ccm::csi
