#pragma once
// NodeGetInfo's answer from what this node knows without vCenter: its Node object (read through
// the Kubernetes API) and, as a fallback for the ID, the VM UUID the hypervisor shows in SMBIOS.
//
//  - node_id: the VM UUID (the reference's default, "use-csinode-id"), from the Node's
//    spec.providerID ("vsphere://<uuid>", written by our CCM); when the Node has none yet or the
//    API cannot be asked, from product_serial (what the reference reads).
//  - max_volumes_per_node: $MAX_VOLUMES_PER_NODE when set (1-255, ours), else as the reference:
//    255 with the feature state high-pv-node-density on, 59 without (read at each call).
//  - accessible_topology, without csi-vsphere.conf (the reference's DaemonSet, topology_from_crd):
//    from this Node's CSINodeTopology, which the syncer answers from vCenter
//    (node_topology_wait.h); the CRD not installed: no topology (warned). With csi-vsphere.conf
//    (our earlier DaemonSets): NodeTopology(Node labels, its topology part). Without
//    the Node (API down, Node missing) while topology is configured: Unavailable, so the
//    node-driver-registrar retries instead of registering a node without topology (the kubelet
//    reads it once).
//
// Thread-safety: Get may be called from several gRPC threads at once.

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "csi/core/feature_states.h"
#include "csi/core/topology.h"
#include "csi/core/types.h"
#include "kube/client.h"

namespace ccm::csi::node {

struct NodeInfoOptions {
  std::string node_name;  // $NODE_NAME
  // Shared: the service keeps it for its lifetime. Null: no API access (ID from product_serial
  // only, no topology).
  std::shared_ptr<kube::Client> client;
  std::string product_serial_path = "/sys/class/dmi/id/product_serial";
  TopologyConfig topology;
  // The reference's way (issue 44): the topology comes from the CSINodeTopology object, waited
  // for up to `topology_wait` (NODEGETINFO_WATCH_TIMEOUT_MINUTES).
  bool topology_from_crd = false;
  absl::Duration topology_wait = absl::Minutes(1);
  int64_t max_volumes_per_node = 0;  // 0: by the feature states
  // The feature states (null: none, every feature that is not released is off).
  std::shared_ptr<const FeatureStates> features;
};

struct NodeInfo {
  std::string node_id;
  int64_t max_volumes_per_node = 0;
  Segments topology;  // empty: no accessible_topology
};

class NodeInfoSource {
 public:
  explicit NodeInfoSource(NodeInfoOptions options) : options_(std::move(options)) {}
  absl::StatusOr<NodeInfo> Get() const;

 private:
  NodeInfoOptions options_;
};

}  // namespace ccm::csi::node
