#include "integration/csi/syncer_env.h"

#include <stdlib.h>
#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <fstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "fixtures/vcsim/sim_client_options.h"
#include "kube/config.h"
#include "kube/kube_event_sink.h"
#include "kube/objects.h"
#include "kube/rate_limiter.h"
#include "kube/resource.h"
#include "testing/eventually.h"
#include "vsphere/property_collector.h"

namespace ccm::csi::syncer::testing {
namespace {

using nlohmann::json;

constexpr char kSpec[] = R"({
  "users": {"admin": "secret"},
  "datacenters": [{
    "name": "dc1",
    "clusters": [{"name": "c1", "hosts": 1, "vsan_file_services": true}],
    "vms": [{"name": "node-1"}],
    "datastores": [{"name": "ds1", "capacity_mb": 102400},
                   {"name": "vsan1", "capacity_mb": 102400, "type": "vsan"}]
  }]
})";

absl::Status Put(ccm::testing::KubeEmulator& emu, const std::string& resource, const json& obj) {
  absl::StatusOr<json> r = emu.Put(resource, obj);
  return r.ok() ? absl::OkStatus() : r.status();
}

}  // namespace

std::set<std::string> ControllerGrants() {
  std::set<std::string> allowed;
  for (const YAML::Node& d :
       YAML::LoadAllFromFile(CCM_SOURCE_DIR "/manifests/vsphere-csi-driver.yaml")) {
    if (!d.IsMap() || !d["kind"] || !d["metadata"]) continue;
    const std::string kind = d["kind"].as<std::string>();
    const std::string name = d["metadata"]["name"].as<std::string>();
    if (!((kind == "ClusterRole" && name == "vsphere-csi-controller-role") ||
          (kind == "Role" && absl::StartsWith(name, "vsphere-csi-controller-")))) {
      continue;
    }
    for (const auto& rule : d["rules"])
      for (const auto& r : rule["resources"])
        for (const auto& v : rule["verbs"])
          allowed.insert(v.as<std::string>() + " " + r.as<std::string>());
  }
  return allowed;
}

SyncerEnv::SyncerEnv() {
  char tmpl[] = "/tmp/csi-syncer-XXXXXX";
  dir_ = mkdtemp(tmpl);
}

