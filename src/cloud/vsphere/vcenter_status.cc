#include "cloud/vsphere/vcenter_status.h"

#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/logging.h"
#include "vsphere/answer_tracker.h"

namespace ccm::cloud {

VCenterStatus::VCenterStatus(VCenterStatusOptions options) : options_(std::move(options)) {
  if (options_.registry != nullptr) {
    gauge_ = options_.registry->Gauge(options_.gauge, options_.gauge_help, {"vcenter"});
  }
}

VCenterStatus::~VCenterStatus() { Stop(); }

void VCenterStatus::Start() {
  Poll();
  thread_ = std::thread([this] {
    while (!stop_.WaitForNotificationWithTimeout(options_.period)) Poll();
  });
}

void VCenterStatus::Stop() {
  if (!stop_.HasBeenNotified()) stop_.Notify();
  if (thread_.joinable()) thread_.join();
}

std::map<std::string, absl::Status> VCenterStatus::Current() {
  {
    absl::MutexLock l(&mu_);
    if (polled_) return last_;
  }
  Poll();
  absl::MutexLock l(&mu_);
  return last_;
}

void VCenterStatus::Poll() {
  std::map<std::string, absl::Status> now = options_.source();
  std::vector<std::pair<std::string, absl::Status>> report;
  {
    absl::MutexLock l(&mu_);
    last_ = now;
    polled_ = true;
    const bool starting = absl::Now() - started_ < options_.grace;
    for (const auto& [vcenter, s] : now) {
      auto it = reported_.find(vcenter);
      const bool known = it != reported_.end();
      if (known && it->second == s.ok()) continue;
      // Still connecting; a hang is told at once.
      if (!s.ok() && !known && starting && !vsphere::IsNotAnswering(s)) continue;
      reported_[vcenter] = s.ok();
      if (s.ok() && !known) continue;  // came up at start: nothing to tell
      report.emplace_back(vcenter, s);
    }
  }
  for (const auto& [vcenter, s] : now) {
    if (gauge_ != nullptr) gauge_->Set({vcenter}, s.ok() ? 1 : 0);
  }
  for (const auto& [vcenter, s] : report) Report(vcenter, s);
}

void VCenterStatus::Report(const std::string& vcenter, const absl::Status& now) {
  if (now.ok()) {
    LOG_INFO("vCenter {}: usable again", vcenter);
  } else {
    LOG_WARN("vCenter {}: not usable ({}): {}", vcenter, options_.effect, now.message());
  }
  if (options_.events == nullptr || options_.object.name.empty()) return;
  if (now.ok()) {
    options_.events->Normal(options_.object, "VCenterAvailable",
                            absl::StrCat("vCenter ", vcenter, " is usable again"));
  } else {
    options_.events->Warning(
        options_.object, "VCenterUnavailable",
        absl::StrCat("vCenter ", vcenter, ": ", now.message(), " (", options_.effect, ")"));
  }
}

}  // namespace ccm::cloud
