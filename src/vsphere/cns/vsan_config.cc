#include "vsphere/cns/vsan_config.h"

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "vsphere/soap.h"

namespace ccm::vsphere::cns {

const Moref& VsanClusterConfigSystemRef() {
  static const Moref ref{"VsanVcClusterConfigSystem", "vsan-cluster-config-system"};
  return ref;
}

std::string VsanClusterGetConfigArgs(const Moref& cluster) {
  return absl::StrCat(MorefXml("_this", VsanClusterConfigSystemRef()),
                      MorefXml("cluster", cluster));
}

absl::StatusOr<VsanClusterConfig> ParseVsanClusterConfig(const pugi::xml_node& returnval) {
  if (!returnval) return absl::InternalError("malformed vSAN answer: no VsanConfigInfoEx");
  VsanClusterConfig out;
  const std::string enabled = ChildText(returnval, "enabled");
  if (enabled != "true" && enabled != "false") {
    return absl::InternalError(absl::StrCat("malformed vSAN answer: VsanConfigInfoEx.enabled is \"",
                                            enabled, "\", not a boolean"));
  }
  out.vsan_enabled = enabled == "true";
  if (pugi::xml_node fs = Child(returnval, "fileServiceConfig")) {
    out.file_service_enabled = ChildText(fs, "enabled") == "true";
  }
  return out;
}

absl::StatusOr<VsanClusterConfig> GetVsanClusterConfig(Client& client, const Moref& cluster) {
  const std::string what = absl::StrCat("vSAN configuration of cluster ", cluster.value);
  absl::StatusOr<SoapResponse> r =
      client.Call(kCnsEndpoint, "VsanClusterGetConfig", VsanClusterGetConfigArgs(cluster));
  if (!r.ok()) {
    if (r.status().code() == absl::StatusCode::kUnauthenticated) {
      return absl::UnavailableError(absl::StrCat(what, ": ", r.status().message()));
    }
    return Annotate(r.status(), what);
  }
  absl::StatusOr<VsanClusterConfig> c = ParseVsanClusterConfig(r->returnval());
  if (!c.ok()) return Annotate(c.status(), what);
  return c;
}

}  // namespace ccm::vsphere::cns
