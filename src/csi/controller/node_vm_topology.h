#pragma once
// The syncer's NodeVmTopologySource (csi/core/node_topology.h) over vCenter, from memory only:
// per vCenter the VM stream (vsphere::InventoryCache: one property collector over every VM,
// updated by WaitForUpdatesEx) finds the VM by BIOS UUID and its host, and a PlacementView
// (DatastoreInventory: every host's segment from one tagging batch call, read again every
// refresh interval, and a change stream for hosts added or moved) gives the host's segment.
// Resolving 1,000 nodes therefore costs the streams' set-up and one tag batch, not a request per
// node; a VM that moves, or a tag that changes (after the next full refresh), changes
// generation(), and the controller compares every object again.
// A VM on a host the view does not have yet asks the view for a full refresh (Unavailable until
// then). Thread-safe.

#include <atomic>
#include <string>
#include <vector>

#include "csi/controller/placement_view.h"
#include "csi/core/node_topology.h"
#include "vsphere/inventory_cache.h"

namespace ccm::csi {

struct NodeVmVCenter {
  std::string label;                       // the vCenter's label (HostRecord::vcenter)
  vsphere::InventoryCache* vms = nullptr;  // started by the caller
};

class NodeVmTopologyFromVCenter final : public NodeVmTopologySource {
 public:
  // `view` may be null when no topology is configured (only the VM is looked for). The caches
  // and the view must outlive this object; listeners are added here and removed at destruction.
  NodeVmTopologyFromVCenter(std::vector<NodeVmVCenter> vcenters, PlacementView* view);
  ~NodeVmTopologyFromVCenter() override;
  NodeVmTopology Lookup(const std::string& vm_uuid) const override;
  uint64_t generation() const override;

 private:
  std::vector<NodeVmVCenter> vcenters_;
  std::vector<int> listeners_;
  PlacementView* view_;
  std::atomic<uint64_t> vm_changes_{0};
};

}  // namespace ccm::csi
