// The syncer's in-tree volumes (CSI migration): which PVs they are, and their registration.
#include "absl/strings/str_cat.h"
#include "common/logging.h"
#include "common/status_macros.h"
#include "csi/core/volume_id.h"
#include "csi/migration/intree.h"
#include "csi/syncer/metadata_syncer.h"
#include "kube/objects.h"

namespace ccm::csi::syncer {

bool MetadataSyncer::Ours(const Json& pv) const {
  return IsOurPv(pv) || (registrar_ != nullptr && IsMigratedInTreePv(pv));
}

std::string MetadataSyncer::HandleOf(const Json& pv) const {
  return IsOurPv(pv) ? VolumeHandle(pv) : InTreeVolumePath(pv);
}

std::string MetadataSyncer::CnsIdOfPv(const Json& pv) const {
  if (IsOurPv(pv)) return CnsIdOf(VolumeHandle(pv));
  if (migrations_ == nullptr) return "";
  absl::StatusOr<std::string> id = migrations_->VolumeIdOf(InTreeVolumePath(pv));
  return id.ok() ? *id : "";
}

std::vector<std::string> MetadataSyncer::NoteInlineVolumes(const Json* old_pod,
                                                           const Json* new_pod) {
  if (old_pod != nullptr) {
    for (const std::string& p : PodInTreeVolumePaths(*old_pod)) {
      auto it = inline_users_.find(p);
      if (it == inline_users_.end()) continue;
      it->second.erase(kube::ObjectKey(*old_pod));
      if (it->second.empty()) inline_users_.erase(it);
    }
  }
  std::vector<std::string> added;
  if (new_pod != nullptr) {
    for (const std::string& p : PodInTreeVolumePaths(*new_pod)) {
      inline_users_[p].insert(kube::ObjectKey(*new_pod));
      if (inline_seen_.insert(p).second) added.push_back(p);
    }
  }
  return added;
}

std::vector<std::pair<std::string, bool>> MetadataSyncer::InlinePaths() const {
  if (registrar_ == nullptr) return {};
  absl::MutexLock l(&mu_);
  std::vector<std::pair<std::string, bool>> out;
  for (const std::string& path : inline_seen_) out.emplace_back(path, inline_users_.contains(path));
  return out;
}

absl::Status MetadataSyncer::SyncInTree(const std::string& volume_path) {
  std::string pv_name;
  bool inline_volume = false;
  {
    absl::MutexLock l(&mu_);
    auto it = pv_by_path_.find(volume_path);
    if (it != pv_by_path_.end()) pv_name = it->second;
    inline_volume = inline_seen_.contains(volume_path);
  }
  kube::ObjectPtr pv = pv_name.empty() ? nullptr : pvs_.Get(pv_name);
  if (pv == nullptr || !IsMigratedInTreePv(*pv) || InTreeVolumePath(*pv) != volume_path) {
    if (inline_volume) return RegisterInline(volume_path);
    return registrar_->Unregister(volume_path);  // its PV is gone (the disk is kept)
  }
  if (PvReleasing(*pv)) return absl::OkStatus();  // being deleted: nothing to register
  absl::StatusOr<std::string> id =
      registrar_->Register(volume_path, pv_name, InTreeStoragePolicyName(*pv));
  if (!id.ok()) {
    return Annotate(id.status(), absl::StrCat("PersistentVolume ", pv_name));
  }
  {
    absl::MutexLock l(&mu_);
    if (pv_by_cns_id_.insert_or_assign(*id, pv_name).second) ++in_tree_registered_;
  }
  CCM_RETURN_IF_ERROR(SyncVolume(*id));
  return ReregisterInTree(volume_path, *id, *pv);
}

absl::Status MetadataSyncer::ReregisterInTree(const std::string& volume_path, const std::string& id,
                                              const Json& pv) {
  {
    absl::MutexLock l(&mu_);
    if (!pvs_without_volume_.contains(id)) return absl::OkStatus();  // CNS knows it
  }
  const std::string pv_name = kube::Name(pv);
  const kube::ObjectReference ref{"PersistentVolume", "", pv_name, kube::Uid(pv), "v1", "", ""};
  absl::StatusOr<std::string> again =
      registrar_->Reregister(volume_path, id, ref, InTreeStoragePolicyName(pv));
  if (absl::IsNotFound(again.status())) {
    // Nothing to register: said once; every full sync looks again.
    absl::MutexLock l(&mu_);
    if (in_tree_disks_gone_.insert(id).second) {
      LOG_WARN("PersistentVolume {}: {}", pv_name, again.status().message());
    }
    return absl::OkStatus();
  }
  if (!again.ok()) return Annotate(again.status(), absl::StrCat("PersistentVolume ", pv_name));
  {
    absl::MutexLock l(&mu_);
    pvs_without_volume_.erase(id);
    in_tree_disks_gone_.erase(id);
    if (*again != id) {  // the same ID: CNS lists the volume again; nothing was registered anew
      pv_by_cns_id_.erase(id);
      ++in_tree_reregistered_;
    }
    pv_by_cns_id_[*again] = pv_name;
    SetGauges();
  }
  return SyncVolume(*again);
}

// An inline volume: registered under the disk's file name, while any Pod uses it, and kept
// registered after (a detach may still come with its path).
absl::Status MetadataSyncer::RegisterInline(const std::string& volume_path) {
  {
    absl::MutexLock l(&mu_);
    if (!inline_users_.contains(volume_path)) return absl::OkStatus();
  }
  const std::string file = volume_path.substr(volume_path.find_last_of("/] ") + 1);
  absl::StatusOr<std::string> id = registrar_->Register(volume_path, file);
  if (!id.ok()) return Annotate(id.status(), "inline in-tree volume of a Pod");
  absl::MutexLock l(&mu_);
  ++in_tree_registered_;
  return absl::OkStatus();
}

}  // namespace ccm::csi::syncer
