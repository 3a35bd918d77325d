#include "app/manager.h"

#include <unistd.h>

#include <atomic>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
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
  Controllers(const Options& o, const cloud::Config& config,
              const std::map<std::string, std::string>& env, kube::RestClient& client,
              vsphere::CredentialSource& creds, metrics::Registry& registry,
              QueueMetricsProvider& queue_metrics, std::shared_ptr<LiveVCenters> live)
      : o_(o),
        config_(config),
        env_(env),
        client_(client),
        creds_(creds),
        registry_(registry),
        queue_metrics_(queue_metrics),
        live_(std::move(live)) {}

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

 private:
  // The config change Reload() queued, if any, before this round reads the config.
  void ApplyPendingReload() ABSL_LOCKS_EXCLUDED(reload_mu_) {
    absl::MutexLock l(&reload_mu_);
    if (pending_apply_) {
      pending_apply_();
      pending_apply_ = nullptr;
    }
  }

  // This round's clients and controllers, started.
  void StartSet() {
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
    set_ = std::make_unique<ControllerSet>(config_, creds_,
                                           ControllerClients{.informers = client_,
                                                             .events = *events_client_,
                                                             .node = *node_client_,
                                                             .lifecycle = *lifecycle_client_},
                                           std::move(so));
    set_->Start();
  }

  const Options& o_;
  const cloud::Config& config_;
  const std::map<std::string, std::string>& env_;
  kube::RestClient& client_;  // the shared informers' (and the root of the per-controller views)
  vsphere::CredentialSource& creds_;
  metrics::Registry& registry_;
  QueueMetricsProvider& queue_metrics_;
  std::shared_ptr<LiveVCenters> live_;
  std::unique_ptr<kube::RestClient> events_client_, node_client_, lifecycle_client_;
  std::unique_ptr<ControllerSet> set_;  // kept until the next round (the health check may read it)
  std::atomic<kube::Informer*> nodes_ptr_{nullptr};  // for the health check thread
  absl::Mutex reload_mu_;
  std::function<void()> pending_apply_ ABSL_GUARDED_BY(reload_mu_);
};

// The process, from start to exit. Members are what lives as long as the process, declared in
// the order they start, so that they are destroyed in the reverse order. A step that returns
// false has logged why, and the process exits 1.
class Manager {
 public:
  Manager(const Options& o, const std::map<std::string, std::string>& env, absl::Notification& stop)
      : o_(o), env_(env), stop_(stop) {}

  // Returns the exit code.
  int Run() {
    LOG_INFO("vsphere-cloud-controller-manager {} starting", kVersion);
    for (const auto& w : o_.warnings) LOG_WARN("{}", w);
    if (!LoadCloudConfig() || !Connect()) return 1;
    StartMetrics();
    StartCredentials();
    AddHealthChecks();
    if (!StartHealthServer()) return 1;
    controllers_.emplace(o_, config(), env_, *informers_client_, *creds_, registry_,
                         *queue_metrics_, live_vcs_);
    // With leader election the leader-election check already fails when the API cannot be
    // reached (the lease is not renewed); this one also covers --leader-elect=false.
    health_.AddCheck(
        "kubernetes", [this] { return controllers_->KubeHealth(); }, /*liveness=*/false);
    StartConfigReloader();
    if (!o_.leader_elect) {
      RunLeading(stop_);
    } else if (!RunWithElection()) {
      return 1;
    }
    return Shutdown();
  }

 private:
  const cloud::Config& config() const { return parsed_.config; }

  bool LoadCloudConfig() {
    auto parsed = LoadConfig(o_, env_);
    if (!parsed.ok()) {
      LOG_ERROR("invalid cloud config: {}", parsed.status().message());
      return false;
    }
    parsed_ = *std::move(parsed);
    for (const auto& w : parsed_.warnings) LOG_WARN("cloud config: {}", w);
    for (const auto& n : parsed_.notices) LOG_INFO("cloud config: {}", n);
    // One log line per config line: every line of the log keeps klog's header.
    for (absl::string_view line : absl::StrSplit(config().ToString(), '\n', absl::SkipEmpty()))
      VLOG(2, "cloud config: {}", line);
    return true;
  }

  // The Kubernetes client (does not contact the server yet).
  bool Connect() {
    auto kcfg = kube::BuildConfig(o_.master, o_.kubeconfig);
    if (!kcfg.ok()) {
      LOG_ERROR("Kubernetes client configuration: {}", kcfg.status().message());
      return false;
    }
    kcfg->qps = o_.kube_api_qps;
    kcfg->burst = o_.kube_api_burst;
    auto client = kube::RestClient::New(*kcfg);
    if (!client.ok()) {
      LOG_ERROR("Kubernetes client: {}", client.status().message());
      return false;
    }
    client_ = *std::move(client);
    return true;
  }

