#include "app/ccm/controller_rounds.h"

#include <thread>

#include "app/shared/lease_campaign.h"
#include "cloud/core/route_plan.h"

namespace ccm::app {

ControllerRounds::ControllerRounds(const Options& o, const cloud::Config& config,
                                   const std::map<std::string, std::string>& env,
                                   kube::RestClient& client, vsphere::CredentialSource& creds,
                                   metrics::Registry& registry, QueueMetricsProvider& queue_metrics,
                                   std::shared_ptr<LiveVCenters> live,
                                   cloud::SecretWatcher* secrets)
    : o_(o),
      config_(config),
      env_(env),
      client_(client),
      creds_(creds),
      registry_(registry),
      queue_metrics_(queue_metrics),
      live_(std::move(live)),
      secrets_(secrets) {}

absl::Status ControllerRounds::KubeHealth() const {
  kube::Informer* nodes = nodes_ptr_.load();
  if (nodes == nullptr || nodes->HasSynced()) return absl::OkStatus();
  return absl::UnavailableError("the Node informer has not synced with the Kubernetes API yet");
}

void ControllerRounds::Run(const absl::Notification& stop) {
  while (RunRound(stop)) {
  }
}

void ControllerRounds::Reload(std::function<void()> apply) {
  absl::MutexLock l(&reload_mu_);
  pending_apply_ = std::move(apply);
}

bool ControllerRounds::RunRound(const absl::Notification& outer) {
  ApplyPendingReload();
  // The previous round's objects, users before what they use.
  set_.reset();
  events_client_.reset();
  node_client_.reset();
  lifecycle_client_.reset();
  absl::Notification stop;  // this round's: `outer`, or a reload
  std::thread relay([this, &outer, &stop] {
    auto reload_pending = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(reload_mu_) {
      return pending_apply_ != nullptr;
    };
    while (!outer.HasBeenNotified()) {
      absl::MutexLock l(&reload_mu_);
      if (reload_mu_.AwaitWithTimeout(absl::Condition(&reload_pending), absl::Milliseconds(100)))
        break;
    }
    stop.Notify();
  });
  StartSet();
  nodes_ptr_ = &set_->node_informer();
  stop.WaitForNotification();
  nodes_ptr_ = nullptr;
  set_->Stop();
  relay.join();
  return !outer.HasBeenNotified();
}

void ControllerRounds::ApplyPendingReload() {
  absl::MutexLock l(&reload_mu_);
  if (pending_apply_) {
    pending_apply_();
    pending_apply_ = nullptr;
  }
}

void ControllerRounds::StartSet() {
  // One rate-limit budget per user, as client-go's ClientBuilder gives every controller its own
  // client: Events (sent from the recorder's thread) never delay a Node write, and
  // --kube-api-qps/--kube-api-burst mean for each controller what they mean for the Go binary.
  events_client_ = client_.WithOwnRateLimit("events");
  node_client_ = client_.WithOwnRateLimit("node-controller");
  lifecycle_client_ = client_.WithOwnRateLimit("node-lifecycle-controller");
  routes_client_ = client_.WithOwnRateLimit("route-controller");
  services_client_ = client_.WithOwnRateLimit("service-controller");
  ControllerSetOptions so;
  so.node_controller = ControllerEnabled(o_, "cloud-node");
  so.lifecycle_controller = ControllerEnabled(o_, "cloud-node-lifecycle");
  so.concurrent_node_syncs = o_.concurrent_node_syncs;
  so.node_status_update_frequency = o_.node_status_update_frequency;
  so.node_monitor_period = o_.node_monitor_period;
  so.vcenter_hang_timeout = o_.vcenter_hang_timeout;
  so.node_labels = o_.node_labels;
  so.skip_node_deletion = env_.count("SKIP_NODE_DELETION") > 0;
  so.event_host = Hostname();
  so.metrics = &registry_;
  so.queue_metrics = &queue_metrics_;
  so.live_vcenters = live_;
  so.route_controller =
      o_.allocate_node_cidrs && o_.configure_cloud_routes && ControllerEnabled(o_, "route");
  if (!so.route_controller && config_.route)
    LOG_INFO("route controller off: --allocate-node-cidrs={} --configure-cloud-routes={}",
             o_.allocate_node_cidrs, o_.configure_cloud_routes);
  so.cluster_name = o_.cluster_name;
  so.cluster_cidrs = *cloud::ParseClusterCidrs(o_.cluster_cidr);  // checked with the flags
  so.route_period = o_.route_reconciliation_period;
  so.secrets = secrets_;
  so.service_controller = ControllerEnabled(o_, "service") && env_.count("ENABLE_ALPHA_NSXT_LB");
  if (!so.service_controller && config_.load_balancer)
    LOG_INFO(
        "NSX-T load balancer off: ENABLE_ALPHA_NSXT_LB is not set (or --controllers "
        "excludes service)");
  so.concurrent_service_syncs = o_.concurrent_service_syncs;
  so.node_sync_period = o_.node_sync_period;
  set_ = std::make_unique<ControllerSet>(config_, creds_,
                                         ControllerClients{.informers = client_,
                                                           .events = *events_client_,
                                                           .node = *node_client_,
                                                           .lifecycle = *lifecycle_client_,
                                                           .routes = routes_client_.get(),
                                                           .services = services_client_.get()},
                                         std::move(so));
  set_->Start();
}

}  // namespace ccm::app
