#include "csi/controller/storage_policies.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/logging.h"
#include "common/status_macros.h"

namespace ccm::csi {

StoragePolicies::StoragePolicies(vsphere::pbm::PbmClient& pbm, StoragePoliciesOptions options)
    : pbm_(pbm),
      options_(std::move(options)),
      clock_(options_.clock ? *options_.clock : Clock::Real()) {}

absl::Status StoragePolicies::Relist() {
  CCM_ASSIGN_OR_RETURN(std::vector<vsphere::pbm::Profile> profiles, pbm_.ListProfiles());
  ids_.clear();
  for (const vsphere::pbm::Profile& p : profiles) ids_.emplace(p.name, p.id);
  listed_at_ = clock_.Now();
  VLOG(1, "vCenter {}: {} storage policies", options_.vcenter, ids_.size());
  return absl::OkStatus();
}

absl::StatusOr<std::string> StoragePolicies::IdOf(const std::string& name) {
  absl::MutexLock l(&mu_);
  const absl::Time now = clock_.Now();
  if (now - listed_at_ >= options_.ttl ||
      (!ids_.contains(name) && now - listed_at_ >= options_.min_relist)) {
    if (absl::Status s = Relist(); !s.ok()) {
      return Annotate(s, absl::StrCat("storage policies of vCenter ", options_.vcenter));
    }
  }
  auto it = ids_.find(name);
  if (it == ids_.end()) {
    return absl::NotFoundError(absl::StrCat("storage policy \"", name,
                                            "\" does not exist in vCenter ", options_.vcenter,
                                            " (names are case-sensitive)"));
  }
  return it->second;
}

absl::StatusOr<std::set<std::string>> StoragePolicies::Compatible(
    const std::string& profile_id, const std::vector<std::string>& datastores) {
  std::vector<std::string> asked = datastores;
  std::sort(asked.begin(), asked.end());
  absl::MutexLock l(&mu_);
  auto it = verdicts_.find(profile_id);
  if (it != verdicts_.end() && it->second.asked == asked &&
      clock_.Now() - it->second.at < options_.ttl) {
    return it->second.compatible;
  }
  std::vector<vsphere::Moref> hubs;
  for (const std::string& d : asked) hubs.push_back({"Datastore", d});
  CCM_ASSIGN_OR_RETURN(std::vector<vsphere::pbm::HubCompatibility> answer,
                       pbm_.CheckCompatibility(profile_id, hubs));
  Verdict v{asked, {}, clock_.Now()};
  for (const vsphere::pbm::HubCompatibility& h : answer) {
    if (h.compatible && h.hub.type == "Datastore") v.compatible.insert(h.hub.value);
  }
  verdicts_[profile_id] = v;
  return v.compatible;
}

}  // namespace ccm::csi
