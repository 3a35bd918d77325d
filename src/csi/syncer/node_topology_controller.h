#pragma once
// The syncer's CSINodeTopology controller (issue 44; the reference's csinodetopology controller
// in its syncer): for every CSINodeTopology, the status DesiredNodeTopology() gives for the VM
// its spec.nodeuuid names, written with a whole-object update (the CRD has no status
// subresource; the reference's controller RBAC has update, not patch) and told by a Normal
// TopologyRetrievalSucceeded or Warning TopologyRetrievalFailed Event on the object, as the
// reference records them.
//
// Unlike the reference, which never looks at an object again once it is Success, the status
// follows vCenter: whenever the source's generation changes (a VM moved to another host, tags
// read again after the inventory's refresh interval), every object is compared again in memory
// and only those whose answer changed are written. No vCenter request is made per node: the
// source answers from the inventory stream. Objects the source cannot answer yet (Unavailable)
// are retried every `recheck`. Runs while the syncer leads.

#include <memory>
#include <set>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "csi/core/node_topology.h"
#include "csi/core/topology.h"
#include "kube/client.h"
#include "kube/event_recorder.h"
#include "kube/informer.h"

namespace ccm::csi::syncer {

struct NodeTopologyControllerOptions {
  TopologyConfig topology;                    // the syncer's csi-vsphere.conf [Labels]
  absl::Duration recheck = absl::Seconds(2);  // generation poll and Unavailable retry
  kube::EventRecorder* events = nullptr;      // null: no Events
};

struct NodeTopologyStats {
  uint64_t writes = 0;     // status updates that succeeded
  uint64_t conflicts = 0;  // updates refused as stale (the next event retries)
};

class NodeTopologyController {
 public:
  // `client` and `source` must outlive the controller.
  NodeTopologyController(kube::Client& client, const NodeVmTopologySource& source,
                         NodeTopologyControllerOptions options);
  ~NodeTopologyController();  // Stop()
  void Start();
  void Stop();
  NodeTopologyStats stats() const;

 private:
  void Work();
  void Reconcile(const std::string& name);
  void Mark(const std::string& name);

  kube::Client& client_;
  const NodeVmTopologySource& source_;
  NodeTopologyControllerOptions options_;
  kube::Informer informer_;
  mutable absl::Mutex mu_;
  std::set<std::string> dirty_ ABSL_GUARDED_BY(mu_);
  std::set<std::string> waiting_ ABSL_GUARDED_BY(mu_);  // Unavailable: retried each recheck
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  NodeTopologyStats stats_ ABSL_GUARDED_BY(mu_);
  std::thread worker_;
};

}  // namespace ccm::csi::syncer
