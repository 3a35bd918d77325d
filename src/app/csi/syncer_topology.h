#pragma once
// The syncer's CSINodeTopology controller and what it reads from vCenter (issue 44), started
// while the syncer leads: per vCenter a VM stream (vsphere::InventoryCache) and, with topology
// configured, a tagging client; one DatastoreInventory for every host's segment (no privilege
// check: the syncer places nothing); the controller (csi/syncer/node_topology_controller.h) with
// Events on the objects.

#include <memory>
#include <vector>

#include "absl/time/time.h"
#include "cloud/config/config.h"
#include "csi/controller/datastore_inventory.h"
#include "csi/controller/node_vm_topology.h"
#include "csi/syncer/node_topology_controller.h"
#include "kube/client.h"
#include "kube/event_recorder.h"
#include "kube/kube_event_sink.h"
#include "vsphere/client.h"
#include "vsphere/inventory_cache.h"
#include "vsphere/tagging.h"

namespace ccm::app {

class SyncerNodeTopology {
 public:
  // `vim[i]` is the session of config.vcenters[i]; all arguments must outlive this object.
  SyncerNodeTopology(const cloud::Config& config, std::vector<vsphere::Client*> vim,
                     const vsphere::CredentialSource& credentials, kube::Client& client);
  ~SyncerNodeTopology();  // Stop()
  void Start();
  // vCenter requests of the tagging clients end by `deadline` (the sessions are the caller's).
  void SetDeadline(absl::Time deadline);
  void Stop();

 private:
  std::vector<std::unique_ptr<vsphere::InventoryCache>> vms_;
  std::vector<std::unique_ptr<vsphere::TaggingClient>> tagging_;
  std::unique_ptr<csi::DatastoreInventory> hosts_;
  std::unique_ptr<csi::NodeVmTopologyFromVCenter> source_;
  std::unique_ptr<kube::KubeEventSink> sink_;
  std::unique_ptr<kube::EventRecorder> events_;
  std::unique_ptr<csi::syncer::NodeTopologyController> controller_;
  bool stopped_ = false;
};

}  // namespace ccm::app
