#include "csi/core/cluster_distribution.h"

#include <utility>

#include "absl/strings/match.h"

namespace ccm::csi {

std::string ClusterDistributionOf(absl::string_view git_version) {
  // The reference's markers ("racher" is its spelling, kept: a version carrying it matches there).
  static constexpr std::pair<const char*, const char*> kMarkers[] = {
      {"openshift", "Openshift"},
      {"dockeree", "DockerEE"},
      {"docker", "DockerEE"},
      {"racher", "Rancher"},
      {"rke", "Rancher"},
      {"vmware", "TanzuKubernetesCluster"},
      {"wcp", "Supervisor"},
      {"gke", "Anthos"},
      {"eks", "EKS"},
      {"aks", "AKS"},
  };
  for (const auto& [marker, name] : kMarkers) {
    if (absl::StrContains(git_version, marker)) return name;
  }
  return kVanillaDistribution;
}

}  // namespace ccm::csi
