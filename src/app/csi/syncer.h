#pragma once
// vsphere-csi-driver in syncer mode: csi-vsphere.conf -> one vCenter session and CNS client per
// vCenter, the Kubernetes client and PV/PVC/Pod informers -> (under the Lease vsphere-syncer when
// --leader-election) the CNS metadata syncer (csi/syncer) -> /metrics and /healthz on 2113.

#include <map>
#include <string>
#include <vector>

#include "absl/synchronization/notification.h"
#include "app/csi/syncer_options.h"

namespace ccm::app {

// Runs until `stop` is notified (exit code 0) or the Lease is lost (1, as the cloud controller
// manager: the container restarts as a candidate). Start-up failures log why and return 1.
int RunCsiSyncer(const CsiSyncerOptions& options, const std::map<std::string, std::string>& env,
                 absl::Notification& stop);

// X_CSI_MODE=syncer (case-insensitive): main() runs the syncer instead of the driver.
bool IsCsiSyncerMode(const std::map<std::string, std::string>& env);

}  // namespace ccm::app
