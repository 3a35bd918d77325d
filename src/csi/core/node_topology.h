#pragma once
// CSINodeTopology (csinodetopologies.cns.vmware.com/v1alpha1), the reference's way of telling a
// node plugin its topology (issue 44), as pure decisions:
//  - the node plugin (no csi-vsphere.conf, no vCenter credentials) creates the object named after
//    its Node with spec {nodeID: <Node name>, nodeuuid: <VM UUID>}, or resets status.status of
//    an existing one, and waits up to NODEGETINFO_WATCH_TIMEOUT_MINUTES for the syncer's answer;
//  - the syncer finds the VM by UUID, reads the topology categories' tags of its host and the
//    host's ancestors, nearest first (host_topology.h: as placement reads the host), and writes
//    status {status: Success|Error, errorMessage, topologyLabels: [{key, value}]};
//  - NodeGetInfo answers the labels as accessible_topology segments.
// The keys are TopologyKeys(config): "topology.csi.vmware.com/<category>" with
// topology-categories, the zone/region keys with [Labels] zone and region.

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "csi/core/topology.h"
#include "csi/core/types.h"

namespace ccm::csi {

inline constexpr char kNodeTopologySuccess[] = "Success";
inline constexpr char kNodeTopologyError[] = "Error";
inline constexpr char kEnvNodeGetInfoWatchTimeout[] = "NODEGETINFO_WATCH_TIMEOUT_MINUTES";

struct NodeTopologyStatus {
  std::string status;                                       // "", Success or Error
  std::string error_message;                                // with Error only
  std::vector<std::pair<std::string, std::string>> labels;  // topologyLabels, in order
  bool operator==(const NodeTopologyStatus&) const = default;
};

// NODEGETINFO_WATCH_TIMEOUT_MINUTES as the reference reads it: 1 to 2 minutes, default 1; a value
// out of range or not a number is the default with a warning (returned, for the log).
struct WatchTimeout {
  int minutes = 1;
  std::string warning;
};
WatchTimeout NodeGetInfoWatchTimeout(const std::optional<std::string>& env_value);

// NodeGetInfo's answer from the status: the segments on Success (empty labels: no topology),
// Internal naming the Node and the syncer's message on Error, nullopt while not answered yet.
std::optional<absl::StatusOr<Segments>> NodeTopologyAnswer(const std::string& node,
                                                           const NodeTopologyStatus& status);

// What the syncer knows of a node's VM and its host.
struct NodeVmTopology {
  // OK: the VM and its host's segment are known. NotFound: no vCenter has a VM with the UUID.
  // FailedPrecondition: the host lacks (or has two) tags of a category (the message says which).
  // Unavailable: cannot tell now (an inventory not loaded, a vCenter down): nothing is written.
  absl::Status state;
  std::string vm;    // "vm-42 (k8s-node-1) on host-21 (esx-1) in vCenter vc-1", for messages
  Segments segment;  // with OK: the host's segment (keys TopologyKeys(config))
};

// Where the syncer learns a node VM's topology (the real one: csi/controller/node_vm_topology.h,
// from memory: the VM stream and the host segments). Thread-safe.
class NodeVmTopologySource {
 public:
  virtual ~NodeVmTopologySource() = default;
  virtual NodeVmTopology Lookup(const std::string& vm_uuid) const = 0;
  // Changes whenever an answer may have changed (a VM moved, tags read again).
  virtual uint64_t generation() const = 0;
};

// The status the syncer writes for `node` (the object's name), nullopt when it must wait
// (Unavailable, or spec.nodeuuid still empty). Follows the reference: no topology configured is
// Success without labels ("Not a topology aware cluster."), a [Labels] zone without region (or
// the reverse) is an Error naming the section, a VM not found or a host without a tag of some
// category is an Error with the reason. Labels in TopologyKeys order.
std::optional<NodeTopologyStatus> DesiredNodeTopology(const std::string& node,
                                                      const std::string& node_uuid,
                                                      const TopologyConfig& config,
                                                      const NodeVmTopology& vm);

}  // namespace ccm::csi