SyncerEnv::~SyncerEnv() {
  StopSyncer();
  if (migrations_) migrations_->Stop();
  emu_.Stop();
  if (factory_) factory_->Stop();
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

absl::Status SyncerEnv::StartSecondVCenter() {
  auto p = ccm::testing::VcsimProcess::Start(kSpec);
  if (!p.ok()) return p.status();
  vcsim2_ = *std::move(p);
  vim2_ =
      std::make_unique<vsphere::Client>(ccm::testing::SimClientOptions(vcsim2_->info()), &creds_);
  cns2_ = std::make_unique<vsphere::cns::CnsClient>(*vim2_);
  auto ds = vsphere::RetrieveAllOfType(*vim2_, "Datastore", {"name"});
  if (!ds.ok()) return ds.status();
  for (const vsphere::ObjectContent& o : *ds) {
    if (o.GetText("name") == "ds1") datastore2_ = o.obj;
  }
  json crd = {{"apiVersion", "apiextensions.k8s.io/v1"},
              {"kind", "CustomResourceDefinition"},
              {"metadata", {{"name", "cnsvolumeinfoes.cns.vmware.com"}}},
              {"spec", {{"group", "cns.vmware.com"}}}};
  absl::StatusOr<json> made = emu_.Create("customresourcedefinitions", crd);
  if (!made.ok()) return made.status();
  volume_infos_ = std::make_unique<KubeVolumeInfoStore>(*rest_, "vmware-system-csi");
  return absl::OkStatus();
}

absl::StatusOr<std::string> SyncerEnv::CreateVolumeInSecond(const std::string& name) {
  vsphere::cns::CreateSpec s;
  s.name = name;
  s.capacity_mb = 1024;
  s.datastores = {datastore2_};
  s.metadata.container_cluster.cluster_id = kClusterId;
  s.metadata.container_cluster.vsphere_user = "admin";
  auto r = cns2_->CreateVolume(s);
  if (!r.ok()) return r.status();
  return r->volume_id;
}

std::map<std::string, std::string> SyncerEnv::VolumeInfos() {
  auto all =
      volume_infos_ ? volume_infos_->List() : absl::StatusOr<std::map<std::string, std::string>>{};
  return all.ok() ? *all : std::map<std::string, std::string>{};
}

absl::Status SyncerEnv::Start(bool start_syncer, bool two_vcenters) {
  auto p = ccm::testing::VcsimProcess::Start(kSpec);
  if (!p.ok()) return p.status();
  vcsim_ = *std::move(p);
  vsphere::ClientOptions o = ccm::testing::SimClientOptions(vcsim_->info());
  vim_ = std::make_unique<vsphere::Client>(std::move(o), &creds_);
  cns_ = std::make_unique<vsphere::cns::CnsClient>(*vim_);
  gated_ = std::make_unique<ccm::testing::GatedVolumeManager>(*cns_);
  vcenter_ = "127.0.0.1";
  auto ds = vsphere::RetrieveAllOfType(*vim_, "Datastore", {"name"});
  if (!ds.ok()) return ds.status();
  for (const vsphere::ObjectContent& o : *ds) {
    if (o.GetText("name") == "ds1") datastore_ = o.obj;
    if (o.GetText("name") == "vsan1") vsan_datastore_ = o.obj;
  }
  if (datastore_.empty() || vsan_datastore_.empty()) {
    return absl::InternalError("the simulator lacks datastore ds1 or vsan1");
  }

  absl::StatusOr<std::string> url = emu_.Start();
  if (!url.ok()) return url.status();
  const std::string kubeconfig = dir_ + "/kubeconfig";
  if (absl::Status s = emu_.WriteKubeconfig(kubeconfig); !s.ok()) return s;
  for (const char* ns : {"ns1", "ns2", "vmware-system-csi"}) {
    absl::StatusOr<json> n = emu_.Create("namespaces", {{"metadata", {{"name", ns}}}});
    if (!n.ok()) return n.status();
  }
  absl::StatusOr<kube::Config> config = kube::LoadKubeconfig(kubeconfig);
  if (!config.ok()) return config.status();
  config->qps = 1000;
  config->burst = 1000;
  auto rc = kube::RestClient::New(*config);
  if (!rc.ok()) return rc.status();
  rest_ = *std::move(rc);
  kube::InformerOptions io;
  io.backoff = {absl::Milliseconds(50), absl::Milliseconds(500), 2.0, 0.0};
  factory_ = std::make_unique<kube::SharedInformerFactory>(*rest_, io);
  pvs_ = &factory_->For(kube::PersistentVolumes());
  pvcs_ = &factory_->For(kube::PersistentVolumeClaims());
  pods_ = &factory_->For(kube::Pods());
  factory_->Start();
  if (!factory_->WaitForSync(absl::Seconds(20))) return absl::DeadlineExceededError("sync");
  migrations_ = std::make_unique<KubeVolumeMigrations>(*rest_);
  migrations_->Start();
  InTreeRegistrarOptions ro;
  ro.vcenter_host = vcenter_;
  ro.datacenters = []() -> absl::StatusOr<std::vector<std::string>> {
    return std::vector<std::string>{"dc1"};
  };
  ro.cluster.cluster_id = kClusterId;
  ro.cluster.vsphere_user = "admin";
  ro.cluster.cluster_flavor = "VANILLA";
  event_sink_ = std::make_unique<kube::KubeEventSink>(*rest_);
  events_ = std::make_unique<kube::EventRecorder>(*event_sink_);
  ro.events = events_.get();
  registrar_ = std::make_unique<InTreeRegistrar>(*cns_, *migrations_, std::move(ro));
  if (two_vcenters) {
    if (absl::Status s = StartSecondVCenter(); !s.ok()) return s;
  }
  return start_syncer ? StartSyncer() : absl::OkStatus();
}

namespace {
// Whether `informer` holds every object of `resource` the emulator has, at its resourceVersion.
bool CaughtUp(ccm::testing::KubeEmulator& emu, const char* resource, kube::Informer& informer) {
  for (const json& o : emu.List(resource)) {
    kube::ObjectPtr got = informer.Get(kube::ObjectKey(o));
    if (got == nullptr || kube::ResourceVersion(*got) != kube::ResourceVersion(o)) return false;
  }
  return true;
}
}  // namespace

absl::Status SyncerEnv::StartSyncer() {
  if (!ccm::testing::Eventually([&] {
        return CaughtUp(emu_, "persistentvolumes", *pvs_) &&
               CaughtUp(emu_, "persistentvolumeclaims", *pvcs_) && CaughtUp(emu_, "pods", *pods_);
      })) {
    return absl::DeadlineExceededError("the informers did not catch up with the emulator");
  }
  registry_ = std::make_unique<metrics::Registry>();
  MetadataSyncerOptions so;
  so.cluster_id = kClusterId;
  so.full_sync_period = kPeriod;
  so.clock = &clock_;
  so.registry = registry_.get();
  so.query_page = 2;  // several pages with a handful of volumes
  so.rate_limiter =
      std::make_unique<kube::ItemExponentialRateLimiter>(absl::Seconds(1), absl::Seconds(8));
  so.migrations = migrations_.get();
  so.migrations_informer = &migrations_->informer();
  so.registrar = registrar_.get();
  so.map_backing_objects = [this] { return map_backing_objects.load(); };
  so.pvc_writer = rest_.get();
  std::vector<CnsTarget> targets = {{vcenter_, gated_.get(), "admin"}};
  if (cns2_) {  // several vCenters: no in-tree volumes (as the reference), CnsVolumeInfo kept
    targets.push_back({kSecondVCenter, cns2_.get(), "admin"});
    so.migrations = nullptr;
    so.migrations_informer = nullptr;
    so.registrar = nullptr;
    so.volume_infos = volume_infos_.get();
  }
  syncer_ =
      std::make_unique<MetadataSyncer>(*pvs_, *pvcs_, *pods_, std::move(targets), std::move(so));
  const absl::Time start = clock_.Now();
  syncer_->Start();
  if (!ccm::testing::Eventually([&] { return syncer_->stats().full_syncs >= 1; })) {
    return absl::DeadlineExceededError("the first full sync did not end");
  }
  // The periodic loop computes its first wake-up from the time it starts: it must be asleep
  // before a test advances the clock, or that advance is not a period for it.
  if (!clock_.WaitForSleeperUntil(start + kPeriod)) {
    return absl::DeadlineExceededError("the syncer's periodic full sync did not start");
  }
  return absl::OkStatus();
}

void SyncerEnv::StopSyncer() { syncer_.reset(); }

void SyncerEnv::WriteCsiConf(const std::string& path, const std::string& cluster_id,
                             const std::string& password, const std::string& extra) {
  const std::string url = vcsim_->info().url;  // https://127.0.0.1:PORT/sdk
  const std::string port = url.substr(url.rfind(':') + 1, url.find("/sdk") - url.rfind(':') - 1);
  std::ofstream out(path);
  if (!cluster_id.empty()) out << "[Global]\ncluster-id = \"" << cluster_id << "\"\n\n";
  out << "[VirtualCenter \"127.0.0.1\"]\nport = \"" << port << "\"\n"
      << "user = \"admin\"\npassword = \"" << password << "\"\n"
      << "ca-file = \"" << vcsim_->info().ca_file << "\"\n"
      << "datacenters = \"dc1\"\n"
      << extra;
}

absl::StatusOr<std::string> SyncerEnv::CreateVolume(const std::string& name,
                                                    const std::string& cluster_id, bool vsan,
                                                    bool file) {
  vsphere::cns::CreateSpec s;
  s.name = name;
  if (file) {
    s.volume_type = vsphere::cns::kVolumeTypeFile;
    s.permissions = {{"*", "READ_WRITE", true}};
    vsan = true;
  }
  s.capacity_mb = 1024;
  s.datastores = {vsan ? vsan_datastore_ : datastore_};
  s.metadata.container_cluster.cluster_id = cluster_id;
  s.metadata.container_cluster.vsphere_user = "admin";
  auto r = cns_->CreateVolume(s);
  if (!r.ok()) return r.status();
  return r->volume_id;
}

absl::StatusOr<vsphere::cns::Volume> SyncerEnv::Volume(const std::string& volume_id) {
  vsphere::cns::QueryFilter f;
  f.volume_ids = {volume_id};
  auto r = cns_->QueryVolume(f);
  if (!r.ok()) return r.status();
  if (r->volumes.empty()) return absl::NotFoundError(volume_id);
  return r->volumes.front();
}

std::vector<vsphere::cns::EntityMetadata> SyncerEnv::Entities(const std::string& volume_id) {
  auto v = Volume(volume_id);
  return v.ok() ? v->metadata.entity_metadata : std::vector<vsphere::cns::EntityMetadata>{};
}

bool SyncerEnv::HasEntity(const std::string& volume_id, const std::string& type,
                          const std::string& name, const std::string& ns) {
  for (const auto& e : Entities(volume_id)) {
    if (e.entity_type == type && e.entity_name == name && e.namespace_name == ns &&
        e.cluster_id == kClusterId) {
      return true;
    }
  }
  return false;
}

absl::Status SyncerEnv::PutPv(const std::string& name, const std::string& handle,
                              const std::string& claim_ns, const std::string& claim,
                              const std::string& driver) {
  json pv = {{"apiVersion", "v1"},
             {"kind", "PersistentVolume"},
             {"metadata", {{"name", name}, {"labels", {{"backup", "daily"}}}}},
             {"spec",
              {{"capacity", {{"storage", "1Gi"}}},
               {"accessModes", {"ReadWriteOnce"}},
               {"persistentVolumeReclaimPolicy", "Retain"},
               {"csi", {{"driver", driver}, {"volumeHandle", handle}, {"fsType", "ext4"}}}}},
             {"status", {{"phase", claim.empty() ? "Available" : "Bound"}}}};
  if (!claim.empty()) {
    pv["spec"]["claimRef"] = {
        {"kind", "PersistentVolumeClaim"}, {"namespace", claim_ns}, {"name", claim}};
  }
  return Put(emu_, "persistentvolumes", pv);
}

absl::Status SyncerEnv::PutInTreePv(const std::string& name, const std::string& volume_path,
                                    const std::string& claim_ns, const std::string& claim,
                                    bool migrated) {
  json pv = {{"apiVersion", "v1"},
             {"kind", "PersistentVolume"},
             {"metadata", {{"name", name}, {"labels", {{"backup", "weekly"}}}}},
             {"spec",
              {{"capacity", {{"storage", "1Gi"}}},
               {"accessModes", {"ReadWriteOnce"}},
               {"persistentVolumeReclaimPolicy", "Retain"},
               {"vsphereVolume", {{"volumePath", volume_path}, {"fsType", "ext4"}}},
               {"claimRef",
                {{"kind", "PersistentVolumeClaim"}, {"namespace", claim_ns}, {"name", claim}}}}},
             {"status", {{"phase", "Bound"}}}};
  if (migrated) {
    pv["metadata"]["annotations"] = {
        {"pv.kubernetes.io/provisioned-by", "kubernetes.io/vsphere-volume"},
        {"pv.kubernetes.io/migrated-to", "csi.vsphere.vmware.com"}};
  }
  return Put(emu_, "persistentvolumes", pv);
}

absl::StatusOr<json> SyncerEnv::Migration(const std::string& volume_id) {
  return emu_.Get("cnsvspherevolumemigrations", "", volume_id);
}

absl::Status SyncerEnv::PutPvc(const std::string& ns, const std::string& name,
                               const std::string& volume, const json& labels) {
  json pvc = {{"apiVersion", "v1"},
              {"kind", "PersistentVolumeClaim"},
              {"metadata", {{"name", name}, {"namespace", ns}, {"labels", labels}}},
              {"spec",
               {{"accessModes", {"ReadWriteOnce"}},
                {"resources", {{"requests", {{"storage", "1Gi"}}}}},
                {"volumeName", volume}}},
              {"status", {{"phase", "Bound"}}}};
  return Put(emu_, "persistentvolumeclaims", pvc);
}

absl::Status SyncerEnv::PutPod(const std::string& ns, const std::string& name,
                               const std::string& claim, const std::string& phase) {
  json pod = {
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata", {{"name", name}, {"namespace", ns}, {"labels", {{"app", name}}}}},
      {"spec",
       {{"containers", {{{"name", "c"}, {"image", "busybox"}}}},
        {"volumes", {{{"name", "data"}, {"persistentVolumeClaim", {{"claimName", claim}}}}}}}},
      {"status", {{"phase", phase}}}};
  return Put(emu_, "pods", pod);
}

absl::Status SyncerEnv::SetLabels(const std::string& resource, const std::string& ns,
                                  const std::string& name, const json& labels) {
  absl::StatusOr<json> obj = emu_.Get(resource, ns, name);
  if (!obj.ok()) return obj.status();
  (*obj)["metadata"]["labels"] = labels;
  return Put(emu_, resource, *obj);
}

bool SyncerEnv::RunFullSync() {
  const int64_t before = syncer_->stats().full_syncs + syncer_->stats().full_sync_failures;
  clock_.Advance(kPeriod);
  return ccm::testing::Eventually([&] {
    SyncerStats s = syncer_->stats();
    return s.full_syncs + s.full_sync_failures > before;
  });
}

}  // namespace ccm::csi::syncer::testing
