#include "app/csi/syncer.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <sstream>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "app/csi/client_rate.h"
#include "app/csi/cluster_distribution.h"
#include "app/csi/cluster_id.h"
#include "app/csi/config.h"
#include "app/csi/config_reload.h"
#include "app/csi/feature_states_watch.h"
#include "app/csi/syncer_topology.h"
#include "app/shared/health_server.h"
#include "app/shared/lease_campaign.h"
#include "app/shared/stop_deadline.h"
#include "app/shared/vcenter_metrics.h"
#include "cloud/config/config.h"
#include "cloud/credentials/credential_store.h"
#include "cloud/vsphere/vcenter.h"
#include "cloud/vsphere/vcenter_status.h"
#include "common/logging.h"
#include "common/metrics.h"
#include "csi/controller/storage_policies.h"
#include "csi/core/constants.h"
#include "csi/migration/registrar.h"
#include "csi/migration/volume_migrations.h"
#include "csi/syncer/metadata_syncer.h"
#include "csi/syncer/trigger_full_sync.h"
#include "csi/syncer/trim.h"
#include "kube/client.h"
#include "kube/config.h"
#include "kube/event_recorder.h"
#include "kube/informer.h"
#include "kube/kube_event_sink.h"
#include "kube/resource.h"
#include "vsphere/client.h"
#include "vsphere/cns/cns_client.h"
#include "vsphere/datacenter.h"
#include "vsphere/heartbeat.h"
#include "vsphere/pbm/pbm_client.h"

namespace ccm::app {
namespace {

absl::StatusOr<cloud::Config> ReadConfig(const std::string& path,
                                         const std::map<std::string, std::string>& env) {
  absl::StatusOr<cloud::ParseResult> r = ReadCsiConfig(path, env);
  if (!r.ok()) return r.status();
  for (const auto& w : r->warnings) LOG_WARN("CSI config {}: {}", path, w);
  const cloud::Config& c = r->config;
  for (const cloud::VirtualCenterConfig& vc : c.vcenters) {
    if (vc.credential_source == cloud::CredentialSourceKind::kGlobalSecret ||
        vc.credential_source == cloud::CredentialSourceKind::kVCenterSecret) {
      return absl::UnimplementedError(absl::StrCat(
          "vCenter ", vc.label,
          ": credentials from a Kubernetes Secret are not supported by the "
          "syncer; put user and password in csi-vsphere.conf or use secrets-directory"));
    }
  }
  return c;
}

// Runs every job on its own thread and waits for all.
void InParallel(std::vector<std::function<void()>> jobs) {
  std::vector<std::thread> threads;
  threads.reserve(jobs.size());
  for (auto& j : jobs) threads.emplace_back(std::move(j));
  for (std::thread& t : threads) t.join();
}

// Everything the syncer runs on; built before the Lease is sought, started when leading.
struct SyncerWiring {
  cloud::Config config;
  cloud::Config file_config;  // as read from csi-vsphere.conf (before the ConfigMap's cluster-id)
  std::unique_ptr<kube::RestClient> client;
  std::unique_ptr<kube::RestClient> informer_client;
  std::unique_ptr<cloud::CredentialStore> credentials;
  std::vector<std::unique_ptr<vsphere::Client>> vim;
  std::vector<std::unique_ptr<vsphere::cns::CnsClient>> cns;
  std::vector<csi::syncer::CnsTarget> targets;
  // In-tree volumes (CSI migration): with one vCenter only, as the reference.
  std::unique_ptr<vsphere::pbm::PbmClient> pbm;
  std::unique_ptr<csi::StoragePolicies> policies;
  // The registrar's Events (VolumeReregistered on a PV).
  std::unique_ptr<kube::KubeEventSink> registrar_sink;
  std::unique_ptr<kube::EventRecorder> registrar_events;
  // The feature states (feature_states_watch.h), followed from Wire() on.
  std::shared_ptr<csi::FeatureStates> features = std::make_shared<csi::FeatureStates>();
  std::unique_ptr<FeatureStateWatch> feature_watch;
  kube::ObjectReference pod;  // this Pod (POD_NAME, POD_NAMESPACE) for Events; name "" if unknown
  std::string csi_namespace = "vmware-system-csi";  // CSI_NAMESPACE

