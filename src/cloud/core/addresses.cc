#include "cloud/core/addresses.h"

#include <algorithm>
#include <map>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace ccm::cloud {
namespace {

struct Candidate {
  IpAddress ip;
  std::string text;     // as the guest reported it (the reference returns it verbatim)
  std::string network;  // port group name of its NIC
};

bool IsUsable(const IpAddress& ip) {
  return !ip.IsUnspecified() && !ip.IsLoopback() && !ip.IsLinkLocal() && !ip.IsMulticast();
}

std::vector<Candidate> CollectCandidates(const NodeAddressInput& in) {
  std::vector<Candidate> all;
  for (const GuestNic& nic : in.nics) {
    if (nic.device_config_id == -1) continue;
    for (const std::string& text : nic.ip_addresses) {
      std::optional<IpAddress> ip = IpAddress::TryParse(absl::StripAsciiWhitespace(text));
      if (!ip || !IsUsable(*ip)) continue;
      all.push_back({*ip, std::string(absl::StripAsciiWhitespace(text)), nic.network});
    }
  }
  if (in.static_addresses.empty()) return all;
  // Static addresses first, in the metadata's order; the rest keep NIC order.
  std::vector<Candidate> sorted;
  std::vector<bool> taken(all.size(), false);
  for (const IpAddress& s : in.static_addresses) {
    for (size_t i = 0; i < all.size(); ++i) {
      if (!taken[i] && all[i].ip == s) {
        sorted.push_back(all[i]);
        taken[i] = true;
      }
    }
  }
  for (size_t i = 0; i < all.size(); ++i)
    if (!taken[i]) sorted.push_back(all[i]);
  return sorted;
}

bool InAny(const IpAddress& ip, const std::vector<IpNet>& nets) {
  return std::any_of(nets.begin(), nets.end(), [&](const IpNet& n) { return n.Contains(ip); });
}

std::vector<const Candidate*> Pool(const std::vector<const Candidate*>& family,
                                   const std::vector<IpNet>& excluded) {
  std::vector<const Candidate*> out;
  for (const Candidate* c : family)
    if (!InAny(c->ip, excluded)) out.push_back(c);
  return out;
}

const Candidate* FirstInSubnets(const std::vector<const Candidate*>& pool,
                                const std::vector<IpNet>& subnets) {
  for (const IpNet& net : subnets)
    for (const Candidate* c : pool)
      if (net.Contains(c->ip)) return c;
  return nullptr;
}

const Candidate* FirstOnNetwork(const std::vector<const Candidate*>& pool,
                                const std::string& network) {
  if (network.empty()) return nullptr;
  for (const Candidate* c : pool)
    if (absl::EqualsIgnoreCase(c->network, network)) return c;
  return nullptr;
}

std::string Texts(const std::vector<const Candidate*>& cs) {
  std::vector<std::string> t;
  for (const Candidate* c : cs) t.push_back(absl::StrCat(c->text, " (", c->network, ")"));
  return t.empty() ? "none" : absl::StrJoin(t, ", ");
}

std::string Nets(const std::vector<IpNet>& nets) {
  std::vector<std::string> t;
  for (const IpNet& n : nets) t.push_back(n.ToString());
  return absl::StrJoin(t, ",");
}

// What was configured, for "no address" errors.
std::string Rules(const NodesConfig& n) {
  std::vector<std::string> parts;
  auto add = [&](absl::string_view key, const std::string& v) {
    if (!v.empty()) parts.push_back(absl::StrCat(key, "=", v));
  };
  add("internal-network-subnet-cidr", Nets(n.internal_network_subnet_cidrs));
  add("external-network-subnet-cidr", Nets(n.external_network_subnet_cidrs));
  add("internal-vm-network-name", n.internal_vm_network_name);
  add("external-vm-network-name", n.external_vm_network_name);
  add("exclude-internal-network-subnet-cidr", Nets(n.exclude_internal_network_subnet_cidrs));
  add("exclude-external-network-subnet-cidr", Nets(n.exclude_external_network_subnet_cidrs));
  return parts.empty() ? "no [Nodes] rules" : absl::StrJoin(parts, " ");
}

absl::string_view FamilyLabel(IpFamily f) { return f == IpFamily::kIPv4 ? "IPv4" : "IPv6"; }

// Like the reference: when both network names are set and the VM has neither, give up early.
absl::Status CheckNetworkNames(const NodeAddressInput& in, const NodesConfig& nodes,
                               const std::string& who) {
  const std::string& in_name = nodes.internal_vm_network_name;
  const std::string& ex_name = nodes.external_vm_network_name;
  if (in_name.empty() || ex_name.empty()) return absl::OkStatus();
  std::vector<std::string> names;
  bool found = false;
  for (const GuestNic& nic : in.nics) {
    if (nic.device_config_id == -1) continue;
    names.push_back(nic.network);
    found = found || absl::EqualsIgnoreCase(nic.network, in_name) ||
            absl::EqualsIgnoreCase(nic.network, ex_name);
  }
  if (found) return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrCat(
      who, ": unable to find suitable IP address for node: none of the VM's networks [",
      absl::StrJoin(names, ", "), "] is internal-vm-network-name \"", in_name,
      "\" or external-vm-network-name \"", ex_name, "\""));
}

