#include "app/manager.h"

#include <unistd.h>

#include <atomic>
#include <fstream>
#include <functional>
#include <set>
#include <sstream>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "app/app_metrics.h"
#include "app/config_reloader.h"
#include "app/controller_set.h"
#include "app/health_server.h"
#include "app/secret_watcher.h"
#include "cloud/config/config.h"
#include "cloud/credentials/credential_store.h"
#include "cloud/vsphere/vcenter.h"
#include "common/logging.h"
#include "kube/client.h"
#include "kube/config.h"
#include "kube/event_recorder.h"
#include "kube/informer.h"
#include "kube/kube_event_sink.h"
#include "kube/kube_lease_lock.h"
#include "kube/leader_election.h"
#include "kube/objects.h"
#include "kube/resource.h"

namespace ccm::app {
namespace {

std::string Hostname() {
  char buf[256] = {};
  gethostname(buf, sizeof(buf) - 1);
  return buf;
}

std::string RandomSuffix() {
  static const char* kHex = "0123456789abcdef";
  std::string s;
  for (int i = 0; i < 8; ++i) s += kHex[static_cast<int>(Random::Real().Uniform() * 16) & 15];
  return s;
}

// What cloud config Events are about: this Pod when the downward API names it (POD_NAME,
// POD_NAMESPACE), else the leader election Lease (where client-go records leader Events too).
kube::ObjectReference ConfigEventObject(const Options& o,
                                        const std::map<std::string, std::string>& env) {
  auto name = env.find("POD_NAME"), ns = env.find("POD_NAMESPACE");
  if (name != env.end() && ns != env.end() && !name->second.empty() && !ns->second.empty())
    return {.kind = "Pod", .ns = ns->second, .name = name->second, .api_version = "v1"};
  return {.kind = "Lease",
          .ns = o.leader_elect_resource_namespace,
          .name = o.leader_elect_resource_name,
          .api_version = "coordination.k8s.io/v1"};
}

absl::StatusOr<cloud::ParseResult> LoadConfig(const Options& o,
                                              const std::map<std::string, std::string>& env) {
  std::ifstream in(o.cloud_config, std::ios::binary);
  if (!in) {
    return absl::NotFoundError(
        absl::StrCat("--cloud-config ", o.cloud_config, ": cannot open the file"));
  }
  std::stringstream ss;
  ss << in.rdbuf();
  cloud::ParseOptions po;
  po.file_name = o.cloud_config;
  po.strict = o.strict_config;
  return cloud::ParseConfig(ss.str(), env, po);
}

// Everything that runs only while this process leads: one ControllerSet per round.
class Controllers {
 public:
  Controllers(const Options& o, const cloud::Config& config, const std::map<std::string, std::string>& env,
              kube::RestClient& client, vsphere::CredentialSource& creds, metrics::Registry& registry,
              QueueMetricsProvider& queue_metrics, std::shared_ptr<std::vector<cloud::VCenter*>> live)
      : o_(o), config_(config), env_(env), client_(client), creds_(creds), registry_(registry),
        queue_metrics_(queue_metrics), live_(std::move(live)) {}

  // OK unless running and the Node list/watch has not synced (Kubernetes API not answering).
  absl::Status KubeHealth() const {
    kube::Informer* nodes = nodes_ptr_.load();
    if (nodes == nullptr || nodes->HasSynced()) return absl::OkStatus();
    return absl::UnavailableError("the Node informer has not synced with the Kubernetes API yet");
  }

  // Blocks until `stop` is notified. A live cloud config change (Reload) ends the current round
  // (controllers stopped, vCenters logged out) and starts the next one with the new config; the
  // lease is kept all along.
  void Run(const absl::Notification& stop) {
    while (RunRound(stop)) {
    }
  }

  // From the config reloader: `apply` (it replaces the config this object reads) runs before the
  // next round, which starts at once when a round is running. Never blocks.
  void Reload(std::function<void()> apply) {
    absl::MutexLock l(&reload_mu_);
    pending_apply_ = std::move(apply);
  }

