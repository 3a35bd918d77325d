#include "csi/core/cluster_id.h"

#include "absl/strings/str_cat.h"

namespace ccm::csi {

absl::StatusOr<ClusterIdDecision> DecideClusterId(absl::string_view configured,
                                                  const std::optional<std::string>& from_configmap,
                                                  absl::string_view generated,
                                                  absl::string_view where) {
  if (from_configmap && from_configmap->empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat("ConfigMap ", where, " has no ", kClusterIdKey, " value"));
  }
  if (!configured.empty() && from_configmap && *from_configmap != configured) {
    return absl::FailedPreconditionError(absl::StrCat(
        "csi-vsphere.conf [Global] cluster-id \"", configured, "\" differs from \"",
        *from_configmap, "\" in ConfigMap ", where,
        ", under which this cluster's volumes are filed in CNS: the ConfigMap wins; remove "
        "cluster-id from csi-vsphere.conf or set it to \"",
        *from_configmap, "\""));
  }
  if (!configured.empty()) return ClusterIdDecision{std::string(configured), false};
  if (from_configmap) return ClusterIdDecision{*from_configmap, false};
  if (generated.empty()) return absl::InternalError("no cluster ID was generated");
  return ClusterIdDecision{std::string(generated), true};
}

}  // namespace ccm::csi
