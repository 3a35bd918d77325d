#include "csi/core/node_topology.h"

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace ccm::csi {
namespace {

constexpr int kDefaultWatchMinutes = 1;
constexpr int kMaxWatchMinutes = 2;

}  // namespace

WatchTimeout NodeGetInfoWatchTimeout(const std::optional<std::string>& env_value) {
  WatchTimeout out;
  if (!env_value || env_value->empty()) return out;
  int v = 0;
  if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(*env_value), &v)) {
    out.warning = absl::StrCat(kEnvNodeGetInfoWatchTimeout, "=\"", *env_value,
                               "\" is not a whole number of minutes: waiting ",
                               kDefaultWatchMinutes, " minute");
  } else if (v <= 0 || v > kMaxWatchMinutes) {
    out.warning = absl::StrCat(kEnvNodeGetInfoWatchTimeout, "=", v, " is not between 1 and ",
                               kMaxWatchMinutes, ": waiting ", kDefaultWatchMinutes, " minute");
  } else {
    out.minutes = v;
  }
  return out;
}

std::optional<absl::StatusOr<Segments>> NodeTopologyAnswer(const std::string& node,
                                                           const NodeTopologyStatus& status) {
  if (status.status == kNodeTopologySuccess) {
    Segments s;
    for (const auto& [k, v] : status.labels) s[k] = v;
    return absl::StatusOr<Segments>(std::move(s));
  }
  if (status.status == kNodeTopologyError) {
    return absl::StatusOr<Segments>(absl::InternalError(
        absl::StrCat("CSINodeTopology ", node,
                     ": the syncer could not tell the node's topology: ", status.error_message)));
  }
  return std::nullopt;
}

std::optional<NodeTopologyStatus> DesiredNodeTopology(const std::string& node,
                                                      const std::string& node_uuid,
                                                      const TopologyConfig& config,
                                                      const NodeVmTopology& vm) {
  if (node_uuid.empty()) return std::nullopt;
  if (absl::IsUnavailable(vm.state)) return std::nullopt;
  NodeTopologyStatus out;
  if (vm.state.code() == absl::StatusCode::kNotFound) {
    out.status = kNodeTopologyError;
    out.error_message = absl::StrCat("failed to retrieve nodeVM ", node_uuid, " of Node ", node,
                                     ": ", vm.state.message());
    return out;
  }
  const TopologyMode mode = ModeOf(config);
  if (mode == TopologyMode::kNone) {
    if (config.zone_category.empty() != config.region_category.empty()) {
      out.status = kNodeTopologyError;
      out.error_message =
          "missing zone or region information in vSphere CSI config `Labels` section: set both "
          "zone and region, or topology-categories";
      return out;
    }
    out.status = kNodeTopologySuccess;  // not a topology aware cluster: no labels
    return out;
  }
  if (!vm.state.ok()) {
    out.status = kNodeTopologyError;
    out.error_message = absl::StrCat("failed to fetch topology information for the nodeVM ", node,
                                     " (", vm.vm, "): ", vm.state.message());
    return out;
  }
  out.status = kNodeTopologySuccess;
  for (const std::string& key : TopologyKeys(config)) {
    auto it = vm.segment.find(key);
    if (it == vm.segment.end()) {
      out = {};
      out.status = kNodeTopologyError;
      out.error_message = absl::StrCat("failed to fetch topology information for the nodeVM ", node,
                                       " (", vm.vm, "): no value for ", key);
      return out;
    }
    out.labels.emplace_back(key, it->second);
  }
  return out;
}

}  // namespace ccm::csi
