#pragma once
// Services of type LoadBalancer (k8s.io/cloud-provider's LoadBalancer, served by the service
// controller): the cloud side of one Service's load balancer. The Service and the Nodes are the
// API objects as read (only their metadata, spec.ports, spec.loadBalancerIP and
// status.addresses are used). For vSphere: the NSX-T load balancer,
// cloud/nsxt/nsxt_load_balancer.h.

#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

namespace ccm::cloud {

struct LoadBalancerStatus {
  std::vector<std::string> ingress_ips;  // status.loadBalancer.ingress[].ip
  bool operator==(const LoadBalancerStatus&) const = default;
};

class LoadBalancer {
 public:
  virtual ~LoadBalancer() = default;
  // The load balancer's status, or nullopt when it does not exist. An error: could not ask.
  virtual absl::StatusOr<std::optional<LoadBalancerStatus>> GetLoadBalancer(
      const std::string& cluster, const nlohmann::json& service) = 0;
  virtual std::string GetLoadBalancerName(const std::string& cluster,
                                          const nlohmann::json& service) = 0;
  // Creates or converges the load balancer for the Service's ports and these Nodes; returns its
  // status. On an error some objects may exist; the next call converges them (nothing is lost).
  // NotFound: the Service asks for a load balancer class that does not exist.
  virtual absl::StatusOr<LoadBalancerStatus> EnsureLoadBalancer(
      const std::string& cluster, const nlohmann::json& service,
      const std::vector<nlohmann::json>& nodes) = 0;
  // The Nodes changed: only the backends follow.
  virtual absl::Status UpdateLoadBalancer(const std::string& cluster, const nlohmann::json& service,
                                          const std::vector<nlohmann::json>& nodes) = 0;
  // Removes everything of this Service's load balancer; one already gone is success.
  virtual absl::Status EnsureLoadBalancerDeleted(const std::string& cluster,
                                                 const nlohmann::json& service) = 0;
};

}  // namespace ccm::cloud
