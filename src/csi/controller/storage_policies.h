#pragma once
// Storage policies of one vCenter for placement, from SPBM (PbmClient), cached so that a
// CreateVolume normally costs no PBM request:
//  - name -> profile id: the list of profiles is read once and again on a miss (an unknown name:
//    a policy created since), at most once per `min_relist`, and after `ttl` (renamed or deleted
//    policies);
//  - profile -> the datastores compatible with it (PbmCheckCompatibility over the datastores of
//    the view): kept for `ttl` while the set of datastores asked about is the same.
// Errors: NotFound naming the policy and the vCenter when SPBM has no profile of that name; the
// PbmClient's otherwise (Unavailable when vCenter could not be asked). Thread-safe.

#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "csi/controller/controller_cloud.h"
#include "vsphere/pbm/pbm_client.h"

namespace ccm::csi {

struct StoragePoliciesOptions {
  std::string vcenter;  // label, for messages
  absl::Duration ttl = absl::Minutes(5);
  absl::Duration min_relist = absl::Seconds(10);
  Clock* clock = nullptr;  // null: real clock
};

class StoragePolicies final : public PolicyCatalog {
 public:
  // `pbm` must outlive this.
  StoragePolicies(vsphere::pbm::PbmClient& pbm, StoragePoliciesOptions options);

  absl::StatusOr<std::string> IdOf(const std::string& name) override;
  // The MOIDs among `datastores` (MOIDs) that satisfy the profile.
  absl::StatusOr<std::set<std::string>> Compatible(
      const std::string& profile_id, const std::vector<std::string>& datastores) override;

 private:
  struct Verdict {
    std::vector<std::string> asked;  // sorted
    std::set<std::string> compatible;
    absl::Time at;
  };
  absl::Status Relist() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  vsphere::pbm::PbmClient& pbm_;
  const StoragePoliciesOptions options_;
  Clock& clock_;
  absl::Mutex mu_;  // held across PBM calls: concurrent creates share one answer
  std::map<std::string, std::string> ids_ ABSL_GUARDED_BY(mu_);  // name -> id
  absl::Time listed_at_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  std::map<std::string, Verdict> verdicts_ ABSL_GUARDED_BY(mu_);  // profile id ->
};

}  // namespace ccm::csi
