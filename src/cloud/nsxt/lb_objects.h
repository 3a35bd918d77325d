#pragma once
// The NSX-T load balancer's objects as the Go provider makes them (its
// pkg/cloudprovider/vsphere/loadbalancer), pure: names, tags, port mappings, pool members and
// the Policy API bodies, so that this binary and the Go one can take over each other's objects.
//
//   per cluster:  one LBService on the Tier-1 (managed mode; or a given lb-service-id)
//                 display_name "cluster:<cluster>", tags owner + cluster (+ [LoadBalancer] tags)
//   per Service:  one IpAddressAllocation from the class's IP pool (tags owner, cluster, service)
//   per port:     an LBVirtualServer (ports [port], default_pool_member_ports [nodePort], the
//                 allocated IP, the class's app profile), an LBPool (the Nodes' first InternalIPs,
//                 SNAT automap) and, for TCP, an LBTcpMonitorProfile on the node port;
//                 tags owner, cluster, service "<ns>/<name>", port "<PROTO>/<port>"
//                 (+ ippoolid and lbclass on the virtual server)
//   names:        "cluster:<cluster>:<ns>/<name>" (virtual server, pool),
//                 "cluster:<cluster>:<ns>/<name>:<nodePort>" (monitor)
// A tag list is sorted by scope; a later tag of the same scope replaces an earlier one.

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "cloud/config/config.h"
#include "nsxt/policy_client.h"

namespace ccm::cloud::lb {

using nsxt::Json;

inline constexpr char kScopeOwner[] = "owner";
inline constexpr char kScopeCluster[] = "cluster";
inline constexpr char kScopeService[] = "service";
inline constexpr char kScopePort[] = "port";
inline constexpr char kScopeIpPoolId[] = "ippoolid";
inline constexpr char kScopeLbClass[] = "lbclass";
inline constexpr char kOwner[] = "vsphere-cloud-controller-manager";
inline constexpr char kClassAnnotation[] = "loadbalancer.vmware.io/class";
inline constexpr char kDefaultClass[] = "default";

// The Policy API collections of the load balancer's objects.
inline constexpr char kVirtualServers[] = "/infra/lb-virtual-servers";
inline constexpr char kPools[] = "/infra/lb-pools";
inline constexpr char kMonitors[] = "/infra/lb-monitor-profiles";
inline constexpr char kLbServices[] = "/infra/lb-services";

using Tags = std::map<std::string, std::string>;  // scope -> tag

struct PortMapping {
  int source_port = 0;
  int node_port = 0;
  std::string protocol = "TCP";  // TCP, UDP
  bool operator==(const PortMapping&) const = default;
};

std::string PortTag(const PortMapping& m);                               // "TCP/80"
std::string ServiceKey(const std::string& ns, const std::string& name);  // "ns/name"
std::string ServiceKeyOf(const Json& service);                           // from its metadata

std::string LbServiceName(const std::string& cluster);
std::string ObjectName(const std::string& cluster, const std::string& service_key);
std::string MonitorName(const std::string& cluster, const std::string& service_key,
                        const PortMapping& m);

// owner plus [LoadBalancer] tags (which may replace owner, as in the Go provider).
Tags StandardTags(const std::map<std::string, std::string>& additional);
Json TagList(const Tags& tags);                                   // [{scope, tag}] sorted by scope
std::string TagOf(const Json& object, const std::string& scope);  // "" if none
// Every required scope present with the same tag.
bool HasTags(const Json& object, const Tags& required);

// The Service's ports (spec.ports) as mappings; InvalidArgument naming a port whose protocol is
// neither TCP nor UDP (SCTP has no NSX-T fast profile).
absl::StatusOr<std::vector<PortMapping>> Mappings(const Json& service);

// Virtual server, pool and monitor of this mapping (by the port tag).
bool MatchesVirtualServer(const Json& server, const PortMapping& m);
bool MatchesByPort(const Json& object, const PortMapping& m);

// node IP -> Node name: each Node's first InternalIP.
std::map<std::string, std::string> NodeInternalIps(const std::vector<Json>& nodes);

// The pool members for these Nodes, keeping members already there (their settings stay) and
// adding the missing ones ({ip_address, display_name "<cluster>:<node>", admin_state ENABLED});
// `changed` says whether it differs from `current`.
Json PoolMembers(const Json& current, const std::map<std::string, std::string>& node_ips,
                 const std::string& cluster, bool* changed);

// A load balancer class after the [LoadBalancerClass] merge: what a Service of that class uses.
struct LbClass {
  std::string name;
  std::string ip_pool_id, ip_pool_name;
  std::string tcp_profile_path, tcp_profile_name;
  std::string udp_profile_path, udp_profile_name;
};
// The classes of [LoadBalancer] ("default", from its own keys) and each [LoadBalancerClass]
// (unset keys from the default class), as the Go provider's setupClasses.
std::map<std::string, LbClass> Classes(const LoadBalancerConfig& config);
// The class a Service asks for (annotation loadbalancer.vmware.io/class, trimmed; default
// "default"); NotFound naming it when there is no such class.
absl::StatusOr<LbClass> ClassOf(const Json& service, const std::map<std::string, LbClass>& classes);

// The Policy API bodies (what is PUT under /infra/lb-services, lb-virtual-servers, lb-pools,
// lb-monitor-profiles and ip-pools/<pool>/ip-allocations), with the Go provider's descriptions.
Json LbServiceBody(const std::string& cluster, const std::string& size,
                   const std::string& tier1_path, const Tags& standard);
Json VirtualServerBody(const std::string& cluster, const std::string& service_key,
                       const LbClass& cls, const std::string& ip, const PortMapping& m,
                       const std::string& lb_service_path, const std::string& app_profile_path,
                       const std::string& pool_path, const Tags& standard);
// snat_disabled ([LoadBalancer] snat-disabled): LBSnatDisabled instead of LBSnatAutoMap.
Json PoolBody(const std::string& cluster, const std::string& service_key, const PortMapping& m,
              const Json& members, const Json& monitor_paths, const Tags& standard,
              bool snat_disabled = false);
Json TcpMonitorBody(const std::string& cluster, const std::string& service_key,
                    const PortMapping& m, const Tags& standard);
Json IpAllocationBody(const std::string& cluster, const std::string& service_key,
                      const Tags& standard);

}  // namespace ccm::cloud::lb
