#pragma once
// The cloud-node-lifecycle controller (k8s.io/cloud-provider controllers/nodelifecycle). Every
// --node-monitor-period, for every Node managed by this provider (empty or vsphere:// providerID):
//   - Ready: remove the shutdown taint if present.
//   - not Ready (Ready False, Unknown or missing):
//       InstanceExists false (confirmed gone: every vCenter answered) -> DELETE the Node with a
//         uid precondition (a Node re-created under the same name is left alone) and record an
//         Event; never when skip_node_deletion (env SKIP_NODE_DELETION) is set;
//       exists and InstanceShutdown true -> add node.cloudprovider.kubernetes.io/shutdown:NoSchedule.
//   - any error from the provider (vCenter down, slow, failing): delete NOTHING, record a Warning
//     Event saying why (the recorder's spam filter limits repeats), try again next period.
// Writes are conflict-safe (re-read and re-apply on 409).

#include <cstdint>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "cloud/core/instances.h"
#include "common/clock.h"
#include "common/metrics.h"
#include "kube/client.h"
#include "kube/event_recorder.h"
#include "kube/informer.h"

namespace ccm::controllers {

struct NodeLifecycleControllerOptions {
  absl::Duration monitor_period = absl::Seconds(5);  // --node-monitor-period
  bool skip_node_deletion = false;                   // env SKIP_NODE_DELETION set (app reads it)
  Clock* clock = nullptr;                            // null = Clock::Real()
  metrics::Registry* metrics = nullptr;              // nullable
};

class NodeLifecycleController {
 public:
  // `nodes` is the shared Node informer; `recorder` may be null. All must outlive the controller.
  NodeLifecycleController(kube::Client& client, kube::Informer& nodes,
                          cloud::Instances& instances, kube::EventRecorder* recorder,
                          NodeLifecycleControllerOptions options);
  ~NodeLifecycleController();  // Stop()
  NodeLifecycleController(const NodeLifecycleController&) = delete;
  NodeLifecycleController& operator=(const NodeLifecycleController&) = delete;

  // Returns at once; the first pass runs once the informer has synced, then one every period.
  void Start();
  void Stop();  // idempotent; joins the thread

  // One pass over every Node (what the loop runs each period).
  void MonitorNodes();

  // Passes completed so far, and a wait for the n-th (real time); for tests.
  int64_t passes() const;
  bool WaitForPasses(int64_t n, absl::Duration timeout) const;

 private:
  void Run();
  void MonitorNode(const kube::Json& node);
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

  mutable absl::Mutex mu_;
  int64_t passes_ ABSL_GUARDED_BY(mu_) = 0;
  bool started_ ABSL_GUARDED_BY(mu_) = false;
  absl::Time start_time_;  // set by Start() before the thread exists; the schedule's origin
  absl::Notification stop_;
  std::thread thread_;
};

}  // namespace ccm::controllers
