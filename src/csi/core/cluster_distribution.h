#pragma once
// The CNS container cluster's distribution (`clusterDistribution`, vCenter's telemetry of which
// Kubernetes runs the volumes) when csi-vsphere.conf has no `[Global] cluster-distribution`: the
// reference's syncer takes it from the API server's gitVersion ("v1.29.3+rke2r1" -> Rancher), and
// "VanillaK8S" when the version names no known distribution.

#include <string>

#include "absl/strings/string_view.h"

namespace ccm::csi {

inline constexpr char kVanillaDistribution[] = "VanillaK8S";

// The distribution whose marker `git_version` contains (the reference's markers, compared as it
// does: case-sensitive), else kVanillaDistribution. Markers are tried in a fixed order, so a
// version with two of them always gives the same answer (the reference's map order is random).
std::string ClusterDistributionOf(absl::string_view git_version);

}  // namespace ccm::csi
