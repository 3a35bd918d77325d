#include "csi/server/identity_service.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "common/logging.h"
#include "csi/server/grpc_status.h"

namespace ccm::csi {

using ::csi::v1::PluginCapability;

absl::Status ValidatePluginName(const std::string& name) {
  auto bad = [&](absl::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat("CSI plugin name \"", name, "\" ", why));
  };
  if (name.empty()) return bad("is empty");
  if (name.size() > 63) return bad("is longer than 63 characters");
  if (!absl::ascii_isalnum(name.front()) || !absl::ascii_isalnum(name.back())) {
    return bad("must begin and end with a letter or digit");
  }
  for (char c : name) {
    if (!absl::ascii_isalnum(c) && c != '-' && c != '.') {
      return bad("may only contain letters, digits, '-' and '.'");
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<IdentityService>> IdentityService::Create(IdentityOptions options) {
  if (absl::Status s = ValidatePluginName(options.name); !s.ok()) return s;
  if (options.vendor_version.empty()) {
    return absl::InvalidArgumentError("CSI plugin vendor_version is empty");
  }
  return std::unique_ptr<IdentityService>(new IdentityService(std::move(options)));
}

grpc::Status IdentityService::GetPluginInfo(grpc::ServerContext*,
                                            const ::csi::v1::GetPluginInfoRequest*,
                                            ::csi::v1::GetPluginInfoResponse* resp) {
  resp->set_name(options_.name);
  resp->set_vendor_version(options_.vendor_version);
  resp->mutable_manifest()->insert(options_.manifest.begin(), options_.manifest.end());
  return grpc::Status::OK;
}

grpc::Status IdentityService::GetPluginCapabilities(
    grpc::ServerContext*, const ::csi::v1::GetPluginCapabilitiesRequest*,
    ::csi::v1::GetPluginCapabilitiesResponse* resp) {
  auto add_service = [&](PluginCapability::Service::Type t) {
    resp->add_capabilities()->mutable_service()->set_type(t);
  };
  if (options_.controller_service) add_service(PluginCapability::Service::CONTROLLER_SERVICE);
  if (options_.accessibility_constraints) {
    add_service(PluginCapability::Service::VOLUME_ACCESSIBILITY_CONSTRAINTS);
  }
  for (auto t : options_.volume_expansion) {
    resp->add_capabilities()->mutable_volume_expansion()->set_type(t);
  }
  return grpc::Status::OK;
}

grpc::Status IdentityService::Probe(grpc::ServerContext*, const ::csi::v1::ProbeRequest*,
                                    ::csi::v1::ProbeResponse* resp) {
  bool ready = true;
  if (options_.ready) {
    absl::StatusOr<bool> r = options_.ready();
    if (!r.ok()) {
      // Logged by the interceptor at -v 4; the livenessprobe sidecar logs it too.
      return ToGrpcStatus(r.status());
    }
    ready = *r;
  }
  // Always set (never left unset): unset means "ready" to the CO, and an explicit value makes
  // the answer unambiguous in logs and tests.
  resp->mutable_ready()->set_value(ready);
  return grpc::Status::OK;
}

}  // namespace ccm::csi
