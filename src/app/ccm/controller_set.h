#pragma once
// The node controllers of vsphere-cloud-controller-manager and everything they run on, wired once
// for both the binary (manager.cc, one ControllerSet per leadership round or config reload) and
// the end-to-end tests: the vCenters of a config, VSphereInstances over them, the Node informer
// (controllers::NodeCacheOptions) with its providerID index, the EventRecorder, NodeController
// and NodeLifecycleController, and the inventory listener that refreshes a Node's addresses as
// soon as its VM changes. Time is injected (Clock*), the Kubernetes clients are passed in.

#include <map>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "app/ccm/app_metrics.h"
#include "app/ccm/live_vcenters.h"
#include "cloud/config/config.h"
#include "cloud/credentials/credential_store.h"
#include "cloud/nsxt/nsxt_connection.h"
#include "cloud/nsxt/nsxt_load_balancer.h"
#include "cloud/nsxt/nsxt_routes.h"
#include "cloud/vsphere/vcenter.h"
#include "cloud/vsphere/vsphere_instances.h"
#include "common/clock.h"
#include "common/metrics.h"
#include "controllers/node_cache.h"
#include "controllers/node_controller.h"
#include "controllers/node_lifecycle_controller.h"
#include "controllers/route_controller.h"
#include "controllers/service_controller.h"
#include "kube/client.h"
#include "kube/event_recorder.h"
#include "kube/informer.h"
#include "kube/kube_event_sink.h"
#include "vsphere/credential_source.h"

namespace ccm::app {

// Who talks to the API server. The binary passes one rate-limited view per user
// (RestClient::WithOwnRateLimit, as client-go's ClientBuilder gives every controller its own
// client), so Events never delay a Node write; a test may pass the same client four times.
struct ControllerClients {
  kube::Client& informers;           // the Node list/watch
  kube::Client& events;              // the EventRecorder's POST/PATCH
  kube::Client& node;                // NodeController
  kube::Client& lifecycle;           // NodeLifecycleController
  kube::Client* routes = nullptr;    // RouteController (null: `node`'s)
  kube::Client* services = nullptr;  // ServiceController (null: `node`'s)
};

struct ControllerSetOptions {
  bool node_controller = true;       // "cloud-node"
  bool lifecycle_controller = true;  // "cloud-node-lifecycle"
  int concurrent_node_syncs = 1;
  absl::Duration node_status_update_frequency = absl::Minutes(5);
  absl::Duration node_monitor_period = absl::Seconds(5);
  std::map<std::string, std::string> node_labels;
  bool skip_node_deletion = false;  // SKIP_NODE_DELETION
  std::string event_host;           // the Events' source.host
  Clock* clock = nullptr;           // the controllers' (periods, backoff); null = real
  Clock* recorder_clock = nullptr;  // the EventRecorder's (retries, drain); null = real
  // Nullable. vCenter request metrics, controller metrics, events_dropped_total.
  metrics::Registry* metrics = nullptr;
  QueueMetricsProvider* queue_metrics = nullptr;  // nullable
  // If set, holds the running vCenters from Start() until just before they log out in Stop()
  // (the binary's vCenter gauges and health checks read it).
  std::shared_ptr<LiveVCenters> live_vcenters;
  // Stop(): Flush() the recorder (every queued Event sent or given up, for at most 10 s) before
  // shutting it down.
  bool flush_events_on_stop = false;
  // Stop(): queued Events still unsent this long after the recorder's shutdown are dropped.
  absl::Duration event_drain_on_stop = absl::Seconds(5);
  // The inventory stream's WaitForUpdatesEx maxWaitSeconds (tests of silent faults shorten it).
  int vcenter_max_wait_seconds = cloud::VCenterOptions{}.max_wait_seconds;
  absl::Duration vcenter_hang_timeout = cloud::kDefaultHangTimeout;
  // "route": --allocate-node-cidrs, --configure-cloud-routes and --controllers allow it. It then
  // runs when the config has [Route] (and [NSXT]); without, one line says why not (as the Go
  // binary's "Couldn't get routes interface").
  bool route_controller = false;
  std::string cluster_name = "kubernetes";
  std::vector<IpNet> cluster_cidrs;
  absl::Duration route_period = absl::Seconds(10);
  // "service": --controllers allows it and ENABLE_ALPHA_NSXT_LB is set. It then runs when the
  // config has [LoadBalancer] and [NSXT] (the Go provider's alpha NSX-T load balancer).
  bool service_controller = false;
  int concurrent_service_syncs = 1;
  absl::Duration node_sync_period = absl::Seconds(100);
  // The Secret informer, for [NSXT] secret-name (nullable when no Secret is watched).
  cloud::SecretWatcher* secrets = nullptr;
};

class ControllerSet {
 public:
  // `config`, `creds` and the clients must outlive this object.
  ControllerSet(const cloud::Config& config, vsphere::CredentialSource& creds,
                ControllerClients clients, ControllerSetOptions options);
  ~ControllerSet();  // Stop()
  ControllerSet(const ControllerSet&) = delete;
  ControllerSet& operator=(const ControllerSet&) = delete;

