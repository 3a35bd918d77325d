#include "app/ccm/controller_set.h"

#include "absl/strings/str_join.h"
#include "cloud/core/provider_id.h"
#include "common/logging.h"
#include "kube/resource.h"

namespace ccm::app {

ControllerSet::ControllerSet(const cloud::Config& config, vsphere::CredentialSource& creds,
                             ControllerClients clients, ControllerSetOptions options)
    : config_(config), creds_(creds), clients_(clients), options_(std::move(options)) {}

ControllerSet::~ControllerSet() { Stop(); }

void ControllerSet::Start() {
  if (started_) return;
  started_ = true;
  for (const auto& vcc : config_.vcenters) {
    cloud::VCenterOptions vo;
    vo.max_wait_seconds = options_.vcenter_max_wait_seconds;
    vo.hang_timeout = options_.vcenter_hang_timeout;
    if (options_.metrics != nullptr)
      vo.observer = VCenterRequestObserver(*options_.metrics, vcc.label);
    vcs_.push_back(std::make_unique<cloud::VCenter>(vcc, &creds_, vo));
  }
  std::vector<cloud::VCenter*> raw;
  for (auto& vc : vcs_) {
    vc->Start();
    raw.push_back(vc.get());
    LOG_INFO("vCenter {}: connecting to {} (datacenters: {})", vc->label(),
             cloud::SdkUrl(vc->config()),
             vc->config().datacenters.empty() ? std::string("all")
                                              : absl::StrJoin(vc->config().datacenters, ","));
  }
  if (options_.live_vcenters) options_.live_vcenters->Set(raw);
  instances_ = std::make_unique<cloud::VSphereInstances>(config_, raw);
  nodes_ = std::make_unique<kube::Informer>(clients_.informers, kube::Nodes(),
                                            controllers::NodeCacheOptions());
  by_provider_id_ = std::make_unique<controllers::ProviderIdIndex>(*nodes_);
  sink_ = std::make_unique<kube::KubeEventSink>(clients_.events);
  kube::EventRecorderOptions ro;
  ro.host = options_.event_host;
  ro.clock = options_.recorder_clock;
  ro.metrics = options_.metrics;
  recorder_ = std::make_unique<kube::EventRecorder>(*sink_, ro);

  if (options_.node_controller) {
    controllers::NodeControllerOptions no;
    no.workers = options_.concurrent_node_syncs;
    no.status_update_frequency = options_.node_status_update_frequency;
    no.extra_labels = options_.node_labels;
    no.clock = options_.clock;
    no.queue_metrics = options_.queue_metrics;
    no.metrics = options_.metrics;
    node_ = std::make_unique<controllers::NodeController>(clients_.node, *nodes_, *instances_,
                                                          recorder_.get(), std::move(no));
  }
  if (options_.lifecycle_controller) {
    controllers::NodeLifecycleControllerOptions lo;
    lo.monitor_period = options_.node_monitor_period;
    lo.skip_node_deletion = options_.skip_node_deletion;
    lo.clock = options_.clock;
    lo.metrics = options_.metrics;
    if (lo.skip_node_deletion) LOG_INFO("SKIP_NODE_DELETION is set: Nodes are never deleted");
    lifecycle_ = std::make_unique<controllers::NodeLifecycleController>(
        clients_.lifecycle, *nodes_, *instances_, recorder_.get(), lo);
  }
  if (options_.route_controller) StartRouteController();
  if (options_.service_controller) StartServiceController();
  nodes_->Start();
  if (services_informer_) services_informer_->Start();
  if (node_) node_->Start();
  if (lifecycle_) lifecycle_->Start();
  if (route_) route_->Start();
  if (service_) service_->Start();
  subscriber_ = std::thread([this] { SubscribeVmChanges(); });
}

void ControllerSet::StartRouteController() {
  if (!config_.route || !config_.nsxt) {
    LOG_INFO(
        "route controller not started: the config has no [Route] router-path (routes are "
        "NSX-T static routes)");
    return;
  }
  if (!OpenNsxt("route controller")) return;
  nsxt_routes_ = std::make_unique<cloud::NsxtRoutes>(
      nsxt_->client(), cloud::NsxtRoutesOptions{.router_path = config_.route->router_path});
  controllers::RouteControllerOptions ro;
  ro.cluster_name = options_.cluster_name;
  ro.cluster_cidrs = options_.cluster_cidrs;
  ro.period = options_.route_period;
  ro.clock = options_.clock;
  kube::Client& client = clients_.routes != nullptr ? *clients_.routes : clients_.node;
  route_ = std::make_unique<controllers::RouteController>(client, *nodes_, *nsxt_routes_,
                                                          recorder_.get(), ro);
  LOG_INFO("route controller: static routes of cluster {} on NSX-T {} {}", ro.cluster_name,
           config_.nsxt->host, config_.route->router_path);
}

bool ControllerSet::OpenNsxt(const char* who) {
  if (nsxt_) return true;
  auto conn = cloud::NsxtConnection::Open(*config_.nsxt, options_.secrets);
  if (!conn.ok()) {
    LOG_ERROR("{} not started: NSX-T manager {}: {}", who, config_.nsxt->host,
              conn.status().message());
    return false;
  }
  nsxt_ = std::move(*conn);
  return true;
}

void ControllerSet::StartServiceController() {
  if (!config_.load_balancer || !config_.nsxt) {
    LOG_INFO("service controller not started: the config has no [LoadBalancer] and [NSXT]");
    return;
  }
  if (!OpenNsxt("service controller")) return;
  LOG_WARN("NSX-T load balancer support enabled (ENABLE_ALPHA_NSXT_LB). This feature is alpha.");
  nsxt_lb_ = std::make_unique<cloud::NsxtLoadBalancer>(
      nsxt_->client(), cloud::NsxtLoadBalancerOptions{.config = *config_.load_balancer});
  services_informer_ = std::make_unique<kube::Informer>(clients_.informers, kube::Services(),
                                                        kube::InformerOptions{});
  controllers::ServiceControllerOptions so;
  so.cluster_name = options_.cluster_name;
  so.workers = options_.concurrent_service_syncs;
  so.node_sync_period = options_.node_sync_period;
  so.queue_metrics = options_.queue_metrics;
  so.clock = options_.clock;
  const std::string cluster = options_.cluster_name;
  cloud::NsxtLoadBalancer* lb = nsxt_lb_.get();
  so.cleanup = [lb, cluster](const std::set<std::string>& wanted) {
    return lb->CleanupOrphans(cluster, wanted);
  };
  kube::Client& client = clients_.services != nullptr ? *clients_.services : clients_.node;
  service_ = std::make_unique<controllers::ServiceController>(
      client, *services_informer_, *nodes_, *nsxt_lb_, recorder_.get(), std::move(so));
  LOG_INFO("service controller: NSX-T load balancers of cluster {} on {}", cluster,
           config_.load_balancer->tier1_gateway_path.empty()
               ? "LB service " + config_.load_balancer->lb_service_id
               : config_.load_balancer->tier1_gateway_path);
}

void ControllerSet::SubscribeVmChanges() {
  if (!node_) return;  // nothing to refresh
  std::vector<cloud::VCenter*> pending;
  for (auto& vc : vcs_) pending.push_back(vc.get());
  while (!pending.empty()) {
    {
      absl::MutexLock l(&mu_);
      if (stopping_) return;
    }
    for (auto it = pending.begin(); it != pending.end();) {
      cloud::VCenter* vc = *it;
      if (!vc->inventory().WaitForSync(absl::Milliseconds(100))) {
        ++it;
        continue;
      }
      // Registered after the first load, so the listener sees changes only.
      const int id = vc->inventory().AddListener(
          [this, vc](const std::string& moid, vsphere::VmChangeKind) { OnVmChange(*vc, moid); });
      absl::MutexLock l(&mu_);
      listeners_.push_back({vc, id});
      it = pending.erase(it);
    }
  }
}

bool ControllerSet::WaitForVmChangeListeners(absl::Duration timeout) {
  if (!node_) return true;
  const size_t want = vcs_.size();
  auto done = [this, want]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return stopping_ || listeners_.size() == want;
  };
  absl::MutexLock l(&mu_);
  mu_.AwaitWithTimeout(absl::Condition(&done), timeout);
  return listeners_.size() == want;
}

