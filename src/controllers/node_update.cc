#include "controllers/node_update.h"

#include <utility>

#include "absl/strings/match.h"
#include "cloud/core/addresses.h"
#include "cloud/core/node_labels.h"

namespace ccm::controllers {

bool ApplyNodeUpdate(kube::Json& node, const cloud::InstanceMetadata& metadata,
                     const std::map<std::string, std::string>& extra_labels) {
  bool dirty = false;
  if (kube::ProviderId(node).empty() && !metadata.provider_id.empty()) {
    kube::SetProviderId(node, metadata.provider_id);
    dirty = true;
  }
  cloud::Labels current = kube::Labels(node);
  cloud::Labels wanted = cloud::ComputeNodeLabels(current, metadata, extra_labels);
  if (wanted != current) {
    for (const auto& [k, v] : wanted) kube::SetLabel(node, k, v);
    dirty = true;
  }
  if (kube::RemoveTaint(node, kUninitializedTaintKey)) dirty = true;
  return dirty;
}

std::optional<std::vector<kube::NodeAddress>> AddressUpdate(
    const kube::Json& node, const cloud::InstanceMetadata& metadata) {
  std::vector<kube::NodeAddress> addresses = ToKubeAddresses(metadata.node_addresses);
  if (addresses.empty() || addresses == kube::NodeAddresses(node)) return std::nullopt;
  return addresses;
}

NodeUpdate ComputeNodeUpdate(const kube::Json& node, const cloud::InstanceMetadata& metadata,
                             const std::map<std::string, std::string>& extra_labels) {
  NodeUpdate out;
  kube::Json changed = node;
  if (ApplyNodeUpdate(changed, metadata, extra_labels)) out.node = std::move(changed);
  out.addresses = AddressUpdate(node, metadata);
  return out;
}

std::map<std::string, std::string> ReconcileNodeLabels(
    const std::map<std::string, std::string>& labels) {
  static constexpr std::pair<absl::string_view, absl::string_view> kPairs[] = {
      {cloud::kZoneBetaLabel, cloud::kZoneLabel},
      {cloud::kRegionBetaLabel, cloud::kRegionLabel},
      {cloud::kInstanceTypeBetaLabel, cloud::kInstanceTypeLabel},
  };
  std::map<std::string, std::string> out;
  for (const auto& [primary, secondary] : kPairs) {
    auto p = labels.find(std::string(primary));
    if (p == labels.end()) continue;
    auto s = labels.find(std::string(secondary));
    if (s == labels.end() || s->second != p->second) out[std::string(secondary)] = p->second;
  }
  return out;
}

cloud::NodeIdentity NodeIdentityOf(const kube::Json& node) {
  cloud::NodeIdentity id;
  id.name = kube::Name(node);
  id.provider_id = kube::ProviderId(node);
  id.system_uuid = kube::SystemUuid(node);
  id.provided_node_ip =
      kube::Annotation(node, cloud::kProvidedNodeIpAnnotation).value_or(std::string());
  return id;
}

std::vector<kube::NodeAddress> ToKubeAddresses(const std::vector<cloud::NodeAddress>& addresses) {
  std::vector<kube::NodeAddress> out;
  out.reserve(addresses.size());
  for (const auto& a : addresses) {
    out.push_back({std::string(cloud::NodeAddressTypeName(a.type)), a.address});
  }
  return out;
}

kube::Json AddressesPatch(const std::vector<kube::NodeAddress>& addresses) {
  kube::Json list = kube::Json::array();
  for (const auto& a : addresses) list.push_back({{"type", a.type}, {"address", a.address}});
  return {{"status", {{"addresses", std::move(list)}}}};
}

kube::ObjectReference NodeRef(const kube::Json& node) {
  kube::ObjectReference ref;
  ref.kind = "Node";
  ref.api_version = "v1";
  ref.name = kube::Name(node);
  ref.uid = kube::Uid(node);
  return ref;
}

bool HasOurProviderId(const kube::Json& node) {
  return absl::StartsWith(kube::ProviderId(node), kProviderIdPrefix);
}

bool NeedsLifecycleCheck(const kube::Json& node) {
  if (kube::IsNodeReady(node)) {
    return IsOurs(node) && kube::HasTaint(node, kShutdownTaintKey, kShutdownTaintEffect);
  }
  return HasOurProviderId(node);
}

bool IsOurs(const kube::Json& node) {
  std::string id = kube::ProviderId(node);
  return id.empty() || absl::StartsWith(id, kProviderIdPrefix);
}

}  // namespace ccm::controllers
