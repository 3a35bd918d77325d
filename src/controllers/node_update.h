#pragma once
// The pure part of node initialisation and address refresh: what a Node should become given what
// the provider says about its VM (cloud-provider's node modifiers, as one idempotent function).
// The controllers apply it to the freshest Node inside their retry-on-conflict loops, so a label
// written meanwhile by someone else is kept. No I/O.

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "cloud/core/instances.h"
#include "cloud/core/node_identity.h"
#include "kube/client.h"
#include "kube/event_sink.h"
#include "kube/objects.h"

namespace ccm::controllers {

// Set by kubelets started with --cloud-provider=external; removed once the node is initialised.
inline constexpr absl::string_view kUninitializedTaintKey =
    "node.cloudprovider.kubernetes.io/uninitialized";
// Added by the lifecycle controller while the VM is not powered on.
inline constexpr absl::string_view kShutdownTaintKey = "node.cloudprovider.kubernetes.io/shutdown";
inline constexpr absl::string_view kShutdownTaintEffect = "NoSchedule";
inline constexpr absl::string_view kProviderIdPrefix = "vsphere://";

struct NodeUpdate {
  // The Node with providerID, labels and taints changed (metadata/spec only; status untouched);
  // nullopt when nothing there needs to change. Carries the input's resourceVersion.
  std::optional<kube::Json> node;
  // The status.addresses to write; nullopt when the Node already has exactly these.
  std::optional<std::vector<kube::NodeAddress>> addresses;
  bool empty() const { return !node && !addresses; }
};

// - spec.providerID = metadata.provider_id, only when the Node has none;
// - labels = cloud::ComputeNodeLabels(current labels, metadata, extra_labels) (provider labels
//   follow the VM; additional and --node-labels extras never overwrite);
// - the uninitialized taint removed;
// - addresses = metadata.node_addresses (the provider already honours the kubelet's
//   alpha.kubernetes.io/provided-node-ip), reported only when different from the Node's, and
//   never when the provider returned none (an empty list would wipe the kubelet's addresses).
// Every other field is kept as it is. Applying the result and calling again yields empty().
NodeUpdate ComputeNodeUpdate(const kube::Json& node, const cloud::InstanceMetadata& metadata,
                             const std::map<std::string, std::string>& extra_labels);
// The two halves of ComputeNodeUpdate without a copy of the Node, for the hot path:
// ApplyNodeUpdate changes providerID, labels and taint in place (true when it changed any);
// AddressUpdate is ComputeNodeUpdate(...).addresses.
bool ApplyNodeUpdate(kube::Json& node, const cloud::InstanceMetadata& metadata,
                     const std::map<std::string, std::string>& extra_labels);
std::optional<std::vector<kube::NodeAddress>> AddressUpdate(
    const kube::Json& node, const cloud::InstanceMetadata& metadata);

// k8s.io/cloud-provider's reconcileNodeLabels (its node controller runs it on every sync of an
// initialised Node): for each pair (beta primary -> GA secondary)
//   failure-domain.beta.kubernetes.io/zone   -> topology.kubernetes.io/zone
//   failure-domain.beta.kubernetes.io/region -> topology.kubernetes.io/region
//   beta.kubernetes.io/instance-type         -> node.kubernetes.io/instance-type
// where the primary exists, the secondary gets the primary's value when it is missing or
// differs (the beta label is the source of truth, as upstream). A missing primary changes
// nothing (the GA label alone is left as it is). Returns only the labels to set; empty = none.
std::map<std::string, std::string> ReconcileNodeLabels(
    const std::map<std::string, std::string>& labels);

// What the provider needs to find the Node's VM (name, providerID, systemUUID, node-ip annotation).
cloud::NodeIdentity NodeIdentityOf(const kube::Json& node);

// The Kubernetes spelling of provider addresses.
std::vector<kube::NodeAddress> ToKubeAddresses(const std::vector<cloud::NodeAddress>& addresses);

// A JSON merge patch (RFC 7386, kAddressesPatchType) for the status subresource that replaces
// status.addresses as a whole, on every server version and whatever the stored Node holds. Not a
// strategic merge patch: its merge key "type" would merge the two InternalIPs of a dual-stack node
// into one and keep stale entries, and its `{"$patch":"replace"}` element is stored as an empty
// address by kube-apiserver when the Node has no addresses yet (the list is then copied from the
// patch as it is, directive included, and decoded into a NodeAddress with empty fields).
kube::Json AddressesPatch(const std::vector<kube::NodeAddress>& addresses);
inline constexpr kube::PatchType kAddressesPatchType = kube::PatchType::kMerge;

// True for nodes this provider may initialise: no providerID yet, or a vsphere:// one.
bool IsOurs(const kube::Json& node);

// The Node as the object of an Event.
kube::ObjectReference NodeRef(const kube::Json& node);

// True only for a vsphere:// providerID: the Nodes the lifecycle controller may look up, delete
// or taint. A Node without providerID (bare metal in a mixed cluster, not initialised, another
// provider's) or with a foreign one is never deleted or tainted by us.
bool HasOurProviderId(const kube::Json& node);

// The Nodes a lifecycle pass acts on: NotReady with our providerID (is its VM gone, or powered
// off?), or Ready with the shutdown taint (to remove). A pass visits no other Node.
bool NeedsLifecycleCheck(const kube::Json& node);

}  // namespace ccm::controllers
