#include "csi/syncer/metadata_syncer.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/logging.h"
#include "csi/core/volume_id.h"
#include "kube/objects.h"
#include "vsphere/soap.h"

namespace ccm::csi::syncer {
namespace {

kube::WorkQueueOptions QueueOptions(MetadataSyncerOptions& o, Clock& clock) {
  kube::WorkQueueOptions q;
  q.name = "cns-metadata";
  q.clock = &clock;
  q.limiter = std::move(o.rate_limiter);
  q.metrics = o.queue_metrics;
  return q;
}

}  // namespace

bool PvReleasing(const nlohmann::json& pv) {
  const std::string phase = pv.value("/status/phase"_json_pointer, std::string());
  return phase == "Released" || phase == "Failed" ||
         pv.contains("/metadata/deletionTimestamp"_json_pointer);
}

bool ReclaimDelete(const nlohmann::json& pv) {
  return pv.value("/spec/persistentVolumeReclaimPolicy"_json_pointer, std::string()) == "Delete";
}

bool PhaseReleased(const nlohmann::json& pv) {
  return pv.value("/status/phase"_json_pointer, std::string()) == "Released";
}

// The volume is the provisioner's to delete: reclaim policy Delete and the PV Released or being
// deleted (the reference's syncer skips such a PV's updates, and its claim's deletion).
bool LeftToController(const nlohmann::json& pv) {
  return ReclaimDelete(pv) &&
         (PhaseReleased(pv) || pv.contains("/metadata/deletionTimestamp"_json_pointer));
}

std::string CnsIdOf(const std::string& handle) {
  absl::StatusOr<VolumeRef> ref = ParseVolumeId(handle);
  return ref.ok() ? ref->cns_id : "";
}

MetadataSyncer::MetadataSyncer(kube::Informer& pvs, kube::Informer& pvcs, kube::Informer& pods,
                               std::vector<CnsTarget> targets, MetadataSyncerOptions options)
    : pvs_(pvs),
      pvcs_(pvcs),
      pods_(pods),
      targets_(std::move(targets)),
      cluster_id_(options.cluster_id),
      cluster_distribution_(options.cluster_distribution),
      full_sync_period_(options.full_sync_period),
      workers_(std::max(1, options.workers)),
      query_page_(std::max(1, options.query_page)),
      migrations_(options.registrar ? options.migrations : nullptr),
      migrations_informer_(options.registrar ? options.migrations_informer : nullptr),
      registrar_(options.migrations ? options.registrar : nullptr),
      map_backing_objects_(options.map_backing_objects),
      pvc_writer_(options.pvc_writer),
      volume_infos_(options.volume_infos),
      clock_(options.clock ? *options.clock : Clock::Real()),
      own_registry_(options.registry ? nullptr : std::make_unique<metrics::Registry>()),
      registry_(options.registry ? *options.registry : *own_registry_),
      full_sync_hist_(registry_.Histogram("vsphere_full_sync_ops_histogram",
                                          "Histogram vector for CSI Full Sync operations.",
                                          {"status"}, {2, 5, 10, 15, 20, 25, 30, 60, 120, 180})),
      pv_missing_(registry_.Gauge("vsphere_cns_volume_pv_missing",
                                  "Number of CNS volumes whose corresponding Kubernetes PV was not "
                                  "found during the last full sync, per vCenter.",
                                  {"vc"})),
      pv_retained_(registry_.Gauge("vsphere_cns_volume_pv_retained",
                                   "Number of CNS volumes with ReclaimPolicy=Retain PVs in "
                                   "Released/Available phase, per vCenter.",
                                   {"vc"})),
      not_found_(
          registry_.Gauge("vsphere_syncer_pv_volume_not_found",
                          "PersistentVolumes of this driver whose CNS volume no vCenter knows")),
      updates_(registry_.Counter("vsphere_syncer_metadata_updates_total",
                                 "CnsUpdateVolumeMetadata calls by the syncer, by result",
                                 {"result"})),
      queue_(QueueOptions(options, clock_)),
      runner_(clock_) {
  for (const CnsTarget& t : targets_) {
    pv_missing_->Set({t.vcenter}, 0);
    // The reference labels retained PVs' volumes (pv_retained) on supervisor clusters only: in
    // the vanilla flavor the gauge stays 0, here as there.
    pv_retained_->Set({t.vcenter}, 0);
  }
  not_found_->Set({}, 0);
  handlers_.emplace_back(&pvs_, pvs_.AddEventHandler({
                                    .on_add = [this](const Json& pv) { OnPv(nullptr, &pv); },
                                    .on_update =
                                        [this](const Json& o, const Json& n) {
                                          if (PvUpdateMatters(o, n)) OnPv(&o, &n);
                                        },
                                    .on_delete = [this](const Json& pv) { OnPv(&pv, nullptr); },
                                }));
  handlers_.emplace_back(&pvcs_, pvcs_.AddEventHandler({
                                     .on_add = [this](const Json& pvc) { OnPvc(pvc); },
                                     .on_update =
                                         [this](const Json& o, const Json& n) {
                                           if (PvcUpdateMatters(o, n)) OnPvc(n);
                                         },
                                     .on_delete = [this](const Json& pvc) { OnPvc(pvc); },
                                 }));
  handlers_.emplace_back(&pods_,
                         pods_.AddEventHandler({
                             .on_add = [this](const Json& pod) { OnPod(nullptr, &pod); },
                             .on_update = [this](const Json& o, const Json& n) { OnPod(&o, &n); },
                             .on_delete = [this](const Json& pod) { OnPod(&pod, nullptr); },
                         }));
}

MetadataSyncer::~MetadataSyncer() {
  Stop();
  for (auto& [informer, id] : handlers_) informer->RemoveEventHandler(id);
}

void MetadataSyncer::Start() {
  std::vector<kube::Informer*> informers = {&pvs_, &pvcs_, &pods_};
  if (migrations_informer_ != nullptr) informers.push_back(migrations_informer_);
  runner_.Start({
      .name = "CNS metadata syncer",
      .informers = informers,
      // The first full sync before the workers start: its bulk queries confirm the volumes CNS
      // already describes right, so the workers' start-up events cost no query for them.
      .wait_ready =
          [this](const absl::Notification&) {
            RunFullSync(/*write_in_batches=*/true).IgnoreError();  // logged
            return true;
          },
      .workers = workers_,
      .process_next_item = [this] { return ProcessNextItem(); },
      .shut_down_queue = [this] { queue_.ShutDown(); },
      .period = full_sync_period_,
      .pass = [this] { RunFullSync(/*write_in_batches=*/false).IgnoreError(); },
  });
}

void MetadataSyncer::Stop() {
  runner_.Stop();
  queue_.ShutDown();
}

// ---- Events: everything becomes "sync the volume of that PV". ----

void MetadataSyncer::OnPv(const Json* old_pv, const Json* new_pv) {
  std::vector<std::string> handles;
  {
    absl::MutexLock l(&mu_);
    if (old_pv != nullptr && Ours(*old_pv)) {
      // Deleted once Released with reclaim policy Delete: the provisioner deleted its volume.
      if (new_pv == nullptr && ReclaimDelete(*old_pv) && PhaseReleased(*old_pv) &&
          !ClaimKey(*old_pv).empty()) {
        if (left_to_controller_.size() >= 10000) left_to_controller_.clear();  // a bound
        left_to_controller_.insert(HandleOf(*old_pv));
      }
      auto it = pv_by_cns_id_.find(CnsIdOfPv(*old_pv));
      if (it != pv_by_cns_id_.end() && it->second == kube::Name(*old_pv)) pv_by_cns_id_.erase(it);
      auto p = pv_by_path_.find(HandleOf(*old_pv));
      if (p != pv_by_path_.end() && p->second == kube::Name(*old_pv)) pv_by_path_.erase(p);
      handles.push_back(HandleOf(*old_pv));
    }
    if (new_pv != nullptr && Ours(*new_pv)) {
      const std::string id = CnsIdOfPv(*new_pv);
      if (!id.empty()) pv_by_cns_id_[id] = kube::Name(*new_pv);
      if (!IsOurPv(*new_pv)) pv_by_path_[HandleOf(*new_pv)] = kube::Name(*new_pv);
      left_to_controller_.erase(HandleOf(*new_pv));
      handles.push_back(HandleOf(*new_pv));
    }
  }
  for (const std::string& h : handles) queue_.Add(h);
}

void MetadataSyncer::OnPvc(const Json& pvc) {
  // The PV it is (or was) bound to; an unbound claim has no volume yet.
  const std::string volume = pvc.value("/spec/volumeName"_json_pointer, std::string());
  if (volume.empty()) return;
  kube::ObjectPtr pv = pvs_.Get(volume);
  if (pv != nullptr && Ours(*pv)) queue_.Add(HandleOf(*pv));
}

void MetadataSyncer::OnPod(const Json* old_pod, const Json* new_pod) {
  // Only a change of "running with these claims" changes what CNS should say.
  const bool was = old_pod != nullptr && PodIsRunning(*old_pod);
  const bool is = new_pod != nullptr && PodIsRunning(*new_pod);
  std::set<std::string> claims;
  std::vector<std::string> inline_paths;
  {
    absl::MutexLock l(&mu_);
    if (registrar_ != nullptr) inline_paths = NoteInlineVolumes(old_pod, new_pod);
    if (old_pod != nullptr) {
      for (const std::string& c : PodClaimKeys(*old_pod)) {
        claims.insert(c);
        auto it = pods_by_claim_.find(c);
        if (it == pods_by_claim_.end()) continue;
        it->second.erase(kube::ObjectKey(*old_pod));
        if (it->second.empty()) pods_by_claim_.erase(it);
      }
    }
    if (new_pod != nullptr) {
      for (const std::string& c : PodClaimKeys(*new_pod)) {
        claims.insert(c);
        pods_by_claim_[c].insert(kube::ObjectKey(*new_pod));
      }
    }
  }
  for (const std::string& p : inline_paths) queue_.Add(p);
  if (was == is && old_pod != nullptr && new_pod != nullptr) return;
  if (!was && !is) return;
  for (const std::string& c : claims) EnqueueClaim(c);
}

void MetadataSyncer::EnqueueClaim(const std::string& claim_key) {
  kube::ObjectPtr pvc = pvcs_.Get(claim_key);
  if (pvc != nullptr) OnPvc(*pvc);
}

// ---- The worker: the one place that logs and retries. ----

bool MetadataSyncer::ProcessNextItem() {
  std::optional<std::string> key = queue_.Get();
  if (!key) return false;
  // With it, the volumes queued meanwhile: their look-ups share one CnsQueryVolume.
  std::vector<std::string> keys = {*key};
  for (std::string& k : queue_.GetReady(kMetadataBatch - 1)) keys.push_back(std::move(k));
  std::vector<absl::Status> results = SyncVolumes(keys);
  for (size_t i = 0; i < keys.size(); ++i) {
    if (results[i].ok()) {
      queue_.Forget(keys[i]);
    } else {
      LOG_WARN("CNS metadata of volume {}: {} (attempt {}, will retry)", keys[i], results[i],
               queue_.NumRequeues(keys[i]) + 1);
      queue_.AddRateLimited(keys[i]);
    }
    queue_.Done(keys[i]);
  }
  return true;
}

MetadataSyncer::Desired MetadataSyncer::DesiredForPv(const Json& pv) const {
  Desired d;
  d.has_pv = true;
  d.pv_name = kube::Name(pv);
  const std::string claim_key = ClaimKey(pv);
  kube::ObjectPtr pvc = claim_key.empty() ? nullptr : pvcs_.Get(claim_key);
  std::vector<Json> pods;
  if (pvc != nullptr) {
    std::set<std::string> pod_keys;
    {
      absl::MutexLock l(&mu_);
      auto it = pods_by_claim_.find(claim_key);
      if (it != pods_by_claim_.end()) pod_keys = it->second;
    }
    for (const std::string& k : pod_keys) {
      if (kube::ObjectPtr p = pods_.Get(k)) pods.push_back(*p);
    }
  }
  d.entities = DesiredEntities(pv, pvc.get(), pods, cluster_id_);
  d.releasing = PvReleasing(pv);
  // A claim gone with reclaim policy Delete: the PV is about to be Released and deleted.
  d.left_to_controller =
      LeftToController(pv) || (ReclaimDelete(pv) && !claim_key.empty() && pvc == nullptr);
  return d;
}

MetadataSyncer::Desired MetadataSyncer::DesiredFor(const std::string& cns_id) const {
  std::string pv_name;
  {
    absl::MutexLock l(&mu_);
    auto it = pv_by_cns_id_.find(cns_id);
    if (it != pv_by_cns_id_.end()) pv_name = it->second;
  }
  kube::ObjectPtr pv = pv_name.empty() ? nullptr : pvs_.Get(pv_name);
  if (pv == nullptr || !Ours(*pv) || CnsIdOfPv(*pv) != cns_id) return {};
  return DesiredForPv(*pv);
}

absl::Status MetadataSyncer::Register(const std::string& handle, const Desired& want) {
  absl::StatusOr<VolumeRef> ref = ParseVolumeId(handle);
  if (!ref.ok()) return ref.status();
  std::vector<std::string> labels;
  for (const CnsTarget& t : targets_) labels.push_back(t.vcenter);
  absl::StatusOr<std::vector<std::string>> ask = VCentersToAsk(*ref, labels);
  if (!ask.ok()) return ask.status();
  for (const CnsTarget& t : targets_) {
    if (std::find(ask->begin(), ask->end(), t.vcenter) == ask->end()) continue;
    cns::CreateSpec spec;
    spec.name = want.pv_name;
    spec.backing_disk_id = ref->cns_id;
    spec.metadata.container_cluster = ClusterFor(t);
    spec.metadata.container_cluster_array = {spec.metadata.container_cluster};
    spec.metadata.entity_metadata = want.entities;
    absl::StatusOr<cns::CreateResult> r = t.cns->CreateVolume(spec);
    if (r.ok() || vsphere::FaultName(r.status()) == "CnsAlreadyRegisteredFault") {
      LOG_INFO(
          "PersistentVolume {}: registered disk {} of vCenter {} with CNS (static provisioning)",
          want.pv_name, ref->cns_id, t.vcenter);
      RecordVolumeInfo(handle, t.vcenter);
      absl::MutexLock l(&mu_);
      if (pvs_without_volume_.erase(handle) > 0) SetGauges();
      ++registered_;
      return absl::OkStatus();
    }
    if (!absl::IsNotFound(r.status())) return r.status();
  }
  return absl::NotFoundError(absl::StrCat("no vCenter has a disk with ID ", ref->cns_id));
}

vsphere::cns::ContainerCluster MetadataSyncer::ClusterFor(const CnsTarget& t) const {
  vsphere::cns::ContainerCluster c;
  c.cluster_id = cluster_id_;
  c.vsphere_user = t.vsphere_user;
  c.cluster_distribution = cluster_distribution_;
  return c;
}

std::string MetadataSyncer::KeyFor(const std::string& cns_id, const CnsTarget& t) const {
  absl::StatusOr<std::string> id = FormatVolumeId(cns_id, t.vcenter, targets_.size());
  return id.ok() ? *id : cns_id;
}

absl::Status MetadataSyncer::NotInCns(const std::string& handle, const Desired& want) {
  // A PV being deleted loses its volume first: nothing to register (a registration would race
  // the deletion and bring the disk back into CNS), nothing to report.
  const bool missing = want.has_pv && !want.releasing;
  if (missing) {
    absl::Status registered = Register(handle, want);
    if (registered.ok()) return absl::OkStatus();
    if (!absl::IsNotFound(registered)) return registered;
  }
  {
    absl::MutexLock l(&mu_);
    if (missing && pvs_without_volume_.insert(handle).second) {
      LOG_WARN(
          "PersistentVolume of volume {}: CNS does not know the volume; its metadata cannot "
          "be registered (looked at again by every full sync)",
          handle);
    }
    if (!missing) pvs_without_volume_.erase(handle);
    SetGauges();
  }
  if (!want.has_pv) ForgetVolumeInfo(handle);
  return absl::OkStatus();
}

std::optional<vsphere::cns::MetadataUpdate> MetadataSyncer::UpdateFor(
    const CnsTarget& t, const vsphere::cns::Volume& volume, const Desired& want) const {
  const vsphere::cns::VolumeMetadata& have = volume.metadata;
  std::vector<cns::EntityMetadata> plan =
      PlanEntityUpdate(have.entity_metadata, want.entities, cluster_id_);
  // A PV's volume must also name our cluster (a statically provisioned one may not yet).
  const bool register_cluster = want.has_pv && have.container_cluster.cluster_id != cluster_id_;
  if (plan.empty() && !register_cluster) return std::nullopt;
  vsphere::cns::MetadataUpdate u;
  u.volume_id = volume.volume_id;
  u.metadata.container_cluster = ClusterFor(t);
  u.metadata.container_cluster_array = {u.metadata.container_cluster};
  u.metadata.entity_metadata = std::move(plan);
  return u;
}

void MetadataSyncer::Confirm(const std::string& cns_id, const Desired& want, uint64_t digest,
                             uint64_t epoch) {
  absl::MutexLock l(&mu_);
  if (want.has_pv && epoch == confirm_epoch_) confirmed_[cns_id] = digest;
}

uint64_t MetadataSyncer::ConfirmEpoch() const {
  absl::MutexLock l(&mu_);
  return confirm_epoch_;
}

// ---- Full sync ----

absl::Status MetadataSyncer::FullSyncNow() { return RunFullSync(/*write_in_batches=*/false); }

absl::Status MetadataSyncer::RunFullSync(bool write_in_batches) {
  absl::MutexLock pass(&pass_mu_);
  const absl::Time start = clock_.Now();
  absl::Status s = FullSync(write_in_batches);
  const double secs = absl::ToDoubleSeconds(clock_.Now() - start);
  full_sync_hist_->Observe({s.ok() ? "pass" : "fail"}, secs);
  if (!s.ok())
    LOG_WARN("CNS full sync failed (next in {}): {}", absl::FormatDuration(full_sync_period_), s);
  return s;
}

void MetadataSyncer::SetGauges() {
  for (const CnsTarget& t : targets_) {
    auto it = orphans_.find(t.vcenter);
    pv_missing_->Set({t.vcenter}, it == orphans_.end() ? 0 : it->second.size());
  }
  not_found_->Set({}, pvs_without_volume_.size());
}

SyncerStats MetadataSyncer::stats() const {
  absl::MutexLock l(&mu_);
  SyncerStats s;
  s.full_syncs = full_syncs_;
  s.full_sync_failures = full_sync_failures_;
  s.metadata_updates = metadata_updates_;
  s.registered = registered_;
  s.in_tree_registered = in_tree_registered_;
  s.in_tree_reregistered = in_tree_reregistered_;
  s.unchanged_skips = unchanged_skips_;
  s.left_to_controller = left_to_controller_count_;
  s.volume_infos_created = volume_infos_created_;
  s.volume_infos_removed = volume_infos_removed_;
  s.lookups = lookups_;
  s.lookup_queries = lookup_queries_;
  s.queued = queue_.Len();
  for (const auto& [vc, ids] : orphans_) s.orphans.insert(ids.begin(), ids.end());
  s.pvs_without_volume = pvs_without_volume_;
  return s;
}

}  // namespace ccm::csi::syncer
