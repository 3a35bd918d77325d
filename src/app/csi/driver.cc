#include "app/csi/driver.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "app/csi/cluster_distribution.h"
#include "app/csi/cluster_id.h"
#include "app/csi/config.h"
#include "app/csi/config_reload.h"
#include "app/csi/feature_states_watch.h"
#include "app/csi/node.h"
#include "app/shared/health_server.h"
#include "app/shared/vcenter_metrics.h"
#include "common/logging.h"
#include "csi/controller/controller_plugin.h"
#include "csi/core/constants.h"
#include "csi/server/csi_server.h"
#include "csi/server/identity_service.h"
#include "kube/client.h"

namespace ccm::app {

absl::StatusOr<CsiServiceSet> BuildCsiServiceSet(const CsiOptions& options,
                                                 const cloud::Config* config,
                                                 metrics::Registry* registry,
                                                 const std::map<std::string, std::string>& env) {
  CsiServiceSet set;
  if (options.mode == CsiMode::kController) {
    if (config == nullptr)
      return absl::InvalidArgumentError("controller mode needs the CSI config");
    // Ready when every vCenter session is up, its VM cache synced and the datastores loaded.
    // vCenter requests, CNS included, counted like the CCM's (cloudprovider_vsphere_api_*).
    csi::BackendOptions backend;
    if (registry != nullptr) {
      backend.observer_for = [registry](const std::string& vcenter) {
        return CsiRequestObserver(*registry, vcenter);
      };
    }
    // The node VMs come from the Node objects (placement of volumes without topology). The
    // client's rate is the reference's INCLUSTER_CLIENT_QPS / _BURST (the manifests: 100).
    backend.kube = ApiClientFromEnv(env,
                                    "no node VM is known (volumes need topology requirements to "
                                    "be placed) and CNS tasks are remembered in memory only");
    if (auto ns = env.find("CSI_NAMESPACE"); ns != env.end() && !ns->second.empty()) {
      backend.csi_namespace = ns->second;
    }
    if (auto pod = env.find("POD_NAME"); pod != env.end()) backend.pod_name = pod->second;
    backend.registry = registry;
    backend.vcenter_hang_timeout = options.vcenter_hang_timeout;
    if (registry != nullptr) backend.cns_observer = CnsOperationsObserver(*registry);
    // No cluster-id in csi-vsphere.conf: the one in ConfigMap vsphere-csi-cluster-id, generated
    // there when absent (as the reference does).
    cloud::Config resolved = *config;
    if (backend.kube != nullptr) {
      absl::StatusOr<std::string> id =
          ResolveClusterId(*backend.kube, backend.csi_namespace, config->global.cluster_id);
      if (!id.ok()) return id.status();
      resolved.global.cluster_id = *id;
      // Beyond the reference (its controller sends none until the syncer's first update):
      // CreateVolume names the distribution from the start; without an answer, none.
      absl::StatusOr<std::string> distribution =
          ResolveClusterDistribution(*backend.kube, config->global.cluster_distribution);
      if (distribution.ok()) {
        resolved.global.cluster_distribution = *distribution;
      } else {
        LOG_WARN("{} (new volumes name none; the syncer fills it in)",
                 distribution.status().message());
      }
    }
    absl::StatusOr<csi::ControllerPlugin> plugin = csi::StartControllerPlugin(resolved, backend);
    if (!plugin.ok()) return plugin.status();
    set.controller = std::move(plugin->service);
    set.ready = std::move(plugin->ready);
    set.vcenters = std::move(plugin->vcenters);
    set.events = std::move(plugin->events);
    set.set_vcenter_deadline = [b = plugin->backend](absl::Time d) { b->SetVCenterDeadline(d); };
    if (auto* rest = dynamic_cast<kube::RestClient*>(backend.kube.get())) {
      set.set_kube_deadline = [k = backend.kube, rest](absl::Time d) { rest->SetDeadline(d); };
    }
    // Aliasing: the store lives as long as the backend.
    set.credentials =
        std::shared_ptr<cloud::CredentialStore>(plugin->backend, &plugin->backend->credentials());
    set.accessibility_constraints =
        csi::ModeOf(csi::TopologyOf(*config)) != csi::TopologyMode::kNone;
  } else {
    // The node plugin is ready once it serves (NodeGetInfo answers Unavailable while its Node
    // lacks the configured topology labels, and the registrar retries).
    absl::StatusOr<csi::node::NodeServiceOptions> node = NodeServiceOptionsFromEnv(options, env);
    if (!node.ok()) return node.status();
    // The feature states (high-pv-node-density), followed live through the node's API access.
    auto features = std::make_shared<csi::FeatureStates>();
    node->info.features = features;
    if (node->info.client != nullptr) {
      set.feature_watch = std::make_shared<FeatureStateWatch>(
          *node->info.client, FeatureStateSourceOf(options.fss_name, options.fss_namespace, env),
          features);
      set.feature_watch->Start();
    }
    set.accessibility_constraints = csi::ModeOf(node->info.topology) != csi::TopologyMode::kNone;
    set.node = std::make_unique<csi::node::NodeService>(*std::move(node));
  }
  return set;
}

int RunCsiDriver(const CsiOptions& options, const std::map<std::string, std::string>& env,
                 absl::Notification& stop) {
  LOG_INFO("vsphere-csi-driver {} starting in {} mode on {}", kCsiVersion,
           CsiModeName(options.mode), options.endpoint);
  for (const auto& w : options.warnings) LOG_WARN("{}", w);

  metrics::Registry& registry = metrics::Registry::Default();
  // The reference's build-info gauge, same name and label.
  registry.Gauge("vsphere_csi_info", "CSI Info", {"version"})->Set({kCsiVersion}, 1);

  std::optional<cloud::ParseResult> config;
  if (options.mode == CsiMode::kController) {
    absl::StatusOr<cloud::ParseResult> r = ReadCsiConfig(options.config_path, env);
    if (!r.ok()) {
      LOG_ERROR("{}", r.status().message());
      return 1;
    }
    // Parser messages name the file and line already.
    for (const auto& w : r->warnings) LOG_WARN("{}", w);
    for (const auto& n : r->notices) LOG_INFO("{}", n);
    config = std::move(*r);
  }

  absl::StatusOr<CsiServiceSet> set =
      BuildCsiServiceSet(options, config ? &config->config : nullptr, &registry, env);
  if (!set.ok()) {
    LOG_ERROR("cannot set up the CSI services: {}", set.status().message());
    return 1;
  }

  csi::IdentityOptions io;
  io.name = std::string(csi::kDriverName);
  io.vendor_version = kCsiVersion;
  // The spec: every instance of a plugin reports the same plugin capabilities, whichever RPCs it
  // serves (the node plugin is the same plugin as the controller).
  io.controller_service = true;
  io.accessibility_constraints = set->accessibility_constraints;
  io.ready = set->ready;
  auto identity = csi::IdentityService::Create(std::move(io));
  if (!identity.ok()) {
    LOG_ERROR("{}", identity.status().message());
    return 1;
  }
  auto ready = set->ready;
  std::shared_ptr<cloud::VCenterStatus> vcenters = set->vcenters;
  std::shared_ptr<kube::EventRecorder> events = set->events;

  csi::CsiServices services;
  services.identity = std::move(*identity);
  services.controller = std::move(set->controller);
  services.node = std::move(set->node);
  csi::CsiServer server({.endpoint = options.endpoint,
                         .shutdown_grace = options.shutdown_grace,
                         .registry = &registry},
                        std::move(services));
  if (absl::Status s = server.Start(); !s.ok()) {
    LOG_ERROR("{}", s.message());
    return 1;
  }

  // The controller's /metrics (and /healthz, ours) on the reference's Prometheus port. The node
  // plugin has none, as in the reference (its liveness goes through the livenessprobe sidecar).
  std::unique_ptr<HealthServer> http;
  if (options.mode == CsiMode::kController && options.metrics_port > 0) {
    http = std::make_unique<HealthServer>(&registry);
    // Probe (the process itself) for liveness and readiness; the vCenters for readiness only.
    http->AddCheck(
        "csi-probe",
        [ready]() -> absl::Status {
          if (!ready) return absl::OkStatus();
          absl::StatusOr<bool> r = ready();
          if (!r.ok()) return r.status();
          return *r ? absl::OkStatus() : absl::UnavailableError("not ready yet");
        },
        /*liveness=*/true);
    // Each vCenter: readiness detail ("[-]vcenter-vc2 failed: ..."), never liveness.
    if (vcenters != nullptr && config) {
      for (const cloud::VirtualCenterConfig& vc : config->config.vcenters) {
        const std::string label = vc.label;
        http->AddCheck(
            absl::StrCat("vcenter-", label),
            [vcenters, label]() -> absl::Status {
              auto all = vcenters->Current();
              auto it = all.find(label);
              return it == all.end() ? absl::OkStatus() : it->second;
            },
            /*liveness=*/false);
      }
    }
    absl::StatusOr<int> port =
        http->Start(options.metrics_bind_address, options.metrics_port, /*kp=*/nullptr);
    if (!port.ok()) {
      LOG_ERROR("metrics port: {}", port.status().message());
      server.Stop();
      return 1;
    }
    LOG_INFO("serving /metrics and /healthz on {}:{}", options.metrics_bind_address, *port);
  }

  // csi-vsphere.conf changing (the mounted Secret updated): passwords rotate live, anything
  // else stops the process so that the pod restarts with the new file.
  std::unique_ptr<CsiConfigWatch> watch;
  if (config && set->credentials != nullptr) {
    watch = std::make_unique<CsiConfigWatch>(
        CsiConfigWatch::Options{options.config_path, env, options.config_check_period},
        config->config, set->credentials.get(), &stop);
    watch->Start();
  }

  stop.WaitForNotification();
  LOG_INFO("stopping: RPCs in flight get {}, their vCenter and Kubernetes calls {}",
           absl::FormatDuration(options.shutdown_grace),
           absl::FormatDuration(std::min(options.shutdown_grace, kVCenterStopBudget)));
  // Whatever vCenter does, its calls end within kVCenterStopBudget (issue 43): an RPC waiting on
  // a hung vCenter answers then (an operation record keeps a CNS task for the retry), so the
  // process exits within about 5 s of SIGTERM, inside the pod's 30 s grace.
  if (set->set_vcenter_deadline) {
    set->set_vcenter_deadline(absl::Now() + std::min(options.shutdown_grace, kVCenterStopBudget));
  }
  // Nor does a hung API server: an RPC writing its operation record ends with the request (the
  // retry after the restart finds the record or asks CNS), an informer's list ends too.
  if (set->set_kube_deadline) {
    set->set_kube_deadline(absl::Now() + std::min(options.shutdown_grace, kVCenterStopBudget));
  }
  if (watch) watch->Stop();
  if (set->feature_watch) set->feature_watch->Stop();
  server.Stop();
  if (http) http->Stop();
  if (vcenters) vcenters->Stop();
  if (events) events->Shutdown(absl::Seconds(2));
  return watch != nullptr && watch->restart_needed() ? 1 : 0;
}

}  // namespace ccm::app
