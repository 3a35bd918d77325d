#pragma once
// The cloud-node controller (k8s.io/cloud-provider controllers/node): initialises Nodes that
// carry the uninitialized taint and keeps the addresses of initialised Nodes current.
//
// informer event (a Node added with, or gaining, the uninitialized taint) -> node name ->
// rate-limited work queue -> ProcessNextItem (logs, requeues) ->
// Sync(name). Sync of a Node that still has the uninitialized taint initialises it:
//   1. Instances::GetInstanceMetadata;
//   2. PATCH status.addresses (addresses must be there before the taint goes: the scheduler may
//      place pods as soon as the taint is removed);
//   3. PUT labels, providerID and taint removal with the resourceVersion, re-reading and
//      re-applying ComputeNodeUpdate on 409, so no label written by someone else is lost.
// A failure records a Warning Event on the Node saying why and is retried with backoff. Like the
// Go controller, a Node whose VM is not found is not deleted here (the lifecycle controller owns
// deletion); it is retried.
// Sync of an initialised Node (vsphere:// providerID, no taint) first reconciles its labels as
// cloud-provider's reconcileNodeLabels does (a missing or different GA zone/region/instance-type
// label gets its beta label's value; such a Node is also queued on its add/update events), then
// refreshes status.addresses: the
// provider answers from its cache, and a PATCH is sent only when the addresses changed. Every
// --node-status-update-frequency all initialised Nodes are queued for this; EnqueueAddressRefresh
// queues one (the app calls it when the inventory cache reports a VM change).
//
// The address refresh is gated on Instances::Ready() (every vCenter inventory synced; see
// ReadyGate): a refresh pass that finds it not OK queues nothing, counts
// cloud_node_controller_skipped_refresh_passes_total{reason="vcenter_not_synced"} and logs once
// per outage (warning when it begins, info when it ends); a refresh already queued is dropped
// (OK, not retried with backoff: the next pass after the resync queues it again). No Event: the
// refresh records none per Node either, and the lifecycle controller records the outage's one.
// Initialisation is NOT gated: it fails with Unavailable, records its Event and is retried
// through the queue's backoff, as before.

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
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
#include "kube/rate_limiter.h"
#include "kube/work_queue.h"

namespace ccm::controllers {

struct NodeControllerOptions {
  int workers = 1;                                            // --concurrent-node-syncs
  absl::Duration status_update_frequency = absl::Minutes(5);  // --node-status-update-frequency
  std::map<std::string, std::string> extra_labels;            // --node-labels
  Clock* clock = nullptr;                                     // null = Clock::Real()
  std::unique_ptr<kube::RateLimiter> rate_limiter;            // null = DefaultControllerRateLimiter
  kube::WorkQueueMetricsProvider* queue_metrics = nullptr;    // nullable
  metrics::Registry* metrics = nullptr;                       // nullable
  int update_attempts = 5;  // PUTs per sync before giving up to the queue's backoff
};

class NodeController {
 public:
  // Registers its handlers on `nodes` (the shared Node informer). `recorder` may be null.
  // Everything passed in must outlive the controller; the destructor removes the handlers.
  NodeController(kube::Client& client, kube::Informer& nodes, cloud::Instances& instances,
                 kube::EventRecorder* recorder, NodeControllerOptions options);
  ~NodeController();  // Stop()
  NodeController(const NodeController&) = delete;
  NodeController& operator=(const NodeController&) = delete;

  // Returns at once; workers and the refresh loop start once the informer has synced.
  void Start();
  // Shuts the queue down and joins every thread. Idempotent.
  void Stop();

  // Queues an address refresh of one Node (no-op for unknown or uninitialised Nodes).
  void EnqueueAddressRefresh(const std::string& node_name);

  // One worker step: Get, Sync, Forget or AddRateLimited, Done. False once shut down.
  bool ProcessNextItem();
  // Initialises or refreshes the Node `name` (from the informer's store).
  absl::Status Sync(const std::string& name);

  // Refresh passes (all initialised Nodes queued, or skipped while the provider is not Ready) so
  // far, and a wait for the n-th (real time); for tests.
  int64_t refresh_passes() const;
  bool WaitForRefreshPasses(int64_t n, absl::Duration timeout) const;

 private:
  void RefreshPass();
  void EnqueueIfUninitialized(const kube::Json& node);
  absl::Status Initialize(const kube::Json& node);
  // cloud-provider's reconcileNodeLabels (ReconcileNodeLabels) on an initialised Node: one PUT
  // when a GA label is missing or differs from its beta label, none otherwise.
  absl::Status ReconcileLabels(const kube::Json& node);
  absl::Status RefreshAddresses(const kube::Json& node);
  void Warn(const kube::Json& node, absl::string_view reason, absl::string_view message);
  void CountSync(absl::string_view kind, bool ok);

  kube::Client& client_;
  kube::Informer& nodes_;
  kube::Informer::HandlerId handler_id_ = 0;
  cloud::Instances& instances_;
  kube::EventRecorder* recorder_;
  const int workers_;
  const absl::Duration refresh_every_;
  const std::map<std::string, std::string> extra_labels_;
  const int update_attempts_;
  Clock& clock_;
  kube::WorkQueue queue_;

  metrics::Family* init_latency_ = nullptr;
  metrics::Family* syncs_ = nullptr;
  metrics::Family* address_updates_ = nullptr;
  std::unique_ptr<ReadyGate> refresh_gate_;  // used by RefreshPass only

  mutable absl::Mutex mu_;
  // When each uninitialised Node was first seen (initialisation latency).
  absl::flat_hash_map<std::string, absl::Time> first_seen_ ABSL_GUARDED_BY(mu_);
  int64_t refresh_passes_ ABSL_GUARDED_BY(mu_) = 0;

  kube::ControllerRunner runner_;  // last: its threads stop before the members above go
};

}  // namespace ccm::controllers
