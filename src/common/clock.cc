#include "common/clock.h"

namespace ccm {

Clock& Clock::Real() {
  static RealClock* clock = new RealClock();
  return *clock;
}

bool RealClock::SleepFor(absl::Duration d, const absl::Notification* cancel) {
  if (cancel == nullptr) {
    absl::SleepFor(d);
    return true;
  }
  if (d <= absl::ZeroDuration()) return !cancel->HasBeenNotified();
  return !cancel->WaitForNotificationWithTimeout(d);
}

}  // namespace ccm