  void StartMetrics() {
    RegisterBuildInfo(registry_, kVersion);
    queue_metrics_.emplace(registry_);
    RegisterVCenterGauges(registry_, live_vcs_);
    leader_gauge_ = LeaderGauge(registry_);
    auto* kube_requests =
        registry_.Gauge("rest_client_requests_sent", "Kubernetes API requests sent.");
    kube::RestClient* rc = client_.get();  // counts its views' requests too
    // The shared informers' client (Node cache, Secrets); every controller makes its own view.
    informers_client_ = rc->WithOwnRateLimit("shared-informers");
    registry_.OnScrape(
        [kube_requests, rc] { kube_requests->Set({}, static_cast<double>(rc->requests_sent())); });
  }

  // Credentials: Secrets are watched before the first login, so no login ever uses empty ones.
  void StartCredentials() {
    for (const auto& vc : config().vcenters)
      if (vc.credential_source == cloud::CredentialSourceKind::kGlobalSecret ||
          vc.credential_source == cloud::CredentialSourceKind::kVCenterSecret)
        secret_namespaces_.insert(vc.secret_namespace);
    secrets_.emplace(*informers_client_, secret_namespaces_);
    secrets_->Start();
    if (!secret_namespaces_.empty() && !secrets_->WaitForSync(absl::Seconds(30)))
      LOG_WARN("Secrets not listed yet; vCenters that need them wait for their credentials");
    creds_.emplace(config(), secret_namespaces_.empty() ? nullptr : &*secrets_);
    if (absl::Status s = creds_->Start(); !s.ok()) LOG_WARN("credentials: {}", s.message());
  }

  // The secure port's checks (the Kubernetes one comes with the controllers).
  void AddHealthChecks() {
    health_.AddCheck(
        "leader-election",
        [this]() -> absl::Status {
          return elector_ ? elector_->Check(absl::Seconds(20)) : absl::OkStatus();
        },
        /*liveness=*/true);
    for (const auto& vc : config().vcenters) {
      const std::string label = vc.label;
      health_.AddCheck(
          absl::StrCat("vcenter-", label),
          [this, live_vcs = live_vcs_, label]() -> absl::Status {
            if (!leading_) return absl::OkStatus();  // standby replicas do not connect
            absl::Status health = absl::UnavailableError("not connected yet");
            live_vcs->ForEach([&](cloud::VCenter& v) {
              if (v.label() == label) health = v.Health();
            });
            return health;
          },
          /*liveness=*/false);
    }
  }

  // Secure port (none with --secure-port=0).
  bool StartHealthServer() {
    if (o_.secure_port == 0) return true;
    absl::StatusOr<KeyPair> kp = o_.tls_cert_file.empty()
                                     ? MakeSelfSigned(Hostname())
                                     : LoadKeyPair(o_.tls_cert_file, o_.tls_private_key_file);
    if (!kp.ok()) {
      LOG_ERROR("serving certificate: {}", kp.status().message());
      return false;
    }
    auto port = health_.Start(o_.bind_address, o_.secure_port, &*kp);
    if (!port.ok()) {
      LOG_ERROR("{}", port.status().message());
      return false;
    }
    LOG_INFO("serving /healthz, /readyz, /livez and /metrics on https://{}:{}", o_.bind_address,
             *port);
    return true;
  }

  // --cloud-config changing on disk (config_reloader.h). Invalid: the running config stays, an
  // error is logged and a Warning Event recorded. Live: the controllers restart in-process with
  // it. Otherwise: exit 1 after releasing the lease and logging out, so that the pod restarts
  // with the new file (the Go binary exits with klog.Fatalf's 255 on any event on the file).
  void StartConfigReloader() {
    config_event_sink_.emplace(*client_);
    kube::EventRecorderOptions config_event_options;
    config_event_options.host = Hostname();
    config_events_.emplace(*config_event_sink_, config_event_options);
    config_event_object_ = ConfigEventObject(o_, env_);
    ConfigReloader::Options reload_options;
    reload_options.path = o_.cloud_config;
    reload_options.env = env_;
    reload_options.strict = o_.strict_config;
    reload_options.period = o_.cloud_config_check_period;
    reloader_.emplace(reload_options, config());
    if (o_.cloud_config_check_period > absl::ZeroDuration())
      reloader_->Start([this](const ConfigCheck& c) { OnConfigCheck(c); });
  }