  // Each vCenter: answering (vsphere::AnswerTracker) and logged in.
  std::map<std::string, absl::Status> VCenterHealth() const {
    std::map<std::string, absl::Status> out;
    for (size_t i = 0; i < vim.size(); ++i) {
      absl::Status s = vim[i]->Answering();
      const vsphere::SessionStatus session = vim[i]->session_status();
      if (s.ok() && session.state == vsphere::SessionState::kLoginFailed) {
        s = absl::UnavailableError(
            absl::StrCat("login failed: ", session.last_login_error.message()));
      }
      out[config.vcenters[i].label] = s;
    }
    return out;
  }

  // A hung vCenter reported while leading (issue 43): heartbeats keep a quiet vCenter asked (the
  // syncer may make no request for a full-sync period), and its state goes to a gauge, the log
  // and Events on this Pod.
  struct VCenterWatch {
    std::vector<std::unique_ptr<vsphere::Heartbeat>> beats;
    std::unique_ptr<kube::KubeEventSink> sink;
    std::unique_ptr<kube::EventRecorder> events;
    std::unique_ptr<cloud::VCenterStatus> status;
    void Stop() {
      for (auto& b : beats) b->Stop();
      if (status) status->Stop();
      if (events) events->Shutdown(absl::Seconds(1));
    }
  };
  std::unique_ptr<VCenterWatch> WatchVCenters(absl::Duration hang_timeout) {
    auto v = std::make_unique<VCenterWatch>();
    for (auto& c : vim) {
      v->beats.push_back(
          std::make_unique<vsphere::Heartbeat>(*c, vsphere::HeartbeatOptions::For(hang_timeout)));
      v->beats.back()->Start();
    }
    cloud::VCenterStatusOptions so;
    so.source = [this] { return VCenterHealth(); };
    so.registry = &metrics::Registry::Default();
    so.gauge = "vsphere_syncer_vcenter_ready";
    so.gauge_help = "1 when the vCenter answers and the syncer's session is up (leader only).";
    so.effect = "the CNS metadata of its volumes waits until it answers";
    if (!pod.name.empty()) {
      v->sink = std::make_unique<kube::KubeEventSink>(*client);
      kube::EventRecorderOptions eo;
      eo.component = "vsphere-syncer";
      v->events = std::make_unique<kube::EventRecorder>(*v->sink, eo);
      so.events = v->events.get();
      so.object = pod;
    }
    v->status = std::make_unique<cloud::VCenterStatus>(std::move(so));
    v->status->Start();
    return v;
  }

  std::unique_ptr<csi::InTreeRegistrar> Registrar(csi::VolumeMigrations& migrations) {
    const cloud::VirtualCenterConfig& vc = config.vcenters.front();
    pbm = std::make_unique<vsphere::pbm::PbmClient>(*vim.front());
    policies = std::make_unique<csi::StoragePolicies>(*pbm, csi::StoragePoliciesOptions{vc.label});
    csi::InTreeRegistrarOptions ro;
    ro.vcenter_host = vc.server;
    vsphere::Client* client = vim.front().get();
    const std::vector<std::string> configured = vc.datacenters;
    ro.datacenters = [client, configured] { return vsphere::DatacenterPaths(*client, configured); };
    ro.cluster.cluster_id = config.global.cluster_id;
    ro.cluster.vsphere_user = targets.front().vsphere_user;
    ro.cluster.cluster_distribution = config.global.cluster_distribution;
    ro.policy_id_of = [this](const std::string& name) { return policies->IdOf(name); };
    registrar_sink = std::make_unique<kube::KubeEventSink>(*this->client);
    kube::EventRecorderOptions eo;
    eo.component = "vsphere-syncer";
    registrar_events = std::make_unique<kube::EventRecorder>(*registrar_sink, eo);
    ro.events = registrar_events.get();
    return std::make_unique<csi::InTreeRegistrar>(*cns.front(), migrations, std::move(ro));
  }

