#include "csi/controller/controller_backend.h"

#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/logging.h"
#include "csi/controller/file_services.h"
#include "csi/core/constants.h"
#include "kube/kube_event_sink.h"
#include "vsphere/datacenter.h"

namespace ccm::csi {

TopologyConfig TopologyOf(const cloud::Config& config) {
  TopologyConfig t;
  t.zone_category = config.labels.zone;
  t.region_category = config.labels.region;
  t.topology_categories = config.labels.topology_categories;
  t.category_labels = config.labels.category_labels;
  return t;
}

absl::Status CheckVCenterLimits(const cloud::Config& config) {
  const size_t n = config.vcenters.size();
  if (n > kMaxVCenters) {
    return absl::InvalidArgumentError(
        absl::StrCat(n, " [VirtualCenter] sections: at most ", kMaxVCenters,
                     " vCenters are supported in a multi-vCenter deployment (as the reference)"));
  }
  if (n > 1 && config.labels.topology_categories.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        n,
        " [VirtualCenter] sections: a multi-vCenter deployment requires [Labels] "
        "topology-categories (as the reference), so that each volume is placed in the vCenter "
        "of the zone it is requested in"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<ControllerBackend>> ControllerBackend::Create(
    const cloud::Config& config, BackendOptions options) {
  if (config.vcenters.empty()) {
    return absl::InvalidArgumentError("csi-vsphere.conf configures no vCenter");
  }
  // Every volume is created under the container cluster; listing and the CreateVolume name
  // look-up are scoped to it. Without one, volumes of other clusters would be seen as ours.
  if (config.global.cluster_id.empty()) {
    return absl::InvalidArgumentError(
        "csi-vsphere.conf: [Global] cluster-id is required without Kubernetes API access (with "
        "it, the controller keeps a generated one in ConfigMap vsphere-csi-cluster-id): a unique "
        "name for this Kubernetes cluster, at most 64 characters, the same for the syncer");
  }
  if (absl::Status s = CheckVCenterLimits(config); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("csi-vsphere.conf: ", s.message()));
  }
  for (const cloud::VirtualCenterConfig& vc : config.vcenters) {
    if (vc.credential_source == cloud::CredentialSourceKind::kGlobalSecret ||
        vc.credential_source == cloud::CredentialSourceKind::kVCenterSecret) {
      return absl::UnimplementedError(absl::StrCat(
          "vCenter ", vc.label, ": credentials from the Kubernetes Secret ", vc.secret_namespace,
          "/", vc.secret_name,
          " are not supported by vsphere-csi-driver yet; put user and password in "
          "csi-vsphere.conf (the reference's vsphere-config-secret holds the whole file) or use "
          "secrets-directory"));
    }
  }
  auto b = std::unique_ptr<ControllerBackend>(new ControllerBackend());
  b->config_ = config;
  b->topology_ = TopologyOf(config);
  b->clean_operations_ = options.clean_operations;
  b->credentials_ = std::make_unique<cloud::CredentialStore>(b->config_, nullptr);

  const absl::Duration interval =
      options.datastore_interval > absl::ZeroDuration()
          ? options.datastore_interval
          : absl::Minutes(
                std::max(1, config.global.csi_fetch_preferred_datastores_interval_minutes));
  std::vector<DatastoreSource> sources;
  for (const cloud::VirtualCenterConfig& vcc : b->config_.vcenters) {
    cloud::VCenterOptions vo;
    if (options.observer_for) vo.observer = options.observer_for(vcc.server);
    vo.max_wait_seconds = options.max_wait_seconds;
    vo.hang_timeout = options.vcenter_hang_timeout;
    vo.vm_disks = true;  // ControllerPublishVolume's volume limit per node
    vo.user_agent = CsiUserAgent(config.global.cluster_id, "controller");
    auto vc = std::make_unique<cloud::VCenter>(vcc, b->credentials_.get(), vo);
    vsphere::cns::CnsClientOptions cno;
    cno.observer = options.cns_observer;
    auto cns = std::make_unique<vsphere::cns::CnsClient>(vc->client(), cno);
    auto pbm = std::make_unique<vsphere::pbm::PbmClient>(vc->client());
    auto policies = std::make_unique<StoragePolicies>(
        *pbm, StoragePoliciesOptions{.vcenter = vcc.label, .ttl = interval});
    auto vms = std::make_unique<CachedVmDirectory>(vc->inventory(), vc->client());
    auto files = std::make_unique<VsanFileServices>(vc->client(), interval);
    b->endpoints_.push_back({vcc.label, vcc.user, cns.get(), vms.get(), policies.get(), files.get(),
                             FileShareTargets{vcc.target_vsan_file_share_datastore_urls,
                                              vcc.target_vsan_file_share_clusters}});
    b->file_services_.push_back(std::move(files));
    b->vm_dirs_.push_back(std::move(vms));
    // Placement leaves out datastores where this user lacks Datastore.FileManagement.
    sources.push_back({vcc.label, &vc->client(), &vc->tagging(), vcc.datacenters,
                       [creds = b->credentials_.get(), server = vcc.server] {
                         auto c = creds->Get(server);
                         return c.ok() ? c->username : std::string();
                       }});
    b->vcs_.push_back(std::move(vc));
    b->cns_.push_back(std::move(cns));
    b->pbm_.push_back(std::move(pbm));
    b->policies_.push_back(std::move(policies));
  }
  if (options.kube != nullptr) {
    b->kube_ = options.kube;
    b->nodes_ = std::make_unique<NodeVms>(*b->kube_);
    b->pvs_ = std::make_unique<DriverPvs>(*b->kube_);
    b->migrations_ = std::make_unique<KubeVolumeMigrations>(*b->kube_);
    if (config.vcenters.size() > 1) {
      b->volume_infos_ = std::make_unique<KubeVolumeInfos>(*b->kube_, options.csi_namespace);
    }
    b->operations_ = NewKubeOperationStore(*b->kube_, options.csi_namespace);
  } else {
    b->operations_ = NewMemoryOperationStore();
  }
  DatastoreInventoryOptions dio;
  dio.topology = b->topology_;
  dio.interval = interval;
  dio.change_delay = options.datastore_change_delay;
  dio.auth_check_interval =
      absl::Minutes(std::max(1, config.global.csi_auth_check_interval_minutes));
  b->datastores_ = std::make_unique<DatastoreInventory>(std::move(sources), dio);
  return b;
}

ControllerBackend::~ControllerBackend() { Stop(); }

absl::Status ControllerBackend::Start() {
  if (started_) return absl::OkStatus();
  started_ = true;
  if (absl::Status s = credentials_->Start(); !s.ok()) {
    return absl::Status(s.code(), absl::StrCat("vCenter credentials: ", s.message()));
  }
  for (size_t i = 0; i < vcs_.size(); ++i) {
    // The CNS container cluster names the user the driver works as (secrets-directory too).
    if (auto creds = credentials_->Get(vcs_[i]->config().server); creds.ok()) {
      endpoints_[i].user = creds->username;
    }
    vcs_[i]->Start();
  }
  if (nodes_ != nullptr) nodes_->Start();
  if (pvs_ != nullptr) pvs_->Start();
  if (migrations_ != nullptr) migrations_->Start();
  StartRegistrar();
  if (volume_infos_ != nullptr) volume_infos_->Start();
  operations_->Start();
  datastores_->Start();
  if (clean_operations_) cleaner_ = std::thread([this] { CleanOperations(); });
  return absl::OkStatus();
}

void ControllerBackend::StartRegistrar() {
  if (migrations_ == nullptr || vcs_.size() != 1) return;
  const cloud::VirtualCenterConfig& vc = config_.vcenters.front();
  event_sink_ = std::make_unique<kube::KubeEventSink>(*kube_);
  kube::EventRecorderOptions eo;
  eo.component = "vsphere-csi-controller";
  events_ = std::make_unique<kube::EventRecorder>(*event_sink_, eo);
  InTreeRegistrarOptions ro;
  ro.vcenter_host = vc.server;
  vsphere::Client* client = &vcs_.front()->client();
  ro.datacenters = [client, configured = vc.datacenters]() {
    return DatacenterPaths(*client, configured);
  };
  ro.cluster.cluster_id = config_.global.cluster_id;
  ro.cluster.vsphere_user = endpoints_.front().user;
  ro.cluster.cluster_flavor = "VANILLA";
  ro.cluster.cluster_distribution = config_.global.cluster_distribution;
  ro.policy_id_of = [p = policies_.front().get()](const std::string& name) {
    return p->IdOf(name);
  };
  ro.events = events_.get();
  ro.pv_of = [k = kube_.get()](const std::string& path) { return FindInTreePv(*k, path); };
  registrar_ = std::make_unique<InTreeRegistrar>(*cns_.front(), *migrations_, std::move(ro));
}

void ControllerBackend::CleanOperations() {
  const absl::Duration every =
      absl::Minutes(std::max(1, config_.global.cns_volume_operation_request_cleanup_minutes));
  while (!stop_.WaitForNotificationWithTimeout(every)) {
    absl::StatusOr<std::vector<OperationRecord>> all = operations_->List();
    if (!all.ok()) {
      LOG_WARN("CnsVolumeOperationRequest clean-up: {}", all.status().message());
      continue;
    }
    // Ended more than 15 minutes ago, as the reference's clean-up.
    for (const OperationRecord& r : StaleRecords(*all, absl::Now(), absl::Minutes(15))) {
      if (absl::Status s = operations_->DeleteListed(r); !s.ok()) {
        LOG_WARN("CnsVolumeOperationRequest {}: {}", r.name, s.message());
      }
    }
  }
}

void ControllerBackend::SetVCenterDeadline(absl::Time deadline) {
  for (auto& vc : vcs_) vc->SetDeadline(deadline);
}

void ControllerBackend::Stop() {
  SetVCenterDeadline(absl::Now() + cloud::VCenter::kStopBudget);
  if (!stop_.HasBeenNotified()) stop_.Notify();
  if (cleaner_.joinable()) cleaner_.join();
  // In parallel: each ends a stream (a watch, a long poll) that takes up to a second to notice.
  std::vector<std::thread> stops;
  auto stop = [&stops](auto* part) {
    if (part != nullptr) stops.emplace_back([part] { part->Stop(); });
  };
  stop(datastores_.get());
  stop(nodes_.get());
  stop(pvs_.get());
  stop(migrations_.get());
  stop(volume_infos_.get());
  stop(operations_.get());
  for (std::thread& t : stops) t.join();
  if (events_ != nullptr) events_->Shutdown(absl::Seconds(2));
  for (auto& vc : vcs_) vc->Stop();
  if (credentials_ != nullptr) credentials_->Stop();
}

std::map<std::string, absl::Status> ControllerBackend::VCenterHealth() const {
  std::map<std::string, absl::Status> out;
  const std::map<std::string, absl::Status> datastores = datastores_->VCenterHealth();
  for (const auto& vc : vcs_) {
    absl::Status s = vc->Health();
    if (s.ok()) {
      if (auto it = datastores.find(vc->label()); it != datastores.end()) s = it->second;
    }
    out[vc->label()] = s;
  }
  return out;
}

bool ControllerBackend::Ready(std::string* why) const {
  std::vector<std::string> reasons;
  for (const auto& [label, s] : VCenterHealth()) {
    if (!s.ok()) reasons.push_back(absl::StrCat(label, ": ", s.message()));
  }
  if (why != nullptr) *why = absl::StrJoin(reasons, "; ");
  return reasons.empty();
}

absl::StatusOr<std::map<std::string, std::vector<std::string>>>
ControllerBackend::FilePublications() {
  if (kube_ == nullptr || pvs_ == nullptr) return std::map<std::string, std::vector<std::string>>{};
  return AttachedFileVolumes(*kube_, *pvs_);
}

}  // namespace ccm::csi
