#pragma once
// LoadBalancer (cloud/core/load_balancer.h) on NSX-T's Policy API, as the Go provider's
// loadbalancer package does it (objects, names and tags: lb_objects.h):
//   EnsureLoadBalancer: the Service's IP allocation from its class's pool (spec.loadBalancerIP
//     asked for when set), then per port a TCP monitor (TCP only), a pool of the Nodes' first
//     InternalIPs and a virtual server on the allocated IP; objects of ports no longer there are
//     deleted (virtual server, then pool, then monitor); the cluster's LB service on the Tier-1 is
//     created on first use (managed mode, no lb-service-id) and deleted when its last virtual
//     server goes; with lb-service-id that service is used and never deleted.
//   UpdateLoadBalancer: the pools' members only.
//   EnsureLoadBalancerDeleted: EnsureLoadBalancer with no ports (everything goes, the IP is
//     released).
//   CleanupOrphans: the objects of Services that no longer exist (found by the cluster and
//     service tags), as the Go provider's cleanup does at start.
// Objects are written with PUT (new ones under a random UUID, as the Go provider names them;
// changed ones with the _revision read, read again and re-edited on a 412). One Service at a time
// (one lock).

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "cloud/config/config.h"
#include "cloud/core/load_balancer.h"
#include "cloud/nsxt/lb_objects.h"
#include "common/clock.h"
#include "nsxt/policy_client.h"

namespace ccm::cloud {

struct NsxtLoadBalancerOptions {
  LoadBalancerConfig config;
  absl::Duration realized_timeout = absl::Seconds(15);  // an IP allocation's address
  absl::Duration realized_poll = absl::Milliseconds(200);
  Clock* clock = nullptr;  // null = real
};

class NsxtLoadBalancer : public LoadBalancer {
 public:
  NsxtLoadBalancer(nsxt::PolicyClient& client, NsxtLoadBalancerOptions options);

  // Resolves the classes' IP pool and app profile names to IDs and paths; NotFound naming the
  // pool or profile that does not exist. Every other call does it first when it has not been
  // done yet (NSX-T may be down at start: the calls fail, and are retried, until it answers).
  absl::Status Setup();

  absl::StatusOr<std::optional<LoadBalancerStatus>> GetLoadBalancer(
      const std::string& cluster, const nsxt::Json& service) override;
  std::string GetLoadBalancerName(const std::string& cluster, const nsxt::Json& service) override;
  absl::StatusOr<LoadBalancerStatus> EnsureLoadBalancer(
      const std::string& cluster, const nsxt::Json& service,
      const std::vector<nsxt::Json>& nodes) override;
  absl::Status UpdateLoadBalancer(const std::string& cluster, const nsxt::Json& service,
                                  const std::vector<nsxt::Json>& nodes) override;
  absl::Status EnsureLoadBalancerDeleted(const std::string& cluster,
                                         const nsxt::Json& service) override;
  // Deletes the load balancers of Services not in `services` ("ns/name" of the Services of type
  // LoadBalancer that exist).
  absl::Status CleanupOrphans(const std::string& cluster, const std::set<std::string>& services);

 private:
  struct Found {
    std::vector<nsxt::Json> servers, pools, monitors, allocations;
  };
  absl::StatusOr<LoadBalancerStatus> Ensure(const std::string& cluster, const nsxt::Json& service,
                                            const std::vector<nsxt::Json>& nodes)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::StatusOr<Found> Read(const std::string& cluster, const std::string& key,
                             const lb::LbClass& cls);
  absl::StatusOr<std::vector<nsxt::Json>> Tagged(const std::string& collection,
                                                 const lb::Tags& tags);
  absl::StatusOr<std::string> Allocate(const std::string& cluster, const std::string& key,
                                       const lb::LbClass& cls, const nsxt::Json& service,
                                       Found& found);
  absl::StatusOr<std::string> AllocatedIp(const nsxt::Json& allocation);
  absl::StatusOr<std::string> MonitorPath(const std::string& cluster, const std::string& key,
                                          const lb::PortMapping& m, Found& found);
  absl::StatusOr<std::string> PoolPath(const std::string& cluster, const std::string& key,
                                       const lb::PortMapping& m, const std::string& monitor,
                                       const std::map<std::string, std::string>& node_ips,
                                       Found& found);
  absl::Status EnsureServer(const std::string& cluster, const std::string& key,
                            const lb::LbClass& cls, const std::string& ip, const lb::PortMapping& m,
                            const std::string& pool, Found& found);
  absl::Status DeleteUnused(const std::string& cluster, const std::vector<lb::PortMapping>& ports,
                            Found& found);
  absl::StatusOr<std::string> LbServicePath(const std::string& cluster);
  absl::Status RemoveLbServiceIfUnused(const std::string& cluster);
  absl::StatusOr<nsxt::Json> Create(const std::string& collection, const nsxt::Json& body);
  // PUTs `current` as `change` edits it, with the _revision read; on 412 (someone wrote it
  // meanwhile) reads it again and re-applies `change` (PolicyClient::Update).
  absl::StatusOr<nsxt::Json> Change(const nsxt::Json& current,
                                    const std::function<void(nsxt::Json&)>& change);
  std::string ProfilePath(const lb::LbClass& cls, const std::string& protocol) const;

  nsxt::PolicyClient& client_;
  const NsxtLoadBalancerOptions options_;
  Clock& clock_;
  const lb::Tags standard_;
  absl::Status SetUpLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  absl::Mutex mu_;
  bool set_up_ ABSL_GUARDED_BY(mu_) = false;
  std::map<std::string, lb::LbClass> classes_ ABSL_GUARDED_BY(mu_);
};

}  // namespace ccm::cloud