// The candidate of each kubelet node IP, by family; an error when a node IP's family is not
// configured or the VM does not report it.
absl::StatusOr<std::map<IpFamily, const Candidate*>> NodeIpCandidates(
    const std::vector<IpAddress>& node_ips, const std::vector<IpFamily>& families,
    const std::vector<Candidate>& candidates, const std::string& who) {
  std::map<IpFamily, const Candidate*> node_ip;
  for (const IpAddress& ip : node_ips) {
    const std::string part = ip.ToString();
    if (std::find(families.begin(), families.end(), ip.family()) == families.end()) {
      return absl::FailedPreconditionError(absl::StrCat(
          who, ": kubelet node IP ", part, " is ", FamilyLabel(ip.family()),
          " but the vCenter's ip-family does not include ", IpFamilyName(ip.family())));
    }
    auto it = std::find_if(candidates.begin(), candidates.end(),
                           [&](const Candidate& c) { return c.ip == ip; });
    if (it == candidates.end()) {
      std::vector<const Candidate*> all;
      for (const Candidate& c : candidates) all.push_back(&c);
      return absl::FailedPreconditionError(
          absl::StrCat(who, ": kubelet node IP ", part, " (", kProvidedNodeIpAnnotation,
                       ") is not one of the VM's addresses: ", Texts(all)));
    }
    node_ip[ip.family()] = &*it;
  }
  return node_ip;
}

std::vector<const Candidate*> OfFamily(const std::vector<Candidate>& candidates, IpFamily family) {
  std::vector<const Candidate*> out;
  for (const Candidate& c : candidates)
    if (c.ip.family() == family) out.push_back(&c);
  return out;
}

// One family's choice; either may be null.
struct Picked {
  const Candidate* internal = nullptr;
  const Candidate* external = nullptr;
};

// The reference's rules for one family: subnet CIDRs, then network names, then (when neither
// found anything) the first address of each pool.
Picked PickByRules(const std::vector<const Candidate*>& of_family, const NodesConfig& nodes) {
  const auto internal_pool = Pool(of_family, nodes.exclude_internal_network_subnet_cidrs);
  const auto external_pool = Pool(of_family, nodes.exclude_external_network_subnet_cidrs);
  Picked p{FirstInSubnets(internal_pool, nodes.internal_network_subnet_cidrs),
           FirstInSubnets(external_pool, nodes.external_network_subnet_cidrs)};
  if (p.internal == nullptr)
    p.internal = FirstOnNetwork(internal_pool, nodes.internal_vm_network_name);
  if (p.external == nullptr)
    p.external = FirstOnNetwork(external_pool, nodes.external_vm_network_name);
  if (p.internal == nullptr && p.external == nullptr) {
    if (!internal_pool.empty()) p.internal = internal_pool.front();
    if (!external_pool.empty()) p.external = external_pool.front();
  }
  return p;
}

// A node IP the rules did not pick (the reference would refuse the node) becomes the family's
// InternalIP; one they picked keeps its role, as in the reference.
void KeepNodeIp(const Candidate* node_ip, Picked& p) {
  if (node_ip == nullptr) return;
  const IpAddress& ip = node_ip->ip;
  if ((p.internal == nullptr || p.internal->ip != ip) &&
      (p.external == nullptr || p.external->ip != ip))
    p.internal = node_ip;
}

// Appends the InternalIP and ExternalIP of `family` to `out` (`node_ip`: the kubelet's node IP of
// this family, or null); an error when the family has neither.
absl::Status AddFamilyAddresses(IpFamily family, const std::vector<Candidate>& candidates,
                                const Candidate* node_ip, const NodesConfig& nodes,
                                const std::string& who, std::vector<NodeAddress>* out) {
  const std::vector<const Candidate*> of_family = OfFamily(candidates, family);
  Picked p = PickByRules(of_family, nodes);
  KeepNodeIp(node_ip, p);
  if (p.internal == nullptr && p.external == nullptr) {
    return absl::FailedPreconditionError(absl::StrCat(
        who, ": unable to find suitable IP address for node with IP family ", IpFamilyName(family),
        ": ", FamilyLabel(family), " candidates: ", Texts(of_family), "; rules: ", Rules(nodes)));
  }
  if (p.internal != nullptr) out->push_back({NodeAddressType::kInternalIP, p.internal->text});
  if (p.external != nullptr) out->push_back({NodeAddressType::kExternalIP, p.external->text});
  return absl::OkStatus();
}

}  // namespace

