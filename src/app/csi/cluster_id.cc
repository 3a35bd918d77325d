#include "app/csi/cluster_id.h"

#include <cstdint>
#include <optional>

#include "absl/random/random.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/logging.h"
#include "csi/core/cluster_id.h"
#include "kube/errors.h"
#include "kube/resource.h"

namespace ccm::app {

std::string NewUuid() {
  absl::BitGen gen;
  uint64_t hi = absl::Uniform<uint64_t>(gen), lo = absl::Uniform<uint64_t>(gen);
  hi = (hi & ~uint64_t{0xF000}) | 0x4000;                      // version 4
  lo = (lo & ~(uint64_t{0xC} << 60)) | (uint64_t{0x8} << 60);  // RFC 4122 variant
  return absl::StrFormat("%08x-%04x-%04x-%04x-%012x", hi >> 32, (hi >> 16) & 0xFFFF, hi & 0xFFFF,
                         lo >> 48, lo & 0xFFFFFFFFFFFFULL);
}

absl::StatusOr<std::string> ResolveClusterId(kube::Client& client, const std::string& ns,
                                             const std::string& configured) {
  const std::string where = absl::StrCat(ns, "/", csi::kClusterIdConfigMap);
  for (int attempt = 0; attempt < 2; ++attempt) {
    std::optional<std::string> stored;
    absl::StatusOr<kube::Json> cm = client.Get(kube::ConfigMaps(), ns, csi::kClusterIdConfigMap);
    if (cm.ok()) {
      stored = cm->value("/data/clusterID"_json_pointer, std::string());
    } else if (!kube::IsNotFoundError(cm.status())) {
      if (!configured.empty()) {
        LOG_WARN("cluster-id: cannot read ConfigMap {} ({}): using csi-vsphere.conf's", where,
                 cm.status().message());
        return configured;
      }
      return absl::UnavailableError(
          absl::StrCat("cluster-id: read ConfigMap ", where, ": ", cm.status().message()));
    }
    absl::StatusOr<csi::ClusterIdDecision> d =
        csi::DecideClusterId(configured, stored, configured.empty() ? NewUuid() : "", where);
    if (!d.ok()) return d.status();
    if (!d->create) return d->cluster_id;
    kube::Json obj = {{"apiVersion", "v1"},
                      {"kind", "ConfigMap"},
                      {"metadata", {{"name", csi::kClusterIdConfigMap}, {"namespace", ns}}},
                      {"immutable", true},
                      {"data", {{csi::kClusterIdKey, d->cluster_id}}}};
    absl::StatusOr<kube::Json> made = client.Create(kube::ConfigMaps(), ns, obj);
    if (made.ok()) {
      LOG_INFO("cluster-id: none in csi-vsphere.conf; generated {} into ConfigMap {}",
               d->cluster_id, where);
      return d->cluster_id;
    }
    if (!kube::IsAlreadyExistsError(made.status())) {
      return absl::Status(made.status().code(), absl::StrCat("cluster-id: create ConfigMap ", where,
                                                             ": ", made.status().message()));
    }
    // Another process made it first: read its value.
  }
  return absl::AbortedError(absl::StrCat("cluster-id: ConfigMap ", where, " keeps changing"));
}

}  // namespace ccm::app
