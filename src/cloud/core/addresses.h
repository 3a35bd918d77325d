#pragma once
// Node address selection (REFERENCE.md "Addresses"; the Go provider's discoverIPs and its test
// table). Result: Hostname first, then for each configured IP family in order its InternalIP and
// ExternalIP (at most one of each; often the same IP).
//
// Precedence per family: internal pool = candidates of the family minus
// exclude-internal-network-subnet-cidr (external likewise); internal = first pool address inside
// an internal-network-subnet-cidr (CIDR order first, then candidate order), else first on
// internal-vm-network-name (case-insensitive); external likewise; if neither was found,
// internal = first of the internal pool and external = first of the external pool.
// Candidates: guest NIC IPs of real devices (device_config_id != -1), in NIC order, minus
// unparsable, unspecified, loopback, link-local and multicast addresses; addresses statically
// configured in guestinfo.metadata sort first (in their own order).
//
// The kubelet's --node-ip (annotation alpha.kubernetes.io/provided-node-ip): one IP, or a
// dual-stack pair "v4,v6" (either order). The result is then ordered exactly as k8s.io/cloud-
// provider's GetNodeAddressesFromNodeIP orders the reference's addresses (PreferNodeIps): every
// address equal to a node IP first (in the annotation's order), and each of their types becomes
// exclusive: the other addresses of that type are dropped (so a single IPv4 node IP on a dual-stack
// node also drops the IPv6 InternalIP, as upstream does; give the kubelet a pair to keep both). The
// rest follow in their order. Where the reference's rules pick the node IP, the output is equal to
// the Go binary's, so migrating sends no address PATCH.
// Better than the reference: a node IP that is one of the candidates but that the rules did not
// pick (the Go binary refuses such a node: "failed to get node address from cloud provider that
// matches ip") becomes the InternalIP of its family, even when an exclusion would have dropped it:
// the kubelet's explicit choice wins. A node IP that is not among the candidates, or whose family
// is not configured, is an error naming it. A family without any address is an error (the reference
// silently returns only the hostname for a VM without guest NICs).

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "cloud/core/nodes_config.h"
#include "common/ip.h"

namespace ccm::cloud {

inline constexpr absl::string_view kProvidedNodeIpAnnotation =
    "alpha.kubernetes.io/provided-node-ip";

enum class NodeAddressType { kHostname, kInternalIP, kExternalIP };
// The Kubernetes spelling: "Hostname", "InternalIP", "ExternalIP".
absl::string_view NodeAddressTypeName(NodeAddressType t);

struct NodeAddress {
  NodeAddressType type = NodeAddressType::kHostname;
  std::string address;
  bool operator==(const NodeAddress&) const = default;
};
std::string DebugString(const std::vector<NodeAddress>& addresses);  // "Hostname=a InternalIP=b"

struct GuestNic {
  std::string network;                    // guest.net[].network (port group name)
  int device_config_id = 0;               // guest.net[].deviceConfigId; -1 = not a virtual NIC
  std::vector<std::string> ip_addresses;  // guest.net[].ipAddress, as reported
};

struct NodeAddressInput {
  std::string node_name;  // for error messages only
  std::string guest_hostname;
  std::vector<GuestNic> nics;
  std::vector<IpAddress> static_addresses;             // ParseGuestinfoStaticAddresses()
  std::vector<IpFamily> ip_families{IpFamily::kIPv4};  // the VC's ip-family, in priority order
  // Value of the provided-node-ip annotation: one IP, or "v4,v6" for dual stack. Empty = unset.
  std::string provided_node_ip;
};

// Errors: FailedPrecondition when the VM does not (yet) offer what is needed (empty guest
// hostname, no suitable address for a family, configured network names absent, node IP not among
// the VM's addresses); InvalidArgument for an unparsable provided node IP or an empty family
// list. Never NotFound: that code means "the VM is gone".
absl::StatusOr<std::vector<NodeAddress>> SelectNodeAddresses(const NodeAddressInput& input,
                                                             const NodesConfig& nodes);

// The annotation's IPs (component-helpers' ParseNodeIPAnnotation): empty for an empty value; one
// IP; or two of different families, neither unspecified. InvalidArgument otherwise.
absl::StatusOr<std::vector<IpAddress>> ParseProvidedNodeIp(absl::string_view value);

// GetNodeAddressesFromNodeIP's ordering, for node IPs already known to be among `addresses`.
std::vector<NodeAddress> PreferNodeIps(const std::vector<IpAddress>& node_ips,
                                       const std::vector<NodeAddress>& addresses);

}  // namespace ccm::cloud