  void OnConfigCheck(const ConfigCheck& c) {
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
        config_events_->Warning(config_event_object_, "InvalidCloudConfig", c.message);
        break;
      case ConfigCheck::Kind::kApplyLive:
        LOG_INFO("{}", c.message);
        config_events_->Normal(config_event_object_, "CloudConfigApplied", c.message);
        controllers_->Reload([this, next = *c.config] {
          parsed_.config = next;
          LOG_INFO("cloud config: the controllers run with the new config");
        });
        break;
      case ConfigCheck::Kind::kRestart:
        LOG_ERROR("{}; exiting so that the pod restarts with the new file", c.message);
        config_events_->Warning(config_event_object_, "CloudConfigNeedsRestart", c.message);
        config_exit_ = true;
        if (!stop_.HasBeenNotified()) stop_.Notify();
        break;
    }
  }

  // The controllers, until `stop` (the process's, or the end of this term as leader).
  void RunLeading(const absl::Notification& stop) {
    leading_ = true;
    leader_gauge_->Set({o_.leader_elect_resource_name}, 1);
    controllers_->Run(stop);
  }

  // Runs for the lease until stop (lease released) or loss; false when the elector could not be
  // made (exit 1).
  bool RunWithElection() {
    std::unique_ptr<kube::RestClient> election_client =
        client_->WithOwnRateLimit("leader-election");
    kube::KubeLeaseLock lock(*election_client, o_.leader_elect_resource_namespace,
                             o_.leader_elect_resource_name);
    kube::LeaderElectionConfig lc;
    lc.identity = absl::StrCat(Hostname(), "_", RandomSuffix());
    lc.lease_duration = o_.lease_duration;
    lc.renew_deadline = o_.renew_deadline;
    lc.retry_period = o_.retry_period;
    auto e = kube::LeaderElector::New(lc, lock, ElectionCallbacks(lc.identity), Clock::Real(),
                                      Random::Real());
    if (!e.ok()) {
      LOG_ERROR("leader election: {}", e.status().message());
      health_.Stop();  // its checks refer to objects destroyed on return
      return false;
    }
    elector_ = *std::move(e);
    LOG_INFO("attempting to acquire leader lease {}/{} as {}", o_.leader_elect_resource_namespace,
             o_.leader_elect_resource_name, lc.identity);
    elector_->Run(stop_);  // returns after stop (lease released) or loss
    elector_->Shutdown();
    return true;
  }

  // Leading runs the controllers; losing the lease (not a stop) ends the process with exit 1.
  kube::LeaderCallbacks ElectionCallbacks(const std::string& identity) {
    kube::LeaderCallbacks cb;
    cb.on_started_leading = [this, identity](const absl::Notification& stop_leading) {
      LOG_INFO("became leader ({}), starting controllers", identity);
      RunLeading(stop_leading);
      leading_ = false;
      leader_gauge_->Set({o_.leader_elect_resource_name}, 0);
    };
    cb.on_stopped_leading = [this] {
      if (!stop_.HasBeenNotified()) {
        LOG_ERROR(
            "leaderelection lost: every controller stopped; exiting to restart as a candidate");
        exit_code_ = 1;
        stop_.Notify();
      }
    };
    cb.on_new_leader = [identity](const std::string& id) {
      if (id != identity) LOG_INFO("new leader elected: {}", id);
    };
    return cb;
  }

  // Stops what Run started, in reverse; returns the exit code.
  int Shutdown() {
    reloader_->Stop();
    // A queued config Event goes out, but an unreachable API server does not hold up the exit.
    config_events_->Shutdown(absl::Seconds(5));
    if (config_exit_) exit_code_ = 1;
    health_.Stop();
    creds_->Stop();
    secrets_->Stop();
    LOG_INFO("exiting with code {}", exit_code_);
    return exit_code_;
  }

  const Options& o_;
  const std::map<std::string, std::string>& env_;
  absl::Notification& stop_;  // SIGTERM/SIGINT, or a config change that needs a restart

  cloud::ParseResult parsed_;  // parsed_.config: replaced in place by a live reload
  std::unique_ptr<kube::RestClient> client_;

  metrics::Registry& registry_ = metrics::Registry::Default();
  std::optional<QueueMetricsProvider> queue_metrics_;
  const std::shared_ptr<LiveVCenters> live_vcs_ = std::make_shared<LiveVCenters>();
  metrics::Family* leader_gauge_ = nullptr;
  std::unique_ptr<kube::RestClient> informers_client_;

  std::set<std::string> secret_namespaces_;
  std::optional<KubeSecretWatcher> secrets_;
  std::optional<cloud::CredentialStore> creds_;

  HealthServer health_{&registry_};
  std::unique_ptr<kube::LeaderElector> elector_;
  std::atomic<bool> leading_{false};
  std::optional<Controllers> controllers_;

  std::atomic<bool> config_exit_{false};
  std::optional<kube::KubeEventSink> config_event_sink_;
  std::optional<kube::EventRecorder> config_events_;
  kube::ObjectReference config_event_object_;
  std::optional<ConfigReloader> reloader_;

  int exit_code_ = 0;  // 1 once the lease is lost
};

}  // namespace

int Run(const Options& o, const std::map<std::string, std::string>& env, absl::Notification& stop) {
  return Manager(o, env, stop).Run();
}

}  // namespace ccm::app
