#pragma once
// The cloud-node-lifecycle controller (k8s.io/cloud-provider controllers/nodelifecycle). Every
// --node-monitor-period:
//   - Ready, providerID empty or vsphere://: remove the shutdown taint if present.
//   - not Ready (Ready False, Unknown or missing), and ONLY with a vsphere:// providerID (a Node
//     without one may be bare metal or another provider's, and one with a foreign providerID is
//     not ours: no look-up, no deletion, no taint, not counted as waiting during an outage):
//       InstanceExists false (confirmed gone: every vCenter answered) -> DELETE the Node with a
//         uid precondition (a Node re-created under the same name is left alone) and record an
//         Event; never when skip_node_deletion (env SKIP_NODE_DELETION) is set;
//       exists and InstanceShutdown true -> add
//       node.cloudprovider.kubernetes.io/shutdown:NoSchedule.
//   - any error from the provider (vCenter down, slow, failing): delete NOTHING, record a Warning
//     Event saying why (the recorder's spam filter limits repeats), try again next period.
// Writes are conflict-safe (re-read and re-apply on 409).
//
// Gated on the provider's Instances::Ready() (every vCenter inventory synced), see ReadyGate:
//   - start-up: no pass runs before the Node informer AND every vCenter inventory have synced
//     (polled every 100 ms of real time); the first pass then runs at once.
//   - later, a pass that finds Ready() not OK checks no NotReady Node (its VM may be on the
//     unsynced vCenter: NEVER delete or taint then) and asks the provider nothing. Ready Nodes
//     are still handled (removing the shutdown taint needs no provider answer). The skip is
//     counted in cloud_node_lifecycle_controller_skipped_passes_total{reason="vcenter_not_synced"}
//     and logged once per outage (a warning when it begins, an info line when it ends).
//   - Event choice: ONE Warning Event per outage, not one per Node per period. An Event needs an
//     involved object and the controller has none of its own, so it goes on the NotReady Node
//     that `kubectl describe` users look at: the first (by name) of those the skipped pass could
//     not check; its message says how many others wait too. Reason NodeCheckFailed, as for a
//     failed per-Node check (same meaning: "could not ask, nothing is deleted", so the same
//     alerts match). At most one such Event per outage_event_interval, so a flapping vCenter
//     does not record one per flap. Passes skipped with no NotReady Node record none.

#include <cstdint>
#include <memory>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "cloud/core/instances.h"
#include "common/clock.h"
#include "common/metrics.h"
#include "controllers/ready_gate.h"
#include "kube/client.h"
#include "kube/controller_runner.h"
#include "kube/event_recorder.h"
#include "kube/informer.h"

namespace ccm::controllers {

struct NodeLifecycleControllerOptions {
  absl::Duration monitor_period = absl::Seconds(5);  // --node-monitor-period
  bool skip_node_deletion = false;                   // env SKIP_NODE_DELETION set (app reads it)
  Clock* clock = nullptr;                            // null = Clock::Real()
  metrics::Registry* metrics = nullptr;              // nullable
  // Minimum time (on `clock`) between two "vCenter inventory not synced" Events.
  absl::Duration outage_event_interval = absl::Minutes(10);
};

class NodeLifecycleController {
 public:
  // `nodes` is the shared Node informer; `recorder` may be null. All must outlive the controller.
  NodeLifecycleController(kube::Client& client, kube::Informer& nodes, cloud::Instances& instances,
                          kube::EventRecorder* recorder, NodeLifecycleControllerOptions options);
  ~NodeLifecycleController();  // Stop()
  NodeLifecycleController(const NodeLifecycleController&) = delete;
  NodeLifecycleController& operator=(const NodeLifecycleController&) = delete;

  // Returns at once; the first pass runs once the informer and every vCenter inventory have
  // synced (Instances::Ready), then one every period.
  void Start();
  void Stop();  // idempotent; joins the thread

  // One pass (what the loop runs each period) over the Nodes it acts on: NotReady with our
  // providerID, Ready with the shutdown taint (NeedsLifecycleCheck; the informer keeps that
  // selection, so a pass over 10,000 Ready Nodes decodes none). Skipped in part while the
  // provider is not Ready (see above). Not to be called concurrently with itself.
  void MonitorNodes();

  // Passes completed so far (skipped ones included, the start-up wait not), and a wait for the
  // n-th (real time); for tests.
  int64_t passes() const;
  bool WaitForPasses(int64_t n, absl::Duration timeout) const;

 private:
  void MonitorNode(const kube::Json& node);
  void MonitorReadyNode(const kube::Json& node);
  // The part of a pass that runs while the provider is not Ready.
  void SkipPass(const ReadyGate::Result& gate);
  void Warn(const kube::Json& node, absl::string_view reason, absl::string_view message);
  void Count(absl::string_view action);

  kube::Client& client_;
  kube::Informer& nodes_;
  cloud::Instances& instances_;
  kube::EventRecorder* recorder_;
  const absl::Duration period_;
  const bool skip_deletion_;
  Clock& clock_;
  metrics::Family* actions_ = nullptr;
  const absl::Duration outage_event_interval_;
  // Used by MonitorNodes only (one pass at a time).
  std::unique_ptr<ReadyGate> gate_;
  // The Nodes a pass visits (NeedsLifecycleCheck), kept by the informer with its store.
  kube::Informer::SelectionId checked_ = 0;
  bool outage_event_due_ = false;  // this outage has not recorded its Event yet
  absl::Time last_outage_event_ = absl::InfinitePast();

  mutable absl::Mutex mu_;
  int64_t passes_ ABSL_GUARDED_BY(mu_) = 0;

  kube::ControllerRunner runner_;  // last: its thread stops before the members above go
};

}  // namespace ccm::controllers
