#pragma once
// The provider-readiness gate of the periodic passes (node lifecycle, address refresh).
//
// While a vCenter's inventory is not synced (before its first load, or while it resyncs after
// vCenter went away) every per-Node look-up would fail with Unavailable; asking anyway turned
// each outage into a warning per Node per period. A pass therefore asks Instances::Ready() first
// and skips what needs the provider when it is not OK. The gate makes an outage visible once:
//   - one LOG_WARN when passes start being skipped, one LOG_INFO (with the count) when they
//     resume, nothing per skipped pass beyond VLOG(2);
//   - a counter per skipped pass: `<skipped>{reason="vcenter_not_synced"}`.
// Events (which need an involved object) are left to the controller.
// Not thread-safe: one pass loop owns it.

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "cloud/core/instances.h"
#include "common/metrics.h"

namespace ccm::controllers {

class ReadyGate {
 public:
  // `who` prefixes log lines ("node lifecycle"); `skipped` (nullable) is the counter family with
  // the single label "reason". `instances` must outlive the gate.
  ReadyGate(cloud::Instances& instances, std::string who, metrics::Family* skipped);

  struct Result {
    absl::Status ready;         // Instances::Ready()
    bool outage_began = false;  // first skipped pass since the last one that ran
  };
  // Called once per pass. Not OK: the caller skips the provider-dependent part of the pass; the
  // skip is counted and logged as described above.
  Result Check();
  bool in_outage() const { return skipped_in_outage_ > 0; }

  // Start-up: blocks until Ready() is OK, polling every `poll` (real time, like an informer's
  // WaitForSync: a start-up condition, not a schedule under test). Logs one info line if it has
  // to wait and one when ready. False when `stop` was notified first. Counts nothing.
  bool WaitUntilReady(const absl::Notification& stop, absl::Duration poll);

 private:
  cloud::Instances& instances_;
  const std::string who_;
  metrics::Family* skipped_;
  int64_t skipped_in_outage_ = 0;
};

}  // namespace ccm::controllers
