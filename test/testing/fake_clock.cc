#include "testing/fake_clock.h"

#include <iterator>

namespace ccm {

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
  auto entry = deadlines_.insert(deadline);
  bool cancelled = false;
  // A notification cannot be awaited together with a mutex condition, so the wait re-checks it at a
  // short real interval. Time itself only moves through Advance().
  while (now_ < deadline) {
    if (cancel != nullptr && cancel->HasBeenNotified()) {
      cancelled = true;
      break;
    }
    auto passed = [this, deadline]()
                      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return now_ >= deadline; };
    mu_.AwaitWithTimeout(absl::Condition(&passed), absl::Milliseconds(5));
  }
  deadlines_.erase(entry);
  if (!cancelled && cancel != nullptr && cancel->HasBeenNotified()) cancelled = true;
  return !cancelled;
}

void FakeClock::Advance(absl::Duration d) {
  absl::MutexLock lock(&mu_);
  now_ += d;
}

absl::Duration FakeClock::AdvanceToNextWakeup() {
  absl::MutexLock lock(&mu_);
  auto next = deadlines_.upper_bound(now_);
  if (next == deadlines_.end()) return absl::ZeroDuration();
  absl::Duration moved = *next - now_;
  now_ = *next;
  return moved;
}

int FakeClock::SleepersLocked() const {
  // Deadlines at or before now_ belong to threads that are waking up (not asleep any more).
  return static_cast<int>(std::distance(deadlines_.upper_bound(now_), deadlines_.end()));
}

bool FakeClock::WaitForSleepers(int n, absl::Duration timeout) const {
  absl::MutexLock lock(&mu_);
  auto enough = [this, n]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return SleepersLocked() >= n; };
  return mu_.AwaitWithTimeout(absl::Condition(&enough), timeout);
}

bool FakeClock::WaitForSleeperUntil(absl::Time deadline, absl::Duration timeout) const {
  absl::MutexLock lock(&mu_);
  auto asleep = [this, deadline]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return !deadlines_.empty() && *deadlines_.rbegin() >= deadline && *deadlines_.rbegin() > now_;
  };
  return mu_.AwaitWithTimeout(absl::Condition(&asleep), timeout);
}

int FakeClock::sleepers() const {
  absl::MutexLock lock(&mu_);
  return SleepersLocked();
}

}  // namespace ccm
