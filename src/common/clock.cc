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

absl::Time FakeClock::Now() const {
  absl::MutexLock lock(&mu_);
  return now_;
}

bool FakeClock::SleepFor(absl::Duration d, const absl::Notification* cancel) {
  absl::MutexLock lock(&mu_);
  return SleepUntilLocked(now_ + d, cancel);
}

bool FakeClock::SleepUntil(absl::Time t, const absl::Notification* cancel) {
  absl::MutexLock lock(&mu_);
  return SleepUntilLocked(t, cancel);
}

bool FakeClock::SleepUntilLocked(absl::Time deadline, const absl::Notification* cancel) {
  ++sleepers_;
  bool cancelled = false;
  // A notification cannot be awaited together with a mutex condition, so the wait re-checks it at a
  // short real interval. Time itself only moves through Advance().
  while (now_ < deadline) {
    if (cancel != nullptr && cancel->HasBeenNotified()) {
      cancelled = true;
      break;
    }
    auto passed = [this, deadline]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return now_ >= deadline; };
    mu_.AwaitWithTimeout(absl::Condition(&passed), absl::Milliseconds(5));
  }
  --sleepers_;
  if (!cancelled && cancel != nullptr && cancel->HasBeenNotified()) cancelled = true;
  return !cancelled;
}

void FakeClock::Advance(absl::Duration d) {
  absl::MutexLock lock(&mu_);
  now_ += d;
}

bool FakeClock::WaitForSleepers(int n, absl::Duration timeout) const {
  absl::MutexLock lock(&mu_);
  auto enough = [this, n]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return sleepers_ >= n; };
  return mu_.AwaitWithTimeout(absl::Condition(&enough), timeout);
}

int FakeClock::sleepers() const {
  absl::MutexLock lock(&mu_);
  return sleepers_;
}

}  // namespace ccm
