#pragma once
// Leader election on a coordination.k8s.io Lease, as vsphere-cloud-controller-manager and the CSI
// syncer run it: the identity "<hostname>_<random>", a client view with its own rate limit, the
// Lease lock and the elector, made together and destroyed together.

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "kube/client.h"
#include "kube/kube_lease_lock.h"
#include "kube/leader_election.h"

namespace ccm::app {

// This machine's hostname ("" if unknown).
std::string Hostname();

struct LeaseCampaignOptions {
  std::string ns;
  std::string name;
  absl::Duration lease_duration = absl::Seconds(15);
  absl::Duration renew_deadline = absl::Seconds(10);
  absl::Duration retry_period = absl::Seconds(2);
};

class LeaseCampaign {
 public:
  // `callbacks` is made once the identity is known (for its log lines). Errors (durations that
  // do not fit together) say which.
  template <class MakeCallbacks>
  static absl::StatusOr<std::unique_ptr<LeaseCampaign>> New(const kube::RestClient& client,
                                                            const LeaseCampaignOptions& options,
                                                            MakeCallbacks make_callbacks) {
    std::unique_ptr<LeaseCampaign> c(new LeaseCampaign(client, options));
    absl::Status s = c->MakeElector(make_callbacks(c->identity()));
    if (!s.ok()) return s;
    return c;
  }
  ~LeaseCampaign();
  LeaseCampaign(const LeaseCampaign&) = delete;
  LeaseCampaign& operator=(const LeaseCampaign&) = delete;

  const std::string& identity() const { return identity_; }
  // Campaigns and leads until `stop` (the Lease is released) or the Lease is lost; returns
  // whether it was lost. Once.
  bool Run(const absl::Notification& stop);
  // The liveness check (LeaderElector::Check).
  absl::Status Check(absl::Duration tolerance) const;

 private:
  LeaseCampaign(const kube::RestClient& client, const LeaseCampaignOptions& options);
  absl::Status MakeElector(kube::LeaderCallbacks callbacks);

  const LeaseCampaignOptions options_;
  const std::string identity_;
  const std::unique_ptr<kube::RestClient> client_;
  kube::KubeLeaseLock lock_;
  std::unique_ptr<kube::LeaderElector> elector_;
};

}  // namespace ccm::app
