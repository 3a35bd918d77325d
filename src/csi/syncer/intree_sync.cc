// The syncer's in-tree volumes (CSI migration): which PVs they are, and their registration.
#include "absl/strings/str_cat.h"
#include "common/logging.h"
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

absl::Status MetadataSyncer::SyncInTree(const std::string& volume_path) {
  std::string pv_name;
  {
    absl::MutexLock l(&mu_);
    auto it = pv_by_path_.find(volume_path);
    if (it != pv_by_path_.end()) pv_name = it->second;
  }
  kube::ObjectPtr pv = pv_name.empty() ? nullptr : pvs_.Get(pv_name);
  if (pv == nullptr || !IsMigratedInTreePv(*pv) || InTreeVolumePath(*pv) != volume_path) {
    return registrar_->Unregister(volume_path);  // its PV is gone (the disk is kept)
  }
  absl::StatusOr<std::string> id =
      registrar_->Register(volume_path, pv_name, InTreeStoragePolicyName(*pv));
  if (!id.ok()) {
    return Annotate(id.status(), absl::StrCat("PersistentVolume ", pv_name));
  }
  {
    absl::MutexLock l(&mu_);
    if (pv_by_cns_id_.insert_or_assign(*id, pv_name).second) ++in_tree_registered_;
  }
  return SyncVolume(*id);
}

}  // namespace ccm::csi::syncer