  // One round of Run() (public only for it). Returns whether to run another: a reload ended it,
  // not `outer`.
  bool RunRound(const absl::Notification& outer) {
    {
      absl::MutexLock l(&reload_mu_);
      if (pending_apply_) {
        pending_apply_();
        pending_apply_ = nullptr;
      }
    }
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
    // One rate-limit budget per user, as client-go's ClientBuilder gives every controller its own
    // client: Events (sent from the recorder's thread) never delay a Node write, and
    // --kube-api-qps/--kube-api-burst mean for each controller what they mean for the Go binary.
    events_client_ = client_.WithOwnRateLimit("events");
    node_client_ = client_.WithOwnRateLimit("node-controller");
    lifecycle_client_ = client_.WithOwnRateLimit("node-lifecycle-controller");
    ControllerSetOptions so;
    so.node_controller = ControllerEnabled(o_, "cloud-node");
    so.lifecycle_controller = ControllerEnabled(o_, "cloud-node-lifecycle");
    so.concurrent_node_syncs = o_.concurrent_node_syncs;
    so.node_status_update_frequency = o_.node_status_update_frequency;
    so.node_monitor_period = o_.node_monitor_period;
    so.node_labels = o_.node_labels;
    so.skip_node_deletion = env_.count("SKIP_NODE_DELETION") > 0;
    so.event_host = Hostname();
    so.metrics = &registry_;
    so.queue_metrics = &queue_metrics_;
    so.live_vcenters = live_;
    set_ = std::make_unique<ControllerSet>(
        config_, creds_,
        ControllerClients{.informers = client_,
                          .events = *events_client_,
                          .node = *node_client_,
                          .lifecycle = *lifecycle_client_},
        std::move(so));
    set_->Start();
    nodes_ptr_ = &set_->node_informer();
    stop.WaitForNotification();
    nodes_ptr_ = nullptr;
    set_->Stop();
    relay.join();
    return !outer.HasBeenNotified();
  }