absl::string_view NodeAddressTypeName(NodeAddressType t) {
  switch (t) {
    case NodeAddressType::kHostname:
      return "Hostname";
    case NodeAddressType::kInternalIP:
      return "InternalIP";
    case NodeAddressType::kExternalIP:
      return "ExternalIP";
  }
  return "Unknown";
}

std::string DebugString(const std::vector<NodeAddress>& addresses) {
  return absl::StrJoin(addresses, " ", [](std::string* out, const NodeAddress& a) {
    absl::StrAppend(out, NodeAddressTypeName(a.type), "=", a.address);
  });
}

absl::StatusOr<std::vector<NodeAddress>> SelectNodeAddresses(const NodeAddressInput& in,
                                                             const NodesConfig& nodes) {
  const std::string who = absl::StrCat("node ", in.node_name);
  if (in.ip_families.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(who, ": no IP family configured"));
  }
  const std::string hostname(absl::StripAsciiWhitespace(in.guest_hostname));
  if (hostname.empty()) {
    return absl::FailedPreconditionError(absl::StrCat(
        who, ": the VM's guest hostname is empty (are VMware Tools running in the guest?)"));
  }
  if (absl::Status s = CheckNetworkNames(in, nodes, who); !s.ok()) return s;

  const std::vector<Candidate> candidates = CollectCandidates(in);

  // The kubelet's --node-ip: one IP, or a dual-stack pair (ParseNodeIPAnnotation's rules).
  absl::StatusOr<std::vector<IpAddress>> node_ips = ParseProvidedNodeIp(in.provided_node_ip);
  if (!node_ips.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(who, ": ", node_ips.status().message()));
  }
  absl::StatusOr<std::map<IpFamily, const Candidate*>> node_ip =
      NodeIpCandidates(*node_ips, in.ip_families, candidates, who);
  if (!node_ip.ok()) return node_ip.status();

  std::vector<NodeAddress> out{{NodeAddressType::kHostname, hostname}};
  for (IpFamily family : in.ip_families) {
    auto it = node_ip->find(family);
    absl::Status s = AddFamilyAddresses(
        family, candidates, it == node_ip->end() ? nullptr : it->second, nodes, who, &out);
    if (!s.ok()) return s;
  }
  if (node_ips->empty()) return out;
  return PreferNodeIps(*node_ips, out);
}

absl::StatusOr<std::vector<IpAddress>> ParseProvidedNodeIp(absl::string_view value) {
  std::vector<IpAddress> ips;
  if (absl::StripAsciiWhitespace(value).empty()) return ips;
  for (absl::string_view part : absl::StrSplit(value, ',')) {
    std::optional<IpAddress> ip = IpAddress::TryParse(absl::StripAsciiWhitespace(part));
    if (!ip) {
      return absl::InvalidArgumentError(absl::StrCat(kProvidedNodeIpAnnotation, " \"", value,
                                                     "\": \"", part, "\" is not an IP address"));
    }
    ips.push_back(*ip);
  }
  if (ips.size() > 2 || (ips.size() == 2 && ips[0].family() == ips[1].family())) {
    return absl::InvalidArgumentError(
        absl::StrCat(kProvidedNodeIpAnnotation, " \"", value,
                     "\" must contain either a single IP or a dual-stack pair of IPs"));
  }
  if (ips.size() == 2 && (ips[0].IsUnspecified() || ips[1].IsUnspecified())) {
    return absl::InvalidArgumentError(absl::StrCat(kProvidedNodeIpAnnotation, " \"", value,
                                                   "\": a dual-stack node IP cannot include ",
                                                   "'0.0.0.0' or '::'"));
  }
  return ips;
}

std::vector<NodeAddress> PreferNodeIps(const std::vector<IpAddress>& node_ips,
                                       const std::vector<NodeAddress>& addresses) {
  std::vector<NodeAddress> out;
  std::set<NodeAddressType> exclusive;
  for (const IpAddress& node_ip : node_ips) {
    for (const NodeAddress& a : addresses) {
      std::optional<IpAddress> ip = IpAddress::TryParse(a.address);
      if (ip && *ip == node_ip) {
        out.push_back(a);
        exclusive.insert(a.type);
      }
    }
  }
  for (const NodeAddress& a : addresses)
    if (!exclusive.count(a.type)) out.push_back(a);
  return out;
}

}  // namespace ccm::cloud
