#include "csi/syncer/volume_info_upkeep.h"

#include "absl/strings/str_cat.h"
#include "csi/crd/cnsvolumeinfo.h"
#include "kube/errors.h"

namespace ccm::csi::syncer {

absl::StatusOr<std::map<std::string, std::string>> KubeVolumeInfoStore::List() {
  absl::StatusOr<kube::ListResult> all = client_.ListAll(CnsVolumeInfos(), ns_, {});
  if (!all.ok()) {
    return absl::Status(all.status().code(), absl::StrCat("list CnsVolumeInfo objects of ", ns_,
                                                          ": ", all.status().message()));
  }
  std::map<std::string, std::string> out;
  for (const kube::Json& obj : all->items) {
    CnsVolumeInfo info = ParseCnsVolumeInfo(obj);
    if (!info.volume_id.empty()) out[info.volume_id] = info.vcenter_server;
  }
  return out;
}

absl::Status KubeVolumeInfoStore::Create(const std::string& volume_id, const std::string& vcenter) {
  absl::StatusOr<kube::Json> made =
      client_.Create(CnsVolumeInfos(), ns_, NewCnsVolumeInfo(ns_, volume_id, vcenter));
  if (made.ok() || kube::IsAlreadyExistsError(made.status())) return absl::OkStatus();
  return absl::Status(made.status().code(),
                      absl::StrCat("create CnsVolumeInfo ", ns_, "/", CnsVolumeInfoName(volume_id),
                                   ": ", made.status().message()));
}

absl::Status KubeVolumeInfoStore::Delete(const std::string& volume_id) {
  absl::Status s = client_.Delete(CnsVolumeInfos(), ns_, CnsVolumeInfoName(volume_id));
  if (s.ok() || kube::IsNotFoundError(s)) return absl::OkStatus();
  return absl::Status(s.code(), absl::StrCat("delete CnsVolumeInfo ", ns_, "/",
                                             CnsVolumeInfoName(volume_id), ": ", s.message()));
}

VolumeInfoPlan PlanVolumeInfos(const std::map<std::string, std::string>& located,
                               const std::set<std::string>& named,
                               const std::map<std::string, std::string>& records,
                               const std::set<std::string>& vcenters,
                               const std::set<std::string>& unnamed) {
  VolumeInfoPlan plan;
  for (const auto& [id, vcenter] : located) {
    auto it = records.find(id);
    if (it != records.end() && it->second == vcenter) continue;
    if (it != records.end()) plan.remove.push_back(id);  // names the wrong vCenter
    plan.create.emplace_back(id, vcenter);
  }
  for (const auto& [id, vcenter] : records) {
    if (named.contains(id) || !vcenters.contains(vcenter)) continue;
    plan.unnamed.insert(id);
    if (unnamed.contains(id)) plan.remove.push_back(id);  // no PV in two full syncs
  }
  return plan;
}

}  // namespace ccm::csi::syncer
