#include "app/shared/stop_deadline.h"

#include <utility>

namespace ccm::app {

StopDeadline::StopDeadline(const absl::Notification& stop, absl::Duration budget,
                           std::function<void(absl::Time)> set) {
  thread_ = std::thread([this, &stop, budget, set = std::move(set)] {
    // Polls its own end: a Notification cannot be waited on together with another.
    while (!stop.WaitForNotificationWithTimeout(absl::Milliseconds(50))) {
      if (done_.load()) return;
    }
    set(absl::Now() + budget);
  });
}

StopDeadline::~StopDeadline() {
  done_.store(true);
  if (thread_.joinable()) thread_.join();
}

}  // namespace ccm::app
