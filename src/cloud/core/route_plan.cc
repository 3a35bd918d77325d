#include "cloud/core/route_plan.h"

#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace ccm::cloud {
namespace {

bool Responsible(const Route& r, const std::vector<IpNet>& cluster_cidrs) {
  auto net = IpNet::Parse(r.destination_cidr);
  if (!net.ok()) return false;  // not one of ours: a route we made has a valid CIDR
  for (const IpNet& c : cluster_cidrs) {
    if (c.Contains(net->first()) || c.Contains(net->last())) return true;
  }
  return false;
}

}  // namespace

RoutePlan PlanRoutes(const std::vector<RouteNode>& nodes, const std::vector<Route>& routes,
                     const std::vector<IpNet>& cluster_cidrs) {
  std::set<std::pair<std::string, std::string>> existing, wanted;
  for (const Route& r : routes) {
    if (!r.target_node.empty()) existing.emplace(r.target_node, r.destination_cidr);
  }
  RoutePlan plan;
  for (size_t i = 0; i < nodes.size(); ++i) {
    for (const std::string& cidr : nodes[i].pod_cidrs) {
      wanted.emplace(nodes[i].name, cidr);
      if (!existing.count({nodes[i].name, cidr})) plan.create.push_back({i, cidr});
    }
  }
  for (const Route& r : routes) {
    if (!Responsible(r, cluster_cidrs)) continue;
    if (r.blackhole || !wanted.count({r.target_node, r.destination_cidr})) plan.remove.push_back(r);
  }
  return plan;
}

absl::StatusOr<std::string> RouteNextHop(const std::string& node, const NodeAddressList& addresses,
                                         const std::string& cidr) {
  auto net = IpNet::Parse(cidr);
  if (!net.ok())
    return absl::InvalidArgumentError(
        absl::StrCat("pod CIDR \"", cidr, "\" of Node ", node, " is not a CIDR"));
  bool any = false;
  for (const char* type : {"InternalIP", "ExternalIP"}) {
    for (const auto& [t, address] : addresses) {
      if (t != type) continue;
      auto ip = IpAddress::TryParse(address);
      if (!ip) continue;
      any = true;
      if (ip->family() == net->family()) return ip->ToString();
    }
  }
  return absl::InvalidArgumentError(
      any ? absl::StrCat("Node ", node, " has no ", IpFamilyName(net->family()),
                         " address for its pod CIDR ", cidr)
          : absl::StrCat("Node ", node, " has neither InternalIP nor ExternalIP"));
}

std::optional<std::string> NetworkConditionUpdate(const RouteNode& node, bool all_routes_created) {
  const bool created = all_routes_created && !node.pod_cidrs.empty();
  const std::string want = created ? "False" : "True";
  if (node.network_unavailable == want) return std::nullopt;
  return want;
}

absl::StatusOr<std::vector<IpNet>> ParseClusterCidrs(const std::string& flag) {
  std::vector<IpNet> out;
  for (absl::string_view part : absl::StrSplit(flag, ',', absl::SkipWhitespace())) {
    auto net = IpNet::Parse(absl::StripAsciiWhitespace(part));
    if (!net.ok())
      return absl::InvalidArgumentError(
          absl::StrCat("--cluster-cidr: \"", part, "\" is not a CIDR"));
    out.push_back(*net);
  }
  if (out.size() > 2 || (out.size() == 2 && out[0].family() == out[1].family()))
    return absl::InvalidArgumentError(
        "--cluster-cidr: at most two CIDRs, one of each IP family (dual stack)");
  return out;
}

}  // namespace ccm::cloud
