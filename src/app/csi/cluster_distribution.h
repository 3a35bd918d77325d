#pragma once
// [Global] cluster-distribution when csi-vsphere.conf has none: derived from the API server's
// gitVersion (csi/core/cluster_distribution.h) as the reference's syncer does, so the CNS
// container cluster metadata names the distribution (Rancher, Openshift, ..., VanillaK8S).

#include <string>

#include "absl/status/statusor.h"
#include "kube/client.h"

namespace ccm::app {

// `configured` when set; else the distribution of GET /version's gitVersion. An error naming the
// API server's answer when it cannot be read (the caller decides whether to go on without).
absl::StatusOr<std::string> ResolveClusterDistribution(kube::Client& client,
                                                       const std::string& configured);

}  // namespace ccm::app