  // Full syncs on demand through TriggerCsiFullSync "csifullsync", with the feature state
  // trigger-csi-fullsync on when leading starts, and one vCenter (both as the reference).
  struct TriggeredFullSync {
    std::unique_ptr<kube::KubeEventSink> sink;
    std::unique_ptr<kube::EventRecorder> events;
    std::unique_ptr<csi::syncer::TriggerFullSyncController> controller;
  };
  std::unique_ptr<TriggeredFullSync> StartTriggeredFullSync(csi::syncer::MetadataSyncer& syncer) {
    if (!features->Enabled(csi::kFssTriggerCsiFullSync)) return nullptr;
    if (targets.size() != 1) {
      LOG_INFO("TriggerCsiFullSync is not served with {} vCenters (as the reference)",
               targets.size());
      return nullptr;
    }
    auto t = std::make_unique<TriggeredFullSync>();
    t->sink = std::make_unique<kube::KubeEventSink>(*client);
    kube::EventRecorderOptions eo;
    eo.component = "cns.vmware.com";
    t->events = std::make_unique<kube::EventRecorder>(*t->sink, eo);
    t->controller = std::make_unique<csi::syncer::TriggerFullSyncController>(
        *client, [&syncer] { return syncer.FullSyncNow(); }, t->events.get());
    if (absl::Status s = t->controller->Start(); !s.ok()) {
      LOG_ERROR("TriggerCsiFullSync: {} (full syncs on demand are off)", s.message());
      return nullptr;
    }
    LOG_INFO("TriggerCsiFullSync {}: full syncs on demand", csi::syncer::kTriggerCsiFullSyncName);
    return t;
  }

