#include "csi/core/topology.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "csi/core/constants.h"

namespace ccm::csi {
namespace {

std::string KeyForZoneRegion(const TopologyConfig& config, const std::string& category,
                             absl::string_view default_key) {
  auto it = config.category_labels.find(category);
  if (it != config.category_labels.end() && !it->second.empty()) return it->second;
  return std::string(default_key);
}

// Where the Node carries a category's value: the label [TopologyCategory "<category>"] names
// (topology-categories: e.g. the topology.kubernetes.io/zone our CCM writes), both spellings the
// CCM writes for the [Labels] zone and region categories, then the published key itself.
std::vector<std::string> LabelsFor(const TopologyConfig& config, const std::string& category,
                                   const std::string& published_key) {
  std::vector<std::string> out;
  auto named = config.category_labels.find(category);
  if (named != config.category_labels.end() && !named->second.empty() &&
      named->second != published_key) {
    out.push_back(named->second);
  }
  if (!config.zone_category.empty() && category == config.zone_category) {
    out.insert(out.end(), {std::string(kZoneKey), std::string(kLegacyZoneKey)});
  } else if (!config.region_category.empty() && category == config.region_category) {
    out.insert(out.end(), {std::string(kRegionKey), std::string(kLegacyRegionKey)});
  }
  out.push_back(published_key);
  return out;
}

// (category, published key) in TopologyKeys order.
std::vector<std::pair<std::string, std::string>> CategoryKeys(const TopologyConfig& config) {
  std::vector<std::pair<std::string, std::string>> out;
  switch (ModeOf(config)) {
    case TopologyMode::kNone:
      break;
    case TopologyMode::kZoneRegion:
      out.emplace_back(config.zone_category,
                       KeyForZoneRegion(config, config.zone_category, kLegacyZoneKey));
      out.emplace_back(config.region_category,
                       KeyForZoneRegion(config, config.region_category, kLegacyRegionKey));
      break;
    case TopologyMode::kCategories:
      for (const std::string& c : config.topology_categories) {
        out.emplace_back(c, absl::StrCat(kTopologyLabelsDomain, "/", c));
      }
      break;
  }
  return out;
}

}  // namespace

std::vector<std::string> SplitTopologyCategories(absl::string_view value) {
  std::vector<std::string> out;
  for (absl::string_view part : absl::StrSplit(value, ',')) {
    part = absl::StripAsciiWhitespace(part);
    if (!part.empty()) out.emplace_back(part);
  }
  return out;
}

TopologyMode ModeOf(const TopologyConfig& config) {
  if (!config.topology_categories.empty()) return TopologyMode::kCategories;
  if (!config.zone_category.empty() && !config.region_category.empty()) {
    return TopologyMode::kZoneRegion;
  }
  return TopologyMode::kNone;
}

std::vector<std::string> TopologyKeys(const TopologyConfig& config) {
  std::vector<std::string> keys;
  for (auto& [category, key] : CategoryKeys(config)) keys.push_back(key);
  return keys;
}

absl::StatusOr<Segments> NodeTopology(const std::map<std::string, std::string>& node_labels,
                                      const TopologyConfig& config) {
  Segments out;
  for (const auto& [category, key] : CategoryKeys(config)) {
    std::vector<std::string> labels = LabelsFor(config, category, key);
    bool found = false;
    for (const std::string& label : labels) {
      auto it = node_labels.find(label);
      if (it != node_labels.end() && !it->second.empty()) {
        out[key] = it->second;
        found = true;
        break;
      }
    }
    if (!found) {
      const bool named = config.category_labels.count(category) > 0 ||
                         category == config.zone_category || category == config.region_category;
      return absl::UnavailableError(absl::StrCat(
          "the Node has no value for topology category \"", category, "\" (published as ", key,
          "; looked for label ", absl::StrJoin(labels, " or "), "): ",
          named ? absl::StrCat("the cloud-controller-manager sets zone and region labels when it "
                               "initialises the Node; with a cloud provider that does not, label "
                               "the Node with ",
                               labels.front(), "=<the host's tag in category ", category, ">")
                : absl::StrCat("set [TopologyCategory \"", category,
                               "\"] label to the Node label that carries it (the "
                               "cloud-controller-manager writes ",
                               kZoneKey, " and ", kRegionKey, ")")));
    }
  }
  return out;
}

bool SegmentMatches(const Segments& requested, const Segments& accessible) {
  for (const auto& [key, value] : requested) {
    auto it = accessible.find(key);
    if (it == accessible.end() || it->second != value) return false;
  }
  return true;
}

std::string FormatSegments(const Segments& segments) {
  return absl::StrCat("{", absl::StrJoin(segments, ", ", absl::PairFormatter("=")), "}");
}

}  // namespace ccm::csi