 private:
  const Options& o_;
  const cloud::Config& config_;
  const std::map<std::string, std::string>& env_;
  kube::RestClient& client_;  // the shared informers' (and the root of the per-controller views)
  vsphere::CredentialSource& creds_;
  metrics::Registry& registry_;
  QueueMetricsProvider& queue_metrics_;
  std::shared_ptr<std::vector<cloud::VCenter*>> live_;
  std::unique_ptr<kube::RestClient> events_client_, node_client_, lifecycle_client_;
  std::unique_ptr<ControllerSet> set_;  // kept until the next round (the health check may read it)
  std::atomic<kube::Informer*> nodes_ptr_{nullptr};  // for the health check thread
  absl::Mutex reload_mu_;
  std::function<void()> pending_apply_ ABSL_GUARDED_BY(reload_mu_);
};

}  // namespace

int Run(const Options& o, const std::map<std::string, std::string>& env, absl::Notification& stop) {
  LOG_INFO("vsphere-cloud-controller-manager {} starting", kVersion);
  for (const auto& w : o.warnings) LOG_WARN("{}", w);

  auto parsed = LoadConfig(o, env);
  if (!parsed.ok()) {
    LOG_ERROR("invalid cloud config: {}", parsed.status().message());
    return 1;
  }
  for (const auto& w : parsed->warnings) LOG_WARN("cloud config: {}", w);
  for (const auto& n : parsed->notices) LOG_INFO("cloud config: {}", n);
  const cloud::Config& config = parsed->config;
  // One log line per config line: every line of the log keeps klog's header.
  for (absl::string_view line : absl::StrSplit(config.ToString(), '\n', absl::SkipEmpty()))
    VLOG(2, "cloud config: {}", line);

  auto kcfg = kube::BuildConfig(o.master, o.kubeconfig);
  if (!kcfg.ok()) {
    LOG_ERROR("Kubernetes client configuration: {}", kcfg.status().message());
    return 1;
  }
  kcfg->qps = o.kube_api_qps;
  kcfg->burst = o.kube_api_burst;
  auto client = kube::RestClient::New(*kcfg);
  if (!client.ok()) {
    LOG_ERROR("Kubernetes client: {}", client.status().message());
    return 1;
  }

  metrics::Registry& registry = metrics::Registry::Default();
  RegisterBuildInfo(registry, kVersion);
  QueueMetricsProvider queue_metrics(registry);
  auto live_vcs = std::make_shared<std::vector<cloud::VCenter*>>();
  RegisterVCenterGauges(registry, live_vcs);
  metrics::Family* leader_gauge = LeaderGauge(registry);
  auto* kube_requests = registry.Gauge("rest_client_requests_sent", "Kubernetes API requests sent.");
  kube::RestClient* rc = client->get();  // counts its views' requests too
  // The shared informers' client (Node cache, Secrets); every controller makes its own view.
  std::unique_ptr<kube::RestClient> informers_client = rc->WithOwnRateLimit("shared-informers");
  registry.OnScrape([kube_requests, rc] { kube_requests->Set({}, static_cast<double>(rc->requests_sent())); });

  // Credentials: Secrets are watched before the first login, so no login ever uses empty ones.
  std::set<std::string> secret_namespaces;
  for (const auto& vc : config.vcenters)
    if (vc.credential_source == cloud::CredentialSourceKind::kGlobalSecret ||
        vc.credential_source == cloud::CredentialSourceKind::kVCenterSecret)
      secret_namespaces.insert(vc.secret_namespace);
  KubeSecretWatcher secrets(*informers_client, secret_namespaces);
  secrets.Start();
  if (!secret_namespaces.empty() && !secrets.WaitForSync(absl::Seconds(30)))
    LOG_WARN("Secrets not listed yet; vCenters that need them wait for their credentials");
  cloud::CredentialStore creds(config, secret_namespaces.empty() ? nullptr : &secrets);
  if (absl::Status s = creds.Start(); !s.ok()) LOG_WARN("credentials: {}", s.message());

  // Secure port.
  HealthServer health(&registry);
  std::unique_ptr<kube::LeaderElector> elector;
  std::atomic<bool> leading{false};
  health.AddCheck("leader-election", [&]() -> absl::Status {
    return elector ? elector->Check(absl::Seconds(20)) : absl::OkStatus();
  }, /*liveness=*/true);
  for (const auto& vc : config.vcenters) {
    const std::string label = vc.label;
    health.AddCheck(absl::StrCat("vcenter-", label), [&leading, live_vcs, label]() -> absl::Status {
      if (!leading) return absl::OkStatus();  // standby replicas do not connect
      for (cloud::VCenter* v : *live_vcs)
        if (v->label() == label) return v->Health();
      return absl::UnavailableError("not connected yet");
    }, /*liveness=*/false);
  }
  if (o.secure_port != 0) {
    absl::StatusOr<KeyPair> kp = o.tls_cert_file.empty() ? MakeSelfSigned(Hostname())
                                                         : LoadKeyPair(o.tls_cert_file, o.tls_private_key_file);
    if (!kp.ok()) {
      LOG_ERROR("serving certificate: {}", kp.status().message());
      return 1;
    }
    auto port = health.Start(o.bind_address, o.secure_port, &*kp);
    if (!port.ok()) {
      LOG_ERROR("{}", port.status().message());
      return 1;
    }
    LOG_INFO("serving /healthz, /readyz, /livez and /metrics on https://{}:{}", o.bind_address, *port);
  }

  Controllers controllers(o, config, env, *informers_client, creds, registry, queue_metrics, live_vcs);
  // With leader election the leader-election check already fails when the API cannot be reached
  // (the lease is not renewed); this one also covers --leader-elect=false.
  health.AddCheck("kubernetes", [&controllers] { return controllers.KubeHealth(); },
                  /*liveness=*/false);

  // --cloud-config changing on disk (config_reloader.h). Invalid: the running config stays, an
  // error is logged and a Warning Event recorded. Live: the controllers restart in-process with
  // it. Otherwise: exit 1 after releasing the lease and logging out, so that the pod restarts
  // with the new file (the Go binary exits with klog.Fatalf's 255 on any event on the file).
  std::atomic<bool> config_exit{false};
  kube::KubeEventSink config_event_sink(**client);
  kube::EventRecorderOptions config_event_options;
  config_event_options.host = Hostname();
  kube::EventRecorder config_events(config_event_sink, config_event_options);
  const kube::ObjectReference config_event_object = ConfigEventObject(o, env);
  ConfigReloader::Options reload_options;
  reload_options.path = o.cloud_config;
  reload_options.env = env;
  reload_options.strict = o.strict_config;
  reload_options.period = o.cloud_config_check_period;
  ConfigReloader reloader(reload_options, config);
  auto on_config_check = [&](const ConfigCheck& c) {
    for (const auto& w : c.warnings) LOG_WARN("cloud config: {}", w);
    switch (c.kind) {
      case ConfigCheck::Kind::kUnchanged:
        break;
      case ConfigCheck::Kind::kNoEffect:
        VLOG(1, "{}", c.message);
        break;
      case ConfigCheck::Kind::kUnreadable:
      case ConfigCheck::Kind::kInvalid:
        LOG_ERROR("{}", c.message);
        config_events.Warning(config_event_object, "InvalidCloudConfig", c.message);
        break;
      case ConfigCheck::Kind::kApplyLive:
        LOG_INFO("{}", c.message);
        config_events.Normal(config_event_object, "CloudConfigApplied", c.message);
        controllers.Reload([&parsed, next = *c.config] {
          parsed->config = next;
          LOG_INFO("cloud config: the controllers run with the new config");
        });
        break;
      case ConfigCheck::Kind::kRestart:
        LOG_ERROR("{}; exiting so that the pod restarts with the new file", c.message);
        config_events.Warning(config_event_object, "CloudConfigNeedsRestart", c.message);
        config_exit = true;
        if (!stop.HasBeenNotified()) stop.Notify();
        break;
    }
  };
  if (o.cloud_config_check_period > absl::ZeroDuration()) reloader.Start(on_config_check);
  int exit_code = 0;
  if (!o.leader_elect) {
    leading = true;
    leader_gauge->Set({o.leader_elect_resource_name}, 1);
    controllers.Run(stop);
  } else {
    std::unique_ptr<kube::RestClient> election_client = rc->WithOwnRateLimit("leader-election");
    kube::KubeLeaseLock lock(*election_client, o.leader_elect_resource_namespace, o.leader_elect_resource_name);
    kube::LeaderElectionConfig lc;
    lc.identity = absl::StrCat(Hostname(), "_", RandomSuffix());
    lc.lease_duration = o.lease_duration;
    lc.renew_deadline = o.renew_deadline;
    lc.retry_period = o.retry_period;
    kube::LeaderCallbacks cb;
    cb.on_started_leading = [&](const absl::Notification& stop_leading) {
      LOG_INFO("became leader ({}), starting controllers", lc.identity);
      leading = true;
      leader_gauge->Set({o.leader_elect_resource_name}, 1);
      controllers.Run(stop_leading);
      leading = false;
      leader_gauge->Set({o.leader_elect_resource_name}, 0);
    };
    cb.on_stopped_leading = [&] {
      if (!stop.HasBeenNotified()) {
        LOG_ERROR("leaderelection lost: every controller stopped; exiting to restart as a candidate");
        exit_code = 1;
        stop.Notify();
      }
    };
    cb.on_new_leader = [&](const std::string& id) {
      if (id != lc.identity) LOG_INFO("new leader elected: {}", id);
    };
    auto e = kube::LeaderElector::New(lc, lock, cb, Clock::Real(), Random::Real());
    if (!e.ok()) {
      LOG_ERROR("leader election: {}", e.status().message());
      health.Stop();  // its checks refer to objects destroyed on return
      return 1;
    }
    elector = *std::move(e);
    LOG_INFO("attempting to acquire leader lease {}/{} as {}", o.leader_elect_resource_namespace,
             o.leader_elect_resource_name, lc.identity);
    elector->Run(stop);  // returns after stop (lease released) or loss
    elector->Shutdown();
  }
  reloader.Stop();
  // A queued config Event goes out, but an unreachable API server does not hold up the exit.
  config_events.Shutdown(absl::Seconds(5));
  if (config_exit) exit_code = 1;
  health.Stop();
  creds.Stop();
  secrets.Stop();
  LOG_INFO("exiting with code {}", exit_code);
  return exit_code;
}

}  // namespace ccm::app