void ControllerSet::OnVmChange(cloud::VCenter& vc, const std::string& moid) {
  absl::StatusOr<vsphere::VmFacts> f = vc.inventory().FindByMoid(moid);
  if (!f.ok()) return;  // removed: the lifecycle controller handles it
  absl::StatusOr<std::string> pid = cloud::FormatProviderId(f->bios_uuid);
  if (!pid.ok()) return;  // no Node can carry it
  if (std::optional<std::string> name = by_provider_id_->NodeFor(*pid)) {
    node_->EnqueueAddressRefresh(*name);
  }
}

void ControllerSet::Stop() {
  if (!started_ || stopped_) return;
  stopped_ = true;
  // No call on a hung vCenter holds the stop (issue 43): the controllers' calls under way end
  // within the budget, and the logouts below get what is left of it.
  const absl::Time vcenter_deadline = absl::Now() + cloud::VCenter::kStopBudget;
  for (auto& vc : vcs_) vc->SetDeadline(vcenter_deadline);
  if (nsxt_) nsxt_->client().SetDeadline(vcenter_deadline);  // NSX-T gets the same bound
  {
    absl::MutexLock l(&mu_);
    stopping_ = true;
  }
  subscriber_.join();
  std::vector<std::pair<cloud::VCenter*, int>> listeners;
  {
    absl::MutexLock l(&mu_);
    listeners.swap(listeners_);
  }
  for (auto& [vc, id] : listeners) vc->inventory().RemoveListener(id);
  if (service_) service_->Stop();
  if (services_informer_) services_informer_->Stop();
  if (route_) route_->Stop();
  if (lifecycle_) lifecycle_->Stop();
  if (node_) node_->Stop();
  nodes_->Stop();
  // Queued Events go out for at most event_drain_on_stop: a long queue on the Events budget must
  // not hold up a pod that is being terminated (client-go's broadcaster does not wait either).
  // Bounded: an Event waiting to be retried (its API server was down) waits on the injected clock.
  if (options_.flush_events_on_stop && !recorder_->Flush(absl::Seconds(10)))
    LOG_WARN("Events still queued after 10 s; the rest get the shutdown's drain time");
  recorder_->Shutdown(options_.event_drain_on_stop);
  if (options_.live_vcenters) options_.live_vcenters->Clear();  // waits for readers
  for (auto& vc : vcs_) vc->Stop();                             // logs out of SOAP and REST
  LOG_INFO("controllers stopped, logged out of {} vCenter(s)", vcs_.size());
}

}  // namespace ccm::app
