#include "csi/controller/host_topology.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace ccm::csi {

TopologyCategories CategoriesOf(const TopologyConfig& config) {
  TopologyCategories out;
  switch (ModeOf(config)) {
    case TopologyMode::kNone:
      return out;
    case TopologyMode::kZoneRegion:
      out.categories = {config.zone_category, config.region_category};
      break;
    case TopologyMode::kCategories:
      out.categories = config.topology_categories;
      break;
  }
  out.keys = TopologyKeys(config);
  if (out.keys.size() != out.categories.size()) out = {};  // cannot happen: keys follow categories
  return out;
}

absl::StatusOr<std::optional<Segments>> SegmentOfChain(const std::vector<TaggedRef>& chain,
                                                       const TopologyCategories& categories) {
  Segments segment;
  for (size_t i = 0; i < categories.categories.size(); ++i) {
    const std::string& category = categories.categories[i];
    bool found = false;
    for (const TaggedRef& obj : chain) {
      std::vector<std::string> names;
      for (const vsphere::Tag& t : obj.tags) {
        if (t.category_name == category) names.push_back(t.name);
      }
      if (names.empty()) continue;
      if (names.size() > 1) {
        return absl::FailedPreconditionError(absl::StrCat(
            obj.description, " carries ", names.size(), " tags of category ", category, " (",
            absl::StrJoin(names, ", "), "): its datastores' topology is ambiguous"));
      }
      segment[categories.keys[i]] = names.front();
      found = true;
      break;
    }
    if (!found) return std::optional<Segments>();
  }
  return std::optional<Segments>(std::move(segment));
}

HostTopology HostTopologyOf(const std::vector<TaggedRef>& chain,
                            const TopologyCategories& categories) {
  HostTopology out;
  absl::StatusOr<std::optional<Segments>> seg = SegmentOfChain(chain, categories);
  if (!seg.ok()) {
    out.problem = std::string(seg.status().message());
    out.ambiguous = true;
    return out;
  }
  if (seg->has_value()) {
    out.segment = **std::move(seg);
    return out;
  }
  std::vector<std::string> missing;
  for (const std::string& category : categories.categories) {
    bool found = false;
    for (const TaggedRef& obj : chain) {
      for (const vsphere::Tag& t : obj.tags) found = found || t.category_name == category;
    }
    if (!found) missing.push_back(category);
  }
  const std::string first = chain.empty() ? "the host" : chain.front().description;
  out.problem = absl::StrCat("no tag of categor", missing.size() == 1 ? "y " : "ies ",
                             absl::StrJoin(missing, ", "), " on ", first, " or its ",
                             chain.empty() ? 0 : chain.size() - 1, " ancestors");
  return out;
}

std::vector<Segments> DistinctSegments(const std::vector<std::optional<Segments>>& hosts) {
  std::vector<Segments> out;
  for (const auto& s : hosts) {
    if (s.has_value()) out.push_back(*s);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace ccm::csi