  // Runs informers and syncer until `stop`.
  void Lead(const CsiSyncerOptions& o, const absl::Notification& stop) {
    // Each cache keeps only what the syncer compares (csi/syncer/trim.h), CBOR-encoded.
    kube::InformerOptions pv_o, pvc_o, pod_o;
    pv_o.compact_store = pvc_o.compact_store = pod_o.compact_store = true;
    pv_o.transform = csi::syncer::TrimPvForSyncer;
    pvc_o.transform = csi::syncer::TrimPvcForSyncer;
    pod_o.transform = csi::syncer::TrimPodForSyncer;
    kube::Informer pvs(*informer_client, kube::PersistentVolumes(), std::move(pv_o));
    kube::Informer pvcs(*informer_client, kube::PersistentVolumeClaims(), std::move(pvc_o));
    kube::Informer pods(*informer_client, kube::Pods(), std::move(pod_o));
    csi::syncer::MetadataSyncerOptions so;
    so.cluster_id = config.global.cluster_id;
    so.cluster_distribution = config.global.cluster_distribution;
    so.full_sync_period = o.full_sync_interval;
    so.workers = o.workers;
    so.query_page = std::min(1000, std::max(1, config.global.query_limit));
    so.registry = &metrics::Registry::Default();
    // pv-to-backingdiskobjectid-mapping, followed live (asked at each full sync).
    so.map_backing_objects = [f = features] {
      return f->Enabled(csi::kFssPvToBackingDiskObjectIdMapping);
    };
    so.pvc_writer = client.get();
    csi::KubeVolumeMigrations migrations(*informer_client);
    std::unique_ptr<csi::InTreeRegistrar> registrar;
    if (targets.size() == 1) {
      registrar = Registrar(migrations);
      so.migrations = &migrations;
      so.migrations_informer = &migrations.informer();
      so.registrar = registrar.get();
      migrations.Start();
    } else {
      LOG_INFO(
          "in-tree vSphere volumes are not registered with CNS: {} vCenters are configured "
          "(CSI migration supports one, as the reference driver)",
          targets.size());
    }
    // Several vCenters: the CnsVolumeInfo records, kept as the reference's full sync keeps them.
    std::unique_ptr<csi::syncer::KubeVolumeInfoStore> volume_infos;
    if (targets.size() > 1) {
      volume_infos = std::make_unique<csi::syncer::KubeVolumeInfoStore>(*client, csi_namespace);
      so.volume_infos = volume_infos.get();
    }
    csi::syncer::MetadataSyncer syncer(pvs, pvcs, pods, targets, std::move(so));
    for (kube::Informer* i : {&pvs, &pvcs, &pods}) i->Start();
    syncer.Start();
    LOG_INFO("CNS metadata syncer running for cluster-id {} (full sync every {})",
             config.global.cluster_id, absl::FormatDuration(o.full_sync_interval));
    std::unique_ptr<TriggeredFullSync> triggered = StartTriggeredFullSync(syncer);
    std::vector<vsphere::Client*> sessions;
    for (auto& v : vim) sessions.push_back(v.get());
    // Its own token bucket (--kube-api-qps/--kube-api-burst per controller, as the Go binaries).
    std::unique_ptr<kube::RestClient> topology_client = client->WithOwnRateLimit("csinodetopology");
    SyncerNodeTopology topology(config, sessions, *credentials, *topology_client);
    topology.Start();
    std::unique_ptr<VCenterWatch> watch = WatchVCenters(o.vcenter_hang_timeout);
    stop.WaitForNotification();
    // No call on a hung vCenter holds the stop (issue 43): those under way end within the budget.
    const absl::Time deadline = absl::Now() + cloud::VCenter::kStopBudget;
    for (auto& v : vim) v->SetDeadline(deadline);
    // All in parallel, so that the Lease is released (after this) within the budget: the
    // heartbeat and the workers wait out the vCenter deadline at worst, each informer takes up
    // to a second to notice its watch ended (the stores stay readable meanwhile).
    topology.SetDeadline(deadline);
    std::vector<std::function<void()>> stops = {
        [&watch] { watch->Stop(); },
        [&topology] { topology.Stop(); },
        [&triggered, &syncer] {
          triggered.reset();
          syncer.Stop();
        },
        [&migrations] { migrations.Stop(); },
    };
    for (kube::Informer* i : {&pvs, &pvcs, &pods}) stops.push_back([i] { i->Stop(); });
    InParallel(std::move(stops));
  }
};

absl::StatusOr<std::unique_ptr<SyncerWiring>> Wire(const CsiSyncerOptions& o,
                                                   const std::map<std::string, std::string>& env) {
  auto w = std::make_unique<SyncerWiring>();
  absl::StatusOr<cloud::Config> config = ReadConfig(o.config_path, env);
  if (!config.ok()) return config.status();
  w->config = *std::move(config);
  w->file_config = w->config;
  absl::StatusOr<kube::Config> kc = kube::BuildConfig(o.master, o.kubeconfig);
  if (!kc.ok()) return kc.status();
  // The reference's in-cluster client rate (INCLUSTER_CLIENT_QPS / _BURST).
  ClientRate rate = InClusterClientRate(env);
  for (const std::string& w : rate.warnings) LOG_WARN("{}", w);
  LOG_INFO("{}", DescribeClientRate(rate));
  kc->qps = rate.qps;
  kc->burst = rate.burst;
  auto client = kube::RestClient::New(*kc);
  if (!client.ok()) return client.status();
  w->client = *std::move(client);
  // No cluster-id in csi-vsphere.conf: the controller's, from ConfigMap vsphere-csi-cluster-id
  // (made here when the syncer starts first).
  if (auto it = env.find("CSI_NAMESPACE"); it != env.end() && !it->second.empty()) {
    w->csi_namespace = it->second;
  }
  absl::StatusOr<std::string> id =
      ResolveClusterId(*w->client, w->csi_namespace, w->config.global.cluster_id);
  if (!id.ok()) return id.status();
  w->config.global.cluster_id = *id;
  // No cluster-distribution in csi-vsphere.conf: the API server's, as the reference's syncer.
  absl::StatusOr<std::string> distribution =
      ResolveClusterDistribution(*w->client, w->config.global.cluster_distribution);
  if (!distribution.ok()) return distribution.status();
  w->config.global.cluster_distribution = *distribution;
  w->informer_client = w->client->WithOwnRateLimit("vsphere-syncer");
  w->feature_watch = std::make_unique<FeatureStateWatch>(
      *w->client, FeatureStateSourceOf(o.fss_name, o.fss_namespace, env), w->features);
  w->feature_watch->Start();
  auto pod = env.find("POD_NAME"), pod_ns = env.find("POD_NAMESPACE");
  if (pod != env.end() && pod_ns != env.end() && !pod->second.empty()) {
    w->pod = {.kind = "Pod", .ns = pod_ns->second, .name = pod->second, .api_version = "v1"};
  }
  w->credentials = std::make_unique<cloud::CredentialStore>(w->config, nullptr);
  if (absl::Status s = w->credentials->Start(); !s.ok()) {
    return absl::Status(s.code(), absl::StrCat("vCenter credentials: ", s.message()));
  }
  for (const cloud::VirtualCenterConfig& vc : w->config.vcenters) {
    // vCenter requests and CNS operations counted like the controller's.
    metrics::Registry& registry = metrics::Registry::Default();
    vsphere::ClientOptions co = cloud::ClientOptionsFor(vc);
    co.observer = CsiRequestObserver(registry, vc.server);
    co.answer_within = o.vcenter_hang_timeout;
    co.user_agent = csi::CsiUserAgent(w->config.global.cluster_id, "syncer");
    w->vim.push_back(std::make_unique<vsphere::Client>(co, w->credentials.get()));
    vsphere::cns::CnsClientOptions cno;
    cno.observer = CnsOperationsObserver(registry);
    w->cns.push_back(std::make_unique<vsphere::cns::CnsClient>(*w->vim.back(), cno));
    auto creds = w->credentials->Get(vc.server);
    w->targets.push_back({vc.label, w->cns.back().get(), creds.ok() ? creds->username : vc.user});
  }
  return w;
}

// Runs the syncer under the Lease until `stop` (0) or the Lease is lost (1); -1 when the election
// could not be set up (logged).
int LeadUnderLease(const CsiSyncerOptions& o, SyncerWiring& w, const absl::Notification& stop) {
  LeaseCampaignOptions lo;
  lo.ns = !o.leader_election_namespace.empty() ? o.leader_election_namespace
                                               : w.client->DefaultNamespace();
  lo.name = kSyncerLeaseName;
  lo.lease_duration = o.lease_duration;
  lo.renew_deadline = o.renew_deadline;
  lo.retry_period = o.retry_period;
  auto campaign = LeaseCampaign::New(*w.client, lo, [&](const std::string& identity) {
    kube::LeaderCallbacks cb;
    cb.on_started_leading = [&, identity](const absl::Notification& stop_leading) {
      LOG_INFO("became leader of {}/{} ({})", lo.ns, lo.name, identity);
      w.Lead(o, stop_leading);
    };
    cb.on_stopped_leading = [&] {
      if (!stop.HasBeenNotified()) LOG_ERROR("lost the Lease {}/{}: exiting", lo.ns, lo.name);
    };
    cb.on_new_leader = [identity](const std::string& id) {
      if (id != identity) LOG_INFO("syncer leader is {}", id);
    };
    return cb;
  });
  if (!campaign.ok()) {
    LOG_ERROR("{}", campaign.status().message());
    return -1;
  }
  return (*campaign)->Run(stop) ? 1 : 0;
}

}  // namespace

int RunCsiSyncer(const CsiSyncerOptions& o, const std::map<std::string, std::string>& env,
                 absl::Notification& stop) {
  LOG_INFO("vsphere-csi-driver {} starting in syncer mode", CCM_VERSION);
  for (const auto& warning : o.warnings) LOG_WARN("{}", warning);
  absl::StatusOr<std::unique_ptr<SyncerWiring>> wiring = Wire(o, env);
  if (!wiring.ok()) {
    LOG_ERROR("syncer: {}", wiring.status().message());
    return 1;
  }
  SyncerWiring& w = **wiring;
  metrics::Registry& registry = metrics::Registry::Default();
  // The reference's build-info gauge, same name and label.
  registry.Gauge("vsphere_syncer_info", "Syncer Info", {"version"})->Set({CCM_VERSION}, 1);
  std::unique_ptr<HealthServer> http;
  if (o.metrics_port > 0) {
    http = std::make_unique<HealthServer>(&registry);
    for (const cloud::VirtualCenterConfig& vc : w.config.vcenters) {
      http->AddCheck(
          absl::StrCat("vcenter-", vc.label),
          [&w, label = vc.label] { return w.VCenterHealth()[label]; }, /*liveness=*/false);
    }
    absl::StatusOr<int> port = http->Start(o.metrics_bind_address, o.metrics_port, nullptr);
    if (!port.ok()) {
      LOG_ERROR("syncer metrics port: {}", port.status().message());
      return 1;
    }
    LOG_INFO("serving /metrics and /healthz on {}:{}", o.metrics_bind_address, *port);
  }

  // csi-vsphere.conf changing: passwords rotate live, anything else restarts (config_reload.h).
  CsiConfigWatch watch({o.config_path, env, o.config_check_period}, w.file_config,
                       w.credentials.get(), &stop);
  watch.Start();
  // A hung API server holds no part of the stop (issue 43): the lease release goes first.
  // The feature-state watch is not needed to stop: it ends now, not after the release.
  StopDeadline kube_deadline(stop, kKubeStopBudget, [&w](absl::Time d) {
    w.client->SetDeadline(d);
    w.feature_watch->Stop();
  });
  int code = 0;
  if (!o.leader_election) {
    w.Lead(o, stop);
  } else {
    code = LeadUnderLease(o, w, stop);
    if (code < 0) {
      watch.Stop();
      if (http) http->Stop();
      return 1;
    }
  }
  watch.Stop();
  if (http) http->Stop();
  w.feature_watch->Stop();
  w.credentials->Stop();
  return watch.restart_needed() ? 1 : code;
}

bool IsCsiSyncerMode(const std::map<std::string, std::string>& env) {
  auto it = env.find("X_CSI_MODE");
  return it != env.end() && absl::EqualsIgnoreCase(it->second, "syncer");
}

}  // namespace ccm::app
