#pragma once
// Routes (cloud/core/routes.h) as NSX-T static routes on a Tier-1 gateway ([Route] router-path),
// named and tagged as the Go provider's route provider makes them, so that either can take over
// the other's routes:
//   id           "<node UID>_<cidr>" with '/' -> '_'   (e.g. 4f1c..._10.244.1.0_24)
//   display_name "<cluster>_<node>_<cidr>" (at most 255 characters)
//   network      the pod CIDR; next_hops [{ip_address: the Node's address}]
//   tags         vsphere.k8s.io/cluster-name = cluster, vsphere.k8s.io/node-name = node
// ListRoutes searches the cluster tag (all pages; the Go provider reads the first page only)
// and keeps the routes on router-path (a route of this cluster on another router is not ours
// to delete through this one). CreateRoute PATCHes the route, then reads its realized state
// (at once, then every second, at most 10 s: the Go provider's bounds) and fails at once on
// state ERROR. DeleteRoute of a route already gone succeeds (NSX-T answers 200).

#include <string>
#include <vector>

#include "absl/time/time.h"
#include "cloud/core/routes.h"
#include "common/clock.h"
#include "nsxt/policy_client.h"

namespace ccm::cloud {

inline constexpr char kClusterNameTagScope[] = "vsphere.k8s.io/cluster-name";
inline constexpr char kNodeNameTagScope[] = "vsphere.k8s.io/node-name";

struct NsxtRoutesOptions {
  std::string router_path;  // "/infra/tier-1s/<id>"
  absl::Duration realized_timeout = absl::Seconds(10);
  absl::Duration realized_poll = absl::Seconds(1);
  Clock* clock = nullptr;  // null = real
};

class NsxtRoutes : public Routes {
 public:
  // `client` must outlive this object.
  NsxtRoutes(nsxt::PolicyClient& client, NsxtRoutesOptions options);

  absl::StatusOr<std::vector<Route>> ListRoutes(const std::string& cluster) override;
  absl::Status CreateRoute(const std::string& cluster, const std::string& name_hint,
                           const Route& route, const NodeAddressList& addresses) override;
  absl::Status DeleteRoute(const std::string& cluster, const Route& route) override;

 private:
  absl::Status WaitRealized(const std::string& path);

  nsxt::PolicyClient& client_;
  const NsxtRoutesOptions options_;
  Clock& clock_;
};

// The static route's id for a Node UID and pod CIDR.
std::string StaticRouteId(const std::string& name_hint, const std::string& cidr);
// The static route's body (what CreateRoute PATCHes).
nsxt::Json StaticRouteBody(const std::string& cluster, const std::string& node,
                           const std::string& cidr, const std::string& next_hop);

}  // namespace ccm::cloud
