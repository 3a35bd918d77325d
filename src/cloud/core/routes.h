#pragma once
// Pod routes (k8s.io/cloud-provider's Routes, served by the route controller): one route per
// Node pod CIDR, to the Node's address, in the cloud's router (for vSphere: static routes on an
// NSX-T Tier-1 gateway, cloud/nsxt/nsxt_routes.h). The decisions around it are pure and live in
// route_plan.h.

#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace ccm::cloud {

struct Route {
  std::string name;         // the cloud's ID of the route ("" for one not created yet)
  std::string target_node;  // the Node's name ("" when the cloud does not say)
  std::string destination_cidr;
  bool blackhole = false;  // the route leads nowhere (its target is gone): always removed
  bool operator==(const Route&) const = default;
};

// A Node's addresses as status.addresses has them: {type, address}.
using NodeAddressList = std::vector<std::pair<std::string, std::string>>;

class Routes {
 public:
  virtual ~Routes() = default;
  // Every route this cluster made (the cloud keeps the cluster name on each). An error means
  // "could not ask": the controller then creates and deletes nothing this pass.
  virtual absl::StatusOr<std::vector<Route>> ListRoutes(const std::string& cluster) = 0;
  // Creates (or converges) the route to route.destination_cidr through the Node's address of
  // the CIDR's family (InternalIP first, then ExternalIP); `name_hint` is the Node's UID, so a
  // Node re-created under the same name gets a route of its own. Returns once the cloud says
  // the route is in effect; on an error the route may exist or not, and the next pass retries.
  // InvalidArgument: the Node has no address of that family (retrying will not help until it
  // has one).
  virtual absl::Status CreateRoute(const std::string& cluster, const std::string& name_hint,
                                   const Route& route, const NodeAddressList& addresses) = 0;
  // Deletes the route (by route.name); a route already gone is success.
  virtual absl::Status DeleteRoute(const std::string& cluster, const Route& route) = 0;
};

}  // namespace ccm::cloud
