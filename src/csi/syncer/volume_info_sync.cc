// The syncer's CnsVolumeInfo upkeep (several vCenters; volume_info_upkeep.h): full syncs make the
// missing records and remove stale ones, a PV's deletion removes its record, a static PV's
// registration makes one.
#include "common/logging.h"
#include "csi/syncer/metadata_syncer.h"

namespace ccm::csi::syncer {

void MetadataSyncer::KeepVolumeInfos(const std::map<std::string, std::string>& located,
                                     const std::set<std::string>& named) {
  if (volume_infos_ == nullptr) return;
  absl::StatusOr<std::map<std::string, std::string>> records = volume_infos_->List();
  if (!records.ok()) {
    LOG_WARN("CnsVolumeInfo upkeep skipped this full sync: {}", records.status().message());
    return;
  }
  std::set<std::string> vcenters;
  for (const CnsTarget& t : targets_) vcenters.insert(t.vcenter);
  std::set<std::string> unnamed_before;
  {
    absl::MutexLock l(&mu_);
    unnamed_before = volume_infos_unnamed_;
  }
  const VolumeInfoPlan plan = PlanVolumeInfos(located, named, *records, vcenters, unnamed_before);
  int64_t removed = 0, created = 0;
  for (const std::string& id : plan.remove) {
    absl::Status s = volume_infos_->Delete(id);
    if (!s.ok()) {
      LOG_WARN("{} (tried again by the next full sync)", s.message());
      continue;
    }
    LOG_INFO(
        "CnsVolumeInfo of volume {} (vCenter {}) deleted: no PersistentVolume names it, or "
        "CNS lists the volume in another vCenter",
        id, (*records)[id]);
    ++removed;
  }
  for (const auto& [id, vcenter] : plan.create) {
    absl::Status s = volume_infos_->Create(id, vcenter);
    if (!s.ok()) {
      LOG_WARN("{} (tried again by the next full sync)", s.message());
      continue;
    }
    LOG_INFO("CnsVolumeInfo of volume {} created: vCenter {}", id, vcenter);
    ++created;
  }
  absl::MutexLock l(&mu_);
  volume_infos_unnamed_ = plan.unnamed;
  volume_infos_created_ += created;
  volume_infos_removed_ += removed;
}

void MetadataSyncer::ForgetVolumeInfo(const std::string& handle) {
  if (volume_infos_ == nullptr || CnsIdOf(handle) != handle) return;  // bare IDs only
  absl::Status s = volume_infos_->Delete(handle);
  if (!s.ok()) LOG_WARN("{} (the next full sync tries again)", s.message());
}

void MetadataSyncer::RecordVolumeInfo(const std::string& handle, const std::string& vcenter) {
  if (volume_infos_ == nullptr || CnsIdOf(handle) != handle) return;
  absl::Status s = volume_infos_->Create(handle, vcenter);
  if (!s.ok()) LOG_WARN("{} (the next full sync tries again)", s.message());
}

}  // namespace ccm::csi::syncer
