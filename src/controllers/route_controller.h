#pragma once
// The route controller (k8s.io/cloud-provider controllers/route), run when
// --allocate-node-cidrs and --configure-cloud-routes are on and the provider has Routes. Every
// --route-reconciliation-period (at once after the Node informer has synced):
//   1. ListRoutes(cluster). An error: nothing is created or deleted this pass (logged).
//   2. PlanRoutes (cloud/core/route_plan.h): a route for every Node pod CIDR that has none,
//      created in parallel (at most `workers` at a time; the nameHint is the Node's UID); a
//      route of this cluster's CIDRs that serves no current (Node, pod CIDR) deleted. A failed
//      create records a Warning Event FailedToCreateRoute on the Node, as the Go controller does;
//      it is retried next pass.
//   3. Each Node's NetworkUnavailable condition: False/RouteCreated ("RouteController created a
//      route") when every route of its pod CIDRs exists, True/NoRouteCreated ("RouteController
//      failed to create a route") otherwise (also for a Node without pod CIDRs yet); written
//      only when it changes, with a strategic merge patch of nodes/status (the condition's merge
//      key is its type: the kubelet's conditions stay).

#include <cstdint>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "cloud/core/route_plan.h"
#include "cloud/core/routes.h"
#include "common/clock.h"
#include "common/ip.h"
#include "kube/client.h"
#include "kube/controller_runner.h"
#include "kube/event_recorder.h"
#include "kube/informer.h"

namespace ccm::controllers {

struct RouteControllerOptions {
  std::string cluster_name = "kubernetes";    // --cluster-name
  std::vector<IpNet> cluster_cidrs;           // --cluster-cidr
  absl::Duration period = absl::Seconds(10);  // --route-reconciliation-period
  int workers = 16;                           // creates and deletes at once
  Clock* clock = nullptr;                     // null = real
};

struct RoutePassResult {
  int created = 0, create_failed = 0, deleted = 0, delete_failed = 0, conditions_written = 0;
  absl::Status listed;  // ListRoutes' answer
};

class RouteController {
 public:
  // All must outlive the controller; `recorder` may be null.
  RouteController(kube::Client& client, kube::Informer& nodes, cloud::Routes& routes,
                  kube::EventRecorder* recorder, RouteControllerOptions options);
  ~RouteController();  // Stop()
  RouteController(const RouteController&) = delete;
  RouteController& operator=(const RouteController&) = delete;

  void Start();
  void Stop();
  // One pass (what the loop runs each period); not concurrently with itself.
  RoutePassResult Reconcile();

  int64_t passes() const;
  bool WaitForPasses(int64_t n, absl::Duration timeout) const;
  RoutePassResult last() const;

 private:
  std::vector<cloud::RouteNode> Nodes() const;
  // Runs `jobs` on up to options_.workers threads.
  void RunAll(std::vector<std::function<void()>> jobs);
  void CreateRoutes(const std::vector<cloud::RouteNode>& nodes, const cloud::RoutePlan& plan,
                    std::vector<std::vector<bool>>& created, RoutePassResult& result);
  void DeleteRoutes(const cloud::RoutePlan& plan, RoutePassResult& result);
  bool WriteCondition(const cloud::RouteNode& node, const std::string& status);

  kube::Client& client_;
  kube::Informer& nodes_;
  cloud::Routes& routes_;
  kube::EventRecorder* recorder_;
  const RouteControllerOptions options_;
  Clock& clock_;

  mutable absl::Mutex mu_;
  int64_t passes_ ABSL_GUARDED_BY(mu_) = 0;
  RoutePassResult last_ ABSL_GUARDED_BY(mu_);

  kube::ControllerRunner runner_;  // last: its thread stops before the members above go
};

}  // namespace ccm::controllers
