#pragma once
// The route controller's decisions (k8s.io/cloud-provider controllers/route, reconcile()), pure:
// which routes to create and delete given the Nodes and the cloud's routes, which address a
// route goes to, and what each Node's NetworkUnavailable condition becomes.

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "cloud/core/routes.h"
#include "common/ip.h"

namespace ccm::cloud {

struct RouteNode {
  std::string name;
  std::string uid;
  std::vector<std::string> pod_cidrs;  // spec.podCIDRs (or spec.podCIDR)
  NodeAddressList addresses;
  // The NetworkUnavailable condition's status: "True", "False", or "" when absent.
  std::string network_unavailable;
};

struct RouteToCreate {
  size_t node = 0;  // index into the Nodes given
  std::string cidr;
};

struct RoutePlan {
  std::vector<RouteToCreate> create;
  std::vector<Route> remove;
};

// Routes to create: every pod CIDR of every Node with no route for that (Node, CIDR). Routes to
// delete: those of this cluster's CIDRs (the route's first or last address inside one of
// `cluster_cidrs`; any other route is someone else's) that are blackholes or serve no current
// (Node, pod CIDR).
RoutePlan PlanRoutes(const std::vector<RouteNode>& nodes, const std::vector<Route>& routes,
                     const std::vector<IpNet>& cluster_cidrs);

// The route's next hop: the Node's first InternalIP of the CIDR's family, else its first
// ExternalIP of that family. InvalidArgument naming the Node when it has none.
absl::StatusOr<std::string> RouteNextHop(const std::string& node, const NodeAddressList& addresses,
                                         const std::string& cidr);

// What the pass writes into the Node's NetworkUnavailable condition: "False" (RouteCreated)
// when every route of a Node with pod CIDRs exists, "True" (NoRouteCreated) when one is missing
// or the Node has no pod CIDR yet; nullopt when the condition already says so.
std::optional<std::string> NetworkConditionUpdate(const RouteNode& node, bool all_routes_created);

// --cluster-cidr: comma-separated CIDRs (dual stack); InvalidArgument naming the bad one.
absl::StatusOr<std::vector<IpNet>> ParseClusterCidrs(const std::string& flag);

}  // namespace ccm::cloud
