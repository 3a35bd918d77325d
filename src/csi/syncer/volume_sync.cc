// The workers' sync of volumes: what Kubernetes says of each, the look-up in CNS (one
// CnsQueryVolume per vCenter for all the volumes a worker took together), then the entities
// written where CNS differs.
#include <algorithm>
#include <map>
#include <utility>

#include "common/logging.h"
#include "csi/core/volume_id.h"
#include "csi/syncer/entities.h"
#include "csi/syncer/metadata_syncer.h"

namespace ccm::csi::syncer {

absl::Status MetadataSyncer::SyncVolume(const std::string& handle) {
  return SyncVolumes({handle})[0];
}

std::vector<absl::Status> MetadataSyncer::SyncVolumes(const std::vector<std::string>& handles) {
  std::vector<absl::Status> results(handles.size());
  std::vector<ToLookUp> asked;
  std::vector<size_t> at;  // index in handles of each of asked
  for (size_t i = 0; i < handles.size(); ++i) {
    if (registrar_ != nullptr && IsInTreeVolumePath(handles[i])) {
      results[i] = SyncInTree(handles[i]);
      continue;
    }
    if (std::optional<ToLookUp> v = Prepare(handles[i])) {
      asked.push_back(*std::move(v));
      at.push_back(i);
    }
  }
  for (size_t start = 0; start < asked.size(); start += kMetadataBatch) {
    const size_t end = std::min(asked.size(), start + kMetadataBatch);
    std::vector<std::string> batch;
    for (size_t j = start; j < end; ++j) batch.push_back(asked[j].handle);
    std::vector<absl::StatusOr<Found>> found = LookupAll(batch);
    std::vector<Write> writes;
    for (size_t j = start; j < end; ++j) {
      results[at[j]] = Finish(asked[j], found[j - start], at[j], writes);
    }
    WriteAll(writes, results);
  }
  return results;
}

std::optional<MetadataSyncer::ToLookUp> MetadataSyncer::Prepare(const std::string& handle) {
  const std::string cns_id = CnsIdOf(handle);
  if (cns_id.empty()) return std::nullopt;  // nothing CNS could know; logged nowhere twice
  ToLookUp v{handle, DesiredFor(cns_id)};
  v.digest = EntitiesDigest(v.want.entities);
  bool left = false;  // the provisioner deletes the volume: nothing to ask CNS
  {
    absl::MutexLock l(&mu_);
    v.epoch = confirm_epoch_;
    auto it = confirmed_.find(cns_id);
    if (v.want.has_pv && it != confirmed_.end() && it->second == v.digest) {
      ++unchanged_skips_;
      return std::nullopt;
    }
    confirmed_.erase(cns_id);  // set again once CNS says it
    if (v.want.left_to_controller || (!v.want.has_pv && left_to_controller_.contains(handle))) {
      ++left_to_controller_count_;
      if (pvs_without_volume_.erase(handle) > 0) SetGauges();
      left = true;
    }
  }
  if (left) {
    if (!v.want.has_pv) ForgetVolumeInfo(handle);
    return std::nullopt;
  }
  return v;
}

absl::Status MetadataSyncer::Finish(const ToLookUp& v, const absl::StatusOr<Found>& found,
                                    size_t at, std::vector<Write>& writes) {
  if (absl::IsNotFound(found.status())) return NotInCns(v.handle, v.want);
  if (!v.want.has_pv) ForgetVolumeInfo(v.handle);
  if (!found.ok()) return found.status();
  {
    absl::MutexLock l(&mu_);
    if (pvs_without_volume_.erase(v.handle) > 0) SetGauges();
  }
  Desired labelled;
  if (!v.want.has_pv) {  // no PV names it: labelled pv_missing, as the reference's full sync does
    labelled.entities =
        PvMissingEntities(found->volume.metadata.entity_metadata, found->volume.name, cluster_id_);
  }
  std::optional<vsphere::cns::MetadataUpdate> update =
      UpdateFor(*found->target, found->volume, v.want.has_pv ? v.want : labelled);
  if (!update) {
    Confirm(CnsIdOf(v.handle), v.want, v.digest, v.epoch);
    return absl::OkStatus();
  }
  writes.push_back({at, &v, found->target, *std::move(update)});
  return absl::OkStatus();
}

void MetadataSyncer::WriteAll(const std::vector<Write>& writes,
                              std::vector<absl::Status>& results) {
  std::map<const CnsTarget*, std::vector<const Write*>> by_target;
  for (const Write& w : writes) by_target[w.target].push_back(&w);
  for (const auto& [t, group] : by_target) {
    std::optional<std::vector<absl::Status>> done;
    if (group.size() > 1) {
      std::vector<vsphere::cns::MetadataUpdate> updates;
      for (const Write* w : group) updates.push_back(w->update);
      done = WriteTogether(*t, updates);
    }
    for (size_t i = 0; i < group.size(); ++i) {
      const Write& w = *group[i];
      absl::Status s;
      if (done) {
        s = (*done)[i];
      } else {
        s = t->cns->UpdateVolumeMetadata(w.update.volume_id, w.update.metadata);
        if (!absl::IsNotFound(s)) updates_->Add({s.ok() ? "success" : "failure"});
        absl::MutexLock l(&mu_);
        if (s.ok()) ++metadata_updates_;
      }
      results[w.at] = Written(w, s);
    }
  }
}

std::optional<std::vector<absl::Status>> MetadataSyncer::WriteTogether(
    const CnsTarget& t, const std::vector<vsphere::cns::MetadataUpdate>& updates) {
  absl::StatusOr<std::vector<absl::Status>> r = t.cns->UpdateVolumesMetadata(updates);
  updates_->Add({r.ok() ? "success" : "failure"});
  if (r.ok() && r->size() == updates.size()) {
    absl::MutexLock l(&mu_);
    ++metadata_updates_;
    return *std::move(r);
  }
  LOG_WARN("CNS metadata of {} volumes in one call: {}; each is written on its own instead",
           updates.size(), r.ok() ? absl::InternalError("answers missing") : r.status());
  return std::nullopt;
}

absl::Status MetadataSyncer::Written(const Write& w, const absl::Status& s) {
  if (absl::IsNotFound(s)) return absl::OkStatus();  // deleted meanwhile: nothing to describe
  if (!s.ok()) return s;
  VLOG(2, "CNS metadata of volume {}: {} entities written", w.v->handle,
       w.update.metadata.entity_metadata.size());
  Confirm(CnsIdOf(w.v->handle), w.v->want, w.v->digest, w.v->epoch);
  return absl::OkStatus();
}

namespace {

// One CnsQueryVolume of `t` for `ids`: the volumes it answered, by ID.
absl::StatusOr<std::map<std::string, vsphere::cns::Volume>> Query(
    const CnsTarget& t, const std::vector<std::string>& ids) {
  vsphere::cns::QueryFilter f;
  f.volume_ids = ids;
  absl::StatusOr<vsphere::cns::QueryResult> r = t.cns->QueryVolume(f);
  if (!r.ok()) return r.status();
  std::map<std::string, vsphere::cns::Volume> by_id;
  for (vsphere::cns::Volume& v : r->volumes) {
    // Asked alone, whatever it answers is that volume (as the one-volume look-up always took it).
    std::string id = ids.size() == 1 ? ids[0] : v.volume_id;
    by_id.emplace(std::move(id), std::move(v));
  }
  return by_id;
}

}  // namespace

int64_t MetadataSyncer::AskTarget(const CnsTarget& t, const std::vector<std::string>& ids,
                                  std::vector<LookupState>& state) {
  std::vector<std::string> wanted;
  for (size_t i = 0; i < ids.size(); ++i) {
    if (!state[i].asks(t.vcenter)) continue;
    if (std::find(wanted.begin(), wanted.end(), ids[i]) == wanted.end()) wanted.push_back(ids[i]);
  }
  if (wanted.empty()) return 0;
  int64_t queries = 1;
  auto r = Query(t, wanted);
  for (size_t i = 0; i < ids.size(); ++i) {
    if (!state[i].asks(t.vcenter)) continue;
    const vsphere::cns::Volume* in = nullptr;
    if (r.ok()) {
      auto it = r->find(ids[i]);
      if (it != r->end()) in = &it->second;
    }
    if (r.ok() && in == nullptr && wanted.size() > 1) {
      // Not in the shared answer: asked alone before it counts as gone (an answer cut short,
      // or an ID CNS spells differently, must not make a volume look unknown).
      ++queries;
      auto alone = Query(t, {ids[i]});
      state[i].answers.push_back({t.vcenter, alone.status(), alone.ok() && !alone->empty()});
      if (alone.ok() && !alone->empty()) state[i].found[t.vcenter] = {&t, alone->begin()->second};
      continue;
    }
    state[i].answers.push_back({t.vcenter, r.status(), in != nullptr});
    if (in != nullptr) state[i].found[t.vcenter] = {&t, *in};
  }
  return queries;
}

std::vector<absl::StatusOr<MetadataSyncer::Found>> MetadataSyncer::LookupAll(
    const std::vector<std::string>& handles) {
  std::vector<std::string> labels;
  for (const CnsTarget& t : targets_) labels.push_back(t.vcenter);
  std::vector<absl::StatusOr<Found>> out(handles.size(), absl::NotFoundError(""));
  std::vector<std::string> ids(handles.size());
  std::vector<LookupState> state(handles.size());
  for (size_t i = 0; i < handles.size(); ++i) {
    absl::StatusOr<VolumeRef> ref = ParseVolumeId(handles[i]);
    absl::StatusOr<std::vector<std::string>> where =
        ref.ok() ? VCentersToAsk(*ref, labels) : ref.status();
    if (!where.ok()) {
      out[i] = where.status();
      state[i].failed = true;
      continue;
    }
    ids[i] = ref->cns_id;
    state[i].ask = *std::move(where);
  }
  int64_t queries = 0;
  for (const CnsTarget& t : targets_) queries += AskTarget(t, ids, state);
  for (size_t i = 0; i < handles.size(); ++i) {
    if (state[i].failed) continue;
    absl::StatusOr<std::string> where = DecideVolumeVCenter(handles[i], state[i].answers);
    out[i] = where.ok() ? absl::StatusOr<Found>(state[i].found[*where]) : where.status();
  }
  absl::MutexLock l(&mu_);
  lookups_ += static_cast<int64_t>(handles.size());
  lookup_queries_ += queries;
  return out;
}

}  // namespace ccm::csi::syncer
