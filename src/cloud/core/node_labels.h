#pragma once
// The labels node initialisation writes (REFERENCE.md "Labels"), as a pure function the
// controller applies to the freshest Node inside its retry-on-conflict loop (idempotent).

#include <map>
#include <string>

#include "absl/strings/string_view.h"
#include "cloud/core/instances.h"

namespace ccm::cloud {

using Labels = std::map<std::string, std::string>;

inline constexpr absl::string_view kInstanceTypeLabel = "node.kubernetes.io/instance-type";
inline constexpr absl::string_view kInstanceTypeBetaLabel = "beta.kubernetes.io/instance-type";
inline constexpr absl::string_view kZoneLabel = "topology.kubernetes.io/zone";
inline constexpr absl::string_view kZoneBetaLabel = "failure-domain.beta.kubernetes.io/zone";
inline constexpr absl::string_view kRegionLabel = "topology.kubernetes.io/region";
inline constexpr absl::string_view kRegionBetaLabel = "failure-domain.beta.kubernetes.io/region";

// The complete label set the Node should have: `existing`, plus
//  - the instance-type labels (both spellings) when metadata.instance_type is set,
//  - zone and region labels (both spellings) when metadata.zone / metadata.region are set,
//    (these provider-owned labels are set to the VM's current values, like cloud-provider's node
//    controller does),
//  - metadata.additional_labels and then `extra` (--node-labels), each only where the key is not
//    already present: they never overwrite a label, whoever wrote it.
Labels ComputeNodeLabels(const Labels& existing, const InstanceMetadata& metadata,
                         const Labels& extra);

}  // namespace ccm::cloud
