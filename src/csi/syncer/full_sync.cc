// The syncer's full sync: every CNS volume of the cluster against every PV of ours. The first
// one (before the workers start) also writes what differs, in batches; later ones queue it.
#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/logging.h"
#include "common/status_macros.h"
#include "csi/syncer/metadata_syncer.h"
#include "kube/objects.h"

namespace ccm::csi::syncer {

absl::Status MetadataSyncer::FullSync(bool write_in_batches) {
  std::map<std::string, Listed> in_cns;
  CCM_RETURN_IF_ERROR(ListOurVolumes(in_cns));
  {
    absl::MutexLock l(&mu_);
    ++confirm_epoch_;
  }
  std::set<std::string> named;
  std::map<std::string, std::string> located;
  std::map<const CnsTarget*, std::vector<Pending>> to_write;
  const int queued = CheckPvs(in_cns, write_in_batches, named, located, to_write);
  const std::vector<std::string> cleanup = NoteOrphans(in_cns, named);
  KeepVolumeInfos(located, named);
  const int annotated = MapBackingObjects(in_cns);
  if (annotated > 0) {
    LOG_INFO("{} PVC(s) annotated {} by this full sync", annotated, kBackingObjectAnnotation);
  }
  for (const std::string& k : cleanup) queue_.Add(k);
  VLOG(2, "CNS full sync: {} volumes of cluster {}, {} queued, {} orphans to label pv_missing",
       in_cns.size(), cluster_id_, queued, cleanup.size());
  for (const auto& [t, pending] : to_write) {
    for (size_t i = 0; i < pending.size(); i += kMetadataBatch) {
      const size_t end = std::min(pending.size(), i + kMetadataBatch);
      WriteBatch(*t, std::vector<Pending>(pending.begin() + i, pending.begin() + end));
    }
  }
  absl::MutexLock l(&mu_);  // counted once all of it is done: the stats say a sync ended
  ++full_syncs_;
  return absl::OkStatus();
}

// 1. Every CNS volume of our cluster-id, by CNS id: what the sync compares, not the volume.
absl::Status MetadataSyncer::ListOurVolumes(std::map<std::string, Listed>& in_cns) {
  for (const CnsTarget& t : targets_) {
    vsphere::cns::QueryFilter f;
    f.container_cluster_ids = {cluster_id_};
    f.cursor = vsphere::cns::Cursor{0, query_page_, 0};
    while (true) {
      absl::StatusOr<vsphere::cns::QueryResult> r = t.cns->QueryVolume(f);
      if (!r.ok()) {
        absl::MutexLock l(&mu_);
        ++full_sync_failures_;
        return absl::Status(r.status().code(),
                            absl::StrCat("query CNS volumes of cluster ", cluster_id_, " in ",
                                         t.vcenter, ": ", r.status().message()));
      }
      for (const vsphere::cns::Volume& v : r->volumes) {
        const vsphere::cns::VolumeMetadata& m = v.metadata;
        in_cns[v.volume_id] = {
            &t,
            v.name,
            m.container_cluster.cluster_id == cluster_id_,
            HasEntitiesOf(m, cluster_id_),
            OwnEntitiesDigest(m.entity_metadata, cluster_id_),
            PlanEntityUpdate(m.entity_metadata,
                             PvMissingEntities(m.entity_metadata, v.name, cluster_id_), cluster_id_)
                .empty(),
            v.backing_disk_object_id};
      }
      if (r->volumes.empty() || r->cursor.offset >= r->cursor.total_records) break;
      f.cursor->offset = r->cursor.offset;
    }
  }
  return absl::OkStatus();
}

// 2. Every PV of ours (decoded one at a time): those CNS disagrees with (or does not list under
// our cluster) are queued, or, when `write_in_batches` and CNS lists them, put in `to_write`.
// Returns how many were queued or put there.
int MetadataSyncer::CheckPvs(const std::map<std::string, Listed>& in_cns, bool write_in_batches,
                             std::set<std::string>& named,
                             std::map<std::string, std::string>& located,
                             std::map<const CnsTarget*, std::vector<Pending>>& to_write) {
  int queued = 0;
  for (const std::string& key : pvs_.Keys()) {
    const kube::ObjectPtr pv = pvs_.Get(key);
    if (pv == nullptr || !Ours(*pv)) continue;
    const std::string handle = HandleOf(*pv);
    const std::string cns_id = CnsIdOfPv(*pv);
    if (cns_id.empty()) {  // an in-tree volume to register
      queue_.Add(handle);
      ++queued;
      continue;
    }
    named.insert(cns_id);
    if (!IsOurPv(*pv)) {
      absl::MutexLock l(&mu_);
      pv_by_cns_id_[cns_id] = kube::Name(*pv);
      pv_by_path_[handle] = kube::Name(*pv);
    }
    auto it = in_cns.find(cns_id);
    if (it != in_cns.end() && handle == cns_id) located[cns_id] = it->second.target->vcenter;
    if (it != in_cns.end()) {
      const Desired want = DesiredForPv(*pv);
      const uint64_t digest = EntitiesDigest(want.entities);
      if (it->second.own_digest == digest && it->second.our_cluster) {
        Confirm(cns_id, want, digest, ConfirmEpoch());
        continue;
      }
    }
    {
      absl::MutexLock l(&mu_);
      confirmed_.erase(cns_id);
    }
    if (write_in_batches && it != in_cns.end()) {
      to_write[it->second.target].push_back({handle, cns_id});
    } else {
      queue_.Add(handle);
    }
    ++queued;
  }
  // Inline in-tree volumes of Pods: named (not orphans); registered when in use and not yet.
  for (const auto& [path, in_use] : InlinePaths()) {
    absl::StatusOr<std::string> id = migrations_->VolumeIdOf(path);
    if (id.ok()) {
      named.insert(*id);
    } else if (in_use) {
      queue_.Add(path);
      ++queued;
    }
  }
  return queued;
}

// 2b. The feature state pv-to-backingdiskobjectid-mapping: each bound PV's PVC annotated with
// "<PV uid>:<backingDiskObjectId>", from the listing above (the reference queries CNS again for
// it every 10 minutes; here it costs no vCenter request). A failed write is retried at the next
// full sync.
int MetadataSyncer::MapBackingObjects(const std::map<std::string, Listed>& in_cns) {
  if (pvc_writer_ == nullptr || !map_backing_objects_ || !map_backing_objects_()) return 0;
  int written = 0;
  for (const std::string& key : pvs_.Keys()) {
    const kube::ObjectPtr pv = pvs_.Get(key);
    if (pv == nullptr || !IsOurPv(*pv)) continue;  // CSI block volumes, as the reference
    if (pv->value("/status/phase"_json_pointer, std::string()) != "Bound") continue;
    auto listed = in_cns.find(CnsIdOfPv(*pv));
    const std::string claim = ClaimKey(*pv);
    if (listed == in_cns.end() || claim.empty()) continue;
    const kube::ObjectPtr pvc = pvcs_.Get(claim);
    if (pvc == nullptr) continue;
    const Json::json_pointer at(
        "/metadata/annotations/cns.vmware.com~1pv-to-backingdiskobjectid-mapping");
    std::optional<std::string> current;
    if (pvc->contains(at) && pvc->at(at).is_string()) current = pvc->at(at).get<std::string>();
    std::optional<std::string> change = BackingObjectAnnotationChange(
        current, pv->value("/metadata/uid"_json_pointer, std::string()),
        listed->second.backing_object_id);
    if (!change) continue;
    const Json patch = {{"metadata", {{"annotations", {{kBackingObjectAnnotation, *change}}}}}};
    absl::StatusOr<Json> r =
        pvc_writer_->Patch(kube::PersistentVolumeClaims(), kube::Namespace(*pvc), kube::Name(*pvc),
                           kube::PatchType::kMerge, patch);
    if (!r.ok()) {
      LOG_WARN("PVC {}: {}: {}", claim, kBackingObjectAnnotation, r.status().message());
      continue;
    }
    ++written;
  }
  return written;
}

// 3. Orphans: in CNS under our cluster-id, named by no PV in this pass and the previous one.
// Returns the keys of those whose entities of ours should be removed.
std::vector<std::string> MetadataSyncer::NoteOrphans(const std::map<std::string, Listed>& in_cns,
                                                     const std::set<std::string>& named) {
  std::vector<std::string> cleanup;
  absl::MutexLock l(&mu_);
  std::set<std::string> candidates;
  orphans_.clear();
  for (const auto& [id, f] : in_cns) {
    if (named.count(id)) continue;
    candidates.insert(id);
    if (!orphan_candidates_.count(id)) continue;
    orphans_[f.target->vcenter].insert(id);
    if (reported_orphans_.insert(id).second) {
      LOG_WARN(
          "CNS volume {} ({}) in vCenter {} belongs to cluster-id {} but no "
          "PersistentVolume names it; it is kept, not deleted, and labelled {}=true in CNS "
          "(delete it in vSphere if it is garbage, or create a PV with volumeHandle {})",
          id, f.name, f.target->vcenter, cluster_id_, kPvMissingLabel, KeyFor(id, *f.target));
    }
    if (!f.labelled_missing) cleanup.push_back(KeyFor(id, *f.target));
  }
  orphan_candidates_ = std::move(candidates);
  for (auto it = confirmed_.begin(); it != confirmed_.end();) {
    if (named.count(it->first)) {
      ++it;
    } else {
      confirmed_.erase(it++);
    }
  }
  for (auto it = reported_orphans_.begin(); it != reported_orphans_.end();) {
    it = in_cns.count(*it) && !named.count(*it) ? std::next(it) : reported_orphans_.erase(it);
  }
  SetGauges();
  return cleanup;
}

// Up to kMetadataBatch volumes of one vCenter: their metadata in one CnsQueryVolume, every
// update in one CnsUpdateVolumeMetadata. What the batch does not settle (not found, a fault, a
// failed call) goes to the work queue, to be done one volume at a time with its retries.
void MetadataSyncer::WriteBatch(const CnsTarget& t, const std::vector<Pending>& batch) {
  vsphere::cns::QueryFilter f;
  for (const Pending& p : batch) f.volume_ids.push_back(p.cns_id);
  absl::StatusOr<vsphere::cns::QueryResult> r = t.cns->QueryVolume(f);
  std::map<std::string, const vsphere::cns::Volume*> by_id;
  if (r.ok()) {
    for (const vsphere::cns::Volume& v : r->volumes) by_id[v.volume_id] = &v;
  }
  std::vector<vsphere::cns::MetadataUpdate> updates;
  std::vector<std::pair<const Pending*, Desired>> written;
  for (const Pending& p : batch) {
    auto it = by_id.find(p.cns_id);
    Desired want = DesiredFor(p.cns_id);
    if (it == by_id.end() || !want.has_pv) {
      queue_.Add(p.handle);
      continue;
    }
    std::optional<vsphere::cns::MetadataUpdate> u = UpdateFor(t, *it->second, want);
    if (!u) {
      Confirm(p.cns_id, want, EntitiesDigest(want.entities), ConfirmEpoch());
      continue;
    }
    updates.push_back(*std::move(u));
    written.emplace_back(&p, std::move(want));
  }
  if (updates.empty()) return;
  const std::optional<std::vector<absl::Status>> done = WriteTogether(t, updates);
  for (size_t i = 0; i < written.size(); ++i) {
    const auto& [p, want] = written[i];
    if (done && (*done)[i].ok()) {
      Confirm(p->cns_id, want, EntitiesDigest(want.entities), ConfirmEpoch());
    } else {
      queue_.Add(p->handle);
    }
  }
}

}  // namespace ccm::csi::syncer