  // Starts the vCenters (sessions and inventory caches), the informer and the enabled controllers
  // (their workers wait for the Node cache). Never blocks on vCenter or the API server: each
  // vCenter's VM-change listener is registered by a background thread once its inventory has
  // loaded (so it sees changes only), and one that never loads does not hold up the others.
  void Start();
  // Idempotent. Stops users before what they use: listeners, lifecycle, node controller,
  // informer, recorder (drained), then logs out of every vCenter.
  void Stop();

  // Waits until every vCenter's VM-change listener is registered (true), or `timeout` passes or
  // the set stops (false). True at once without a NodeController (no listener is needed).
  bool WaitForVmChangeListeners(absl::Duration timeout);

  kube::Informer& node_informer() { return *nodes_; }
  cloud::VSphereInstances& instances() { return *instances_; }
  const std::vector<std::unique_ptr<cloud::VCenter>>& vcenters() const { return vcs_; }
  controllers::NodeController* node_controller() { return node_.get(); }          // null: disabled
  controllers::NodeLifecycleController* lifecycle() { return lifecycle_.get(); }  // null: disabled
  controllers::RouteController* routes() { return route_.get(); }                 // null: not run
  controllers::ServiceController* services() { return service_.get(); }           // null: not run

 private:
  void SubscribeVmChanges();  // the listener thread
  void StartRouteController();
  void StartServiceController();
  bool OpenNsxt(const char* who);  // the [NSXT] connection, once; false (logged) when it fails
  // A VM change (IP, power, hostname) refreshes its Node's addresses at once instead of at the
  // next periodic refresh.
  void OnVmChange(cloud::VCenter& vc, const std::string& moid);

  const cloud::Config& config_;
  vsphere::CredentialSource& creds_;
  ControllerClients clients_;
  ControllerSetOptions options_;
  std::vector<std::unique_ptr<cloud::VCenter>> vcs_;
  std::unique_ptr<cloud::VSphereInstances> instances_;
  std::unique_ptr<kube::Informer> nodes_;
  std::unique_ptr<controllers::ProviderIdIndex> by_provider_id_;
  std::unique_ptr<kube::KubeEventSink> sink_;
  std::unique_ptr<kube::EventRecorder> recorder_;
  std::unique_ptr<controllers::NodeController> node_;
  std::unique_ptr<controllers::NodeLifecycleController> lifecycle_;
  std::unique_ptr<cloud::NsxtConnection> nsxt_;
  std::unique_ptr<cloud::NsxtRoutes> nsxt_routes_;
  std::unique_ptr<controllers::RouteController> route_;
  std::unique_ptr<cloud::NsxtLoadBalancer> nsxt_lb_;
  std::unique_ptr<kube::Informer> services_informer_;
  std::unique_ptr<controllers::ServiceController> service_;
  std::thread subscriber_;
  bool started_ = false, stopped_ = false;
  absl::Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::pair<cloud::VCenter*, int>> listeners_ ABSL_GUARDED_BY(mu_);
};

}  // namespace ccm::app
