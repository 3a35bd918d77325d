#include "cloud/core/node_labels.h"

namespace ccm::cloud {

Labels ComputeNodeLabels(const Labels& existing, const InstanceMetadata& metadata,
                         const Labels& extra) {
  Labels out = existing;
  auto set = [&](absl::string_view key, const std::string& value) {
    if (!value.empty()) out[std::string(key)] = value;
  };
  set(kInstanceTypeLabel, metadata.instance_type);
  set(kInstanceTypeBetaLabel, metadata.instance_type);
  set(kZoneLabel, metadata.zone);
  set(kZoneBetaLabel, metadata.zone);
  set(kRegionLabel, metadata.region);
  set(kRegionBetaLabel, metadata.region);
  for (const Labels* more : {&metadata.additional_labels, &extra})
    for (const auto& [k, v] : *more) out.emplace(k, v);  // emplace never overwrites
  return out;
}

}  // namespace ccm::cloud
