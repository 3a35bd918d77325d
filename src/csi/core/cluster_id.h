#pragma once
// The CNS container cluster ID when csi-vsphere.conf has no `[Global] cluster-id`, as the
// reference does it: generated once (a random UUID) into the immutable ConfigMap
// vsphere-csi-cluster-id (key clusterID) in the driver's namespace, and read back from it ever
// after, by the controller and the syncer alike. Every volume is filed in CNS under this ID, so
// it must never change while volumes exist.
//
// DecideClusterId is the pure rule:
//  - the file has one, the ConfigMap not: the file's;
//  - the ConfigMap has one, the file not: the ConfigMap's;
//  - both, equal: that one;
//  - both, different: FailedPrecondition saying the ConfigMap wins (volumes were filed under it)
//    and what to change (the reference refuses even equal values);
//  - neither: `generated`, with create = true (the caller creates the ConfigMap, and on a race
//    with another process reads back the one that won).

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ccm::csi {

inline constexpr char kClusterIdConfigMap[] = "vsphere-csi-cluster-id";
inline constexpr char kClusterIdKey[] = "clusterID";

struct ClusterIdDecision {
  std::string cluster_id;
  bool create = false;  // create the ConfigMap with it
};

// `where` names the ConfigMap for messages ("vmware-system-csi/vsphere-csi-cluster-id").
absl::StatusOr<ClusterIdDecision> DecideClusterId(absl::string_view configured,
                                                  const std::optional<std::string>& from_configmap,
                                                  absl::string_view generated,
                                                  absl::string_view where);

}  // namespace ccm::csi
