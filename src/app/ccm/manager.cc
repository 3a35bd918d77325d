#include "app/ccm/manager.h"

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
#include "app/ccm/app_metrics.h"
#include "app/ccm/controller_rounds.h"
#include "app/ccm/secret_watcher.h"
#include "app/shared/config_reloader.h"
#include "app/shared/health_server.h"
#include "app/shared/kube_metrics.h"
#include "app/shared/lease_campaign.h"
#include "app/shared/stop_deadline.h"
#include "cloud/config/config.h"
#include "cloud/credentials/credential_store.h"
#include "cloud/vsphere/vcenter.h"
#include "cloud/vsphere/vcenter_status.h"
#include "common/logging.h"
#include "kube/client.h"
#include "kube/config.h"
#include "kube/event_recorder.h"
#include "kube/informer.h"
#include "kube/kube_event_sink.h"
#include "kube/objects.h"
#include "kube/resource.h"

namespace ccm::app {
namespace {

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
    if (o_.leader_elect && !PrepareElection()) return 1;
    AddHealthChecks();
    if (!StartHealthServer()) return 1;
    controllers_.emplace(o_, config(), env_, *informers_client_, *creds_, registry_,
                         *queue_metrics_, live_vcs_, &*secrets_);
    // With leader election the leader-election check already fails when the API cannot be
    // reached (the lease is not renewed); this one also covers --leader-elect=false.
    health_.AddCheck(
        "kubernetes", [this] { return controllers_->KubeHealth(); }, /*liveness=*/false);
    StartConfigReloader();
    StartVCenterStatus();
    // A hung API server holds no part of the stop (issue 43): the lease release goes first.
    // The Secret informers are not needed to stop (the credentials read stay): they end now, not
    // after the release.
    StopDeadline kube_deadline(stop_, kKubeStopBudget, [this](absl::Time d) {
      client_->SetDeadline(d);
      if (secrets_) secrets_->Stop();
    });
    if (!o_.leader_elect) {
      RunLeading(stop_);
    } else {
      campaign_->Run(stop_);  // losing the Lease sets exit code 1 (ElectionCallbacks)
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
    kube::RestClientOptions client_options;
    ObserveKubeRequests(registry_, kcfg->server, &client_options);
    auto client = kube::RestClient::New(*kcfg, std::move(client_options));
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
    if (config().nsxt && !config().nsxt->secret_name.empty())
      secret_namespaces_.insert(config().nsxt->secret_namespace);  // NSX-T's user and password
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
          return campaign_ ? campaign_->Check(absl::Seconds(20)) : absl::OkStatus();
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

  // Each vCenter's state as a gauge and Events while leading (standby replicas do not connect).
  void StartVCenterStatus() {
    cloud::VCenterStatusOptions so;
    so.source = [this] {
      std::map<std::string, absl::Status> out;
      if (!leading_) return out;
      live_vcs_->ForEach([&](cloud::VCenter& v) { out[v.label()] = v.Health(); });
      return out;
    };
    so.registry = &registry_;
    so.gauge = "cloudprovider_vsphere_vcenter_ready";
    so.gauge_help =
        "1 when the vCenter answers, its session is up and its VM inventory synced (leader only).";
    so.events = &*config_events_;
    so.object = config_event_object_;
    so.effect = "its Nodes wait: none is initialised, changed or deleted until it is usable";
    vcenter_status_.emplace(std::move(so));
    vcenter_status_->Start();
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

  // The Lease campaign (run after the secure port started); false when it could not be made.
  bool PrepareElection() {
    LeaseCampaignOptions lo;
    lo.ns = o_.leader_elect_resource_namespace;
    lo.name = o_.leader_elect_resource_name;
    lo.lease_duration = o_.lease_duration;
    lo.renew_deadline = o_.renew_deadline;
    lo.retry_period = o_.retry_period;
    auto c = LeaseCampaign::New(*client_, lo,
                                [this](const std::string& id) { return ElectionCallbacks(id); });
    if (!c.ok()) {
      LOG_ERROR("{}", c.status().message());
      return false;
    }
    campaign_ = *std::move(c);
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
    vcenter_status_->Stop();
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
  std::unique_ptr<LeaseCampaign> campaign_;  // set before the secure port starts
  std::atomic<bool> leading_{false};
  std::optional<ControllerRounds> controllers_;

  std::atomic<bool> config_exit_{false};
  std::optional<kube::KubeEventSink> config_event_sink_;
  std::optional<kube::EventRecorder> config_events_;
  kube::ObjectReference config_event_object_;
  std::optional<ConfigReloader> reloader_;
  std::optional<cloud::VCenterStatus> vcenter_status_;

  int exit_code_ = 0;  // 1 once the lease is lost
};

}  // namespace

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

int Run(const Options& o, const std::map<std::string, std::string>& env, absl::Notification& stop) {
  return Manager(o, env, stop).Run();
}

}  // namespace ccm::app
