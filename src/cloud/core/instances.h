#pragma once
// The provider interface the node controllers call (InstancesV2 of k8s.io/cloud-provider's
// cloud.go, vSphere flavour). Implemented on the vSphere layer (cloud/vsphere) and by
// FakeInstances (fake_instances.h) for controller tests.
//
// THE CONTRACT THAT MATTERS: errors drive deletion.
//  - "confirmed gone" (InstanceExists == false, or NotFound from the other two methods) ONLY when
//    every configured vCenter answered and none has the VM (MatchNodeToVm's NotFound). The node
//    lifecycle controller then deletes the Node.
//  - Unavailable (or any other error) when a vCenter could not be asked: down, timeout, auth
//    failure, session lost, partial answer. Callers retry with backoff and delete NOTHING.
//  - FailedPrecondition when the VM exists but the Node cannot be initialised yet (no suitable
//    IP, missing zone tag, ambiguous match...): the message is meant for a Kubernetes Event.
//  - InvalidArgument for a node that is not ours (foreign providerID): leave it alone.
// Ready() says whether the answers can be trusted at all right now: the periodic passes (node
// lifecycle, address refresh) skip their work while it is not OK instead of asking per Node and
// getting Unavailable for each.
// Implementations are thread-safe: the controllers call them from several workers.

#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "cloud/core/addresses.h"
#include "cloud/core/node_identity.h"

namespace ccm::cloud {

struct InstanceMetadata {
  // spec.providerID: "vsphere://<bios uuid>" (FormatProviderId). Set only when the Node has none.
  std::string provider_id;
  // Labels node.kubernetes.io/instance-type and beta.kubernetes.io/instance-type
  // (FormatInstanceType).
  std::string instance_type;
  // status.addresses, in order: Hostname, then InternalIP/ExternalIP per IP family
  // (SelectNodeAddresses). Contains the kubelet's provided node IP when the Node has one.
  std::vector<NodeAddress> node_addresses;
  // Labels topology.kubernetes.io/zone + failure-domain.beta.kubernetes.io/zone and the same for
  // region (ResolveZoneRegion). Empty = zones not configured: no zone/region labels.
  std::string zone;
  std::string region;
  // Any further labels; like --node-labels extras they never overwrite an existing label.
  std::map<std::string, std::string> additional_labels;
  bool operator==(const InstanceMetadata&) const = default;
};

class Instances {
 public:
  virtual ~Instances() = default;

  // true: the VM exists (in any power state). false: confirmed gone (see the contract above).
  // Error: could not tell; the caller must not delete the Node.
  virtual absl::StatusOr<bool> InstanceExists(const NodeIdentity& node) = 0;

  // true: the VM exists and is not poweredOn (the lifecycle controller adds the shutdown taint
  // node.cloudprovider.kubernetes.io/shutdown:NoSchedule). NotFound: confirmed gone.
  virtual absl::StatusOr<bool> InstanceShutdown(const NodeIdentity& node) = 0;

  // Everything node initialisation and the periodic address refresh write. NotFound: confirmed
  // gone. Must not call vCenter when cached data is current (the refresh runs for every node).
  virtual absl::StatusOr<InstanceMetadata> GetInstanceMetadata(const NodeIdentity& node) = 0;

  // OK when every configured vCenter's VM inventory is synced, i.e. when the three methods above
  // can answer from current data (they may still fail for one node). Otherwise Unavailable, the
  // message naming every vCenter that is not synced and why ("vCenter east: inventory not
  // synced: ..."). Not synced = before the first full load, or after the update stream broke
  // until the resync completes. A Node's VM may be on any vCenter, so one unsynced vCenter makes
  // the whole provider not Ready: callers must then delete nothing and taint nothing. Cheap (no
  // vCenter request): callers may ask before every pass.
  virtual absl::Status Ready() const = 0;
};

}  // namespace ccm::cloud
