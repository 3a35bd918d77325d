#include "controllers/ready_gate.h"

#include <utility>

#include "common/logging.h"

namespace ccm::controllers {

ReadyGate::ReadyGate(cloud::Instances& instances, std::string who, metrics::Family* skipped)
    : instances_(instances), who_(std::move(who)), skipped_(skipped) {}

ReadyGate::Result ReadyGate::Check() {
  Result r;
  r.ready = instances_.Ready();
  if (r.ready.ok()) {
    if (skipped_in_outage_ > 0) {
      LOG_INFO("{}: every vCenter inventory is synced again; resuming after {} skipped passes",
               who_, skipped_in_outage_);
      skipped_in_outage_ = 0;
    }
    return r;
  }
  if (skipped_) skipped_->Add({"vcenter_not_synced"});
  r.outage_began = skipped_in_outage_ == 0;
  ++skipped_in_outage_;
  if (r.outage_began) {
    LOG_WARN(
        "{}: skipping passes until every vCenter inventory is synced (nothing is deleted, "
        "tainted or refreshed meanwhile): {}",
        who_, r.ready);
  } else {
    VLOG(2, "{}: pass skipped ({} in a row): {}", who_, skipped_in_outage_, r.ready);
  }
  return r;
}

bool ReadyGate::WaitUntilReady(const absl::Notification& stop, absl::Duration poll) {
  bool waited = false;
  for (absl::Status s = instances_.Ready(); !s.ok(); s = instances_.Ready()) {
    if (!waited) {
      LOG_INFO("{}: waiting for every vCenter inventory to sync before the first pass: {}", who_,
               s);
      waited = true;
    }
    if (stop.WaitForNotificationWithTimeout(poll)) return false;
  }
  if (stop.HasBeenNotified()) return false;
  if (waited) LOG_INFO("{}: every vCenter inventory is synced; starting", who_);
  return true;
}

}  // namespace ccm::controllers
