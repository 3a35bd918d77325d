#pragma once
// The service controller (k8s.io/cloud-provider controllers/service) for Services of type
// LoadBalancer, on a cloud::LoadBalancer (the NSX-T one). For each Service, queued on every
// change, by `workers` threads (--concurrent-service-syncs):
//   - type LoadBalancer, not being deleted, spec.loadBalancerClass unset: the finalizer
//     service.kubernetes.io/load-balancer-cleanup is added first, then EnsureLoadBalancer with
//     the Nodes that may carry traffic (Ready, without the label
//     node.kubernetes.io/exclude-from-external-load-balancers or the cluster autoscaler's
//     ToBeDeletedByClusterAutoscaler taint), then status.loadBalancer.ingress
//     is written when it differs. Events EnsuringLoadBalancer / EnsuredLoadBalancer.
//   - being deleted, or no longer of type LoadBalancer, with the finalizer:
//   EnsureLoadBalancerDeleted,
//     then status.loadBalancer cleared and the finalizer removed. Events DeletingLoadBalancer /
//     DeletedLoadBalancer.
//   - a failure: a Warning Event SyncLoadBalancerFailed with the cloud's message, and the Service
//     is retried with backoff (5 s doubling to 300 s, as the Go controller); nothing is deleted
//     because a call failed.
// When the set of such Nodes (or their addresses) changes, and every --node-sync-period,
// UpdateLoadBalancer moves every load balancer's backends. At start, once the informers have
// synced, `cleanup` (if set) gets the Services of type LoadBalancer that exist, to remove what
// belongs to Services deleted while the controller was down.

#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "cloud/core/load_balancer.h"
#include "common/clock.h"
#include "kube/client.h"
#include "kube/controller_runner.h"
#include "kube/event_recorder.h"
#include "kube/informer.h"
#include "kube/work_queue.h"

namespace ccm::controllers {

inline constexpr char kLoadBalancerCleanupFinalizer[] =
    "service.kubernetes.io/load-balancer-cleanup";

struct ServiceControllerOptions {
  std::string cluster_name = "kubernetes";
  int workers = 1;  // --concurrent-service-syncs
  absl::Duration node_sync_period = absl::Seconds(100);
  absl::Duration retry_base = absl::Seconds(5), retry_max = absl::Seconds(300);
  // Called once after the informers synced, with "ns/name" of every Service of type LoadBalancer.
  std::function<absl::Status(const std::set<std::string>&)> cleanup;
  kube::WorkQueueMetricsProvider* queue_metrics = nullptr;  // nullable: workqueue_* name=service
  Clock* clock = nullptr;                                   // null = real
};

class ServiceController {
 public:
  // All must outlive the controller; `recorder` may be null.
  ServiceController(kube::Client& client, kube::Informer& services, kube::Informer& nodes,
                    cloud::LoadBalancer& lb, kube::EventRecorder* recorder,
                    ServiceControllerOptions options);
  ~ServiceController();  // Stop()
  ServiceController(const ServiceController&) = delete;
  ServiceController& operator=(const ServiceController&) = delete;

  void Start();
  void Stop();

  // One Service ("ns/name"); what a worker runs. Not concurrently for the same key.
  absl::Status SyncService(const std::string& key);
  // UpdateLoadBalancer of every load balancer with the current Nodes; returns how many failed.
  int SyncNodes();

  int64_t synced() const;  // SyncService calls that succeeded
  bool WaitForSynced(int64_t n, absl::Duration timeout) const;

 private:
  bool ProcessNextItem();
  std::vector<kube::Json> LbNodes() const;
  absl::Status Ensure(const kube::Json& service);
  absl::Status Delete(const kube::Json& service);
  absl::Status SetFinalizer(const kube::Json& service, bool present);
  // Returns the Service as stored after the write (the one given when nothing changed).
  absl::StatusOr<kube::Json> SetStatus(const kube::Json& service,
                                       const cloud::LoadBalancerStatus& status);
  void Event(const kube::Json& service, bool warning, const std::string& reason,
             const std::string& message);
  void OnNodeChange();

  kube::Client& client_;
  kube::Informer& services_;
  kube::Informer& nodes_;
  cloud::LoadBalancer& lb_;
  kube::EventRecorder* recorder_;
  const ServiceControllerOptions options_;
  Clock& clock_;
  kube::WorkQueue queue_;

  mutable absl::Mutex mu_;
  int64_t synced_ ABSL_GUARDED_BY(mu_) = 0;
  std::string node_fingerprint_ ABSL_GUARDED_BY(mu_);
  bool cleaned_up_ ABSL_GUARDED_BY(mu_) = false;

  kube::ControllerRunner runner_;  // last: its threads stop before the members above go
};

// The pure parts, for tests.
bool WantsLoadBalancer(const kube::Json& service);  // type LoadBalancer, no loadBalancerClass
bool NeedsCleanup(const kube::Json& service);       // finalizer and (deleting or not wanted)
bool CarriesTraffic(const kube::Json& node);
bool HasCleanupFinalizer(const kube::Json& service);  // Ready, not excluded, not being removed

}  // namespace ccm::controllers
