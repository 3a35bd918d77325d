#include "app/csi/cluster_distribution.h"

#include "absl/strings/str_cat.h"
#include "common/logging.h"
#include "csi/core/cluster_distribution.h"

namespace ccm::app {

absl::StatusOr<std::string> ResolveClusterDistribution(kube::Client& client,
                                                       const std::string& configured) {
  if (!configured.empty()) return configured;
  absl::StatusOr<kube::Json> v = client.ServerVersion();
  if (!v.ok()) {
    return absl::Status(v.status().code(),
                        absl::StrCat("cluster-distribution: none in csi-vsphere.conf, and the API "
                                     "server's version could not be read: ",
                                     v.status().message()));
  }
  const kube::Json* git =
      v->is_object() && v->contains("gitVersion") ? &(*v)["gitVersion"] : nullptr;
  if (git == nullptr || !git->is_string()) {
    return absl::InternalError(
        absl::StrCat("cluster-distribution: the API server's /version has no gitVersion string: ",
                     v->dump().substr(0, 200)));
  }
  const std::string version = git->get<std::string>();
  std::string distribution = csi::ClusterDistributionOf(version);
  LOG_INFO("cluster-distribution: none in csi-vsphere.conf; {} from the API server's version {}",
           distribution, version);
  return distribution;
}

}  // namespace ccm::app
