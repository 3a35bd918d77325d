#pragma once
// The labels node initialisation writes (REFERENCE.md "Labels"), as a pure function the
// controller applies to the freshest Node inside its retry-on-conflict loop (idempotent).

#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
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
//    already present: they never overwrite a label, whoever wrote it. Keys of `extra` in a
//    Kubernetes namespace (IsKubernetesLabel) are never written.
Labels ComputeNodeLabels(const Labels& existing, const InstanceMetadata& metadata,
                         const Labels& extra);

// apimachinery's IsQualifiedName: [prefix/]name, prefix a DNS-1123 subdomain (<= 253), name <= 63
// characters of [-A-Za-z0-9_.] beginning and ending alphanumeric. The error names the key.
absl::Status ValidateLabelKey(absl::string_view key);
// apimachinery's IsValidLabelValue: empty, or <= 63 characters as a label name.
absl::Status ValidateLabelValue(absl::string_view key, absl::string_view value);
// The key's prefix is kubernetes.io or k8s.io or a subdomain of either (the kubelet's and the
// NodeRestriction admission plugin's isKubernetesLabel rule).
bool IsKubernetesLabel(absl::string_view key);

// --node-labels as the cloud-node controller may apply them: keys and values validated
// (InvalidArgument naming the first bad key), Kubernetes-namespace keys dropped, one warning each.
struct ExtraLabels {
  Labels labels;
  std::vector<std::string> warnings;
};
absl::StatusOr<ExtraLabels> ValidateExtraLabels(const Labels& requested);

}  // namespace ccm::cloud
