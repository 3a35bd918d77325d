#pragma once
// What vsphere-cloud-controller-manager runs only while it leads: the controllers (one
// ControllerSet per round) and their Kubernetes clients. A live cloud config change ends the
// round (controllers stopped, vCenters logged out) and the next one starts with the new config;
// the Lease is kept all along.

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "app/ccm/app_metrics.h"
#include "app/ccm/controller_set.h"
#include "app/ccm/live_vcenters.h"
#include "app/ccm/options.h"
#include "cloud/config/config.h"
#include "common/metrics.h"
#include "kube/client.h"
#include "kube/informer.h"
#include "vsphere/client.h"

namespace ccm::app {

class ControllerRounds {
 public:
  // `config` is read at the start of every round; Reload's `apply` replaces it in between.
  ControllerRounds(const Options& o, const cloud::Config& config,
                   const std::map<std::string, std::string>& env, kube::RestClient& client,
                   vsphere::CredentialSource& creds, metrics::Registry& registry,
                   QueueMetricsProvider& queue_metrics, std::shared_ptr<LiveVCenters> live,
                   cloud::SecretWatcher* secrets = nullptr);

  // OK unless running and the Node list/watch has not synced (Kubernetes API not answering).
  absl::Status KubeHealth() const;

  // Blocks until `stop` is notified, round after round.
  void Run(const absl::Notification& stop);

  // From the config reloader: `apply` (it replaces the config this object reads) runs before the
  // next round, which starts at once when a round is running. Never blocks.
  void Reload(std::function<void()> apply) ABSL_LOCKS_EXCLUDED(reload_mu_);

 private:
  // One round of Run(). Returns whether to run another: a reload ended it, not `outer`.
  bool RunRound(const absl::Notification& outer);
  // The config change Reload() queued, if any, before this round reads the config.
  void ApplyPendingReload() ABSL_LOCKS_EXCLUDED(reload_mu_);
  // This round's clients and controllers, started.
  void StartSet();

  const Options& o_;
  const cloud::Config& config_;
  const std::map<std::string, std::string>& env_;
  kube::RestClient& client_;  // the shared informers' (and the root of the per-controller views)
  vsphere::CredentialSource& creds_;
  metrics::Registry& registry_;
  QueueMetricsProvider& queue_metrics_;
  std::shared_ptr<LiveVCenters> live_;
  cloud::SecretWatcher* secrets_;  // nullable: [NSXT] secret-name
  std::unique_ptr<kube::RestClient> events_client_, node_client_, lifecycle_client_, routes_client_,
      services_client_;
  std::unique_ptr<ControllerSet> set_;  // kept until the next round (the health check may read it)
  std::atomic<kube::Informer*> nodes_ptr_{nullptr};  // for the health check thread
  absl::Mutex reload_mu_;
  std::function<void()> pending_apply_ ABSL_GUARDED_BY(reload_mu_);
};

}  // namespace ccm::app
