#pragma once
// FakeClock: the Clock tests move by hand (see common/clock.h).

#include <set>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "common/clock.h"

namespace ccm {

// Manual clock for tests: Now() only moves with Advance(); sleepers wake when time passes their
// deadline. WaitForSleepers lets a test know that background threads have reached a sleep.
// A sleeper counts only while its deadline is in the future: right after Advance() the threads
// it woke no longer count, even before they have run, so "advance, then wait for n sleepers"
// waits for them to finish their work and sleep again.
class FakeClock final : public Clock {
 public:
  explicit FakeClock(absl::Time start = absl::FromUnixSeconds(1'700'000'000)) : now_(start) {}
  absl::Time Now() const override;
  bool SleepFor(absl::Duration d, const absl::Notification* cancel) override;
  bool SleepUntil(absl::Time t, const absl::Notification* cancel) override;
  void Advance(absl::Duration d);
  // Moves time to the earliest deadline of a sleeping thread (no-op when none sleeps); returns
  // how far it moved.
  absl::Duration AdvanceToNextWakeup();
  // Blocks (real time, up to `timeout`) until at least `n` threads are sleeping on this clock.
  bool WaitForSleepers(int n, absl::Duration timeout = absl::Seconds(10)) const;
  // Blocks (real time, up to `timeout`) until a thread sleeps until `deadline` or later: a
  // periodic loop has computed its next wake-up (other sleepers, with nearer deadlines, do not
  // count).
  bool WaitForSleeperUntil(absl::Time deadline, absl::Duration timeout = absl::Seconds(10)) const;
  int sleepers() const;

 private:
  bool SleepUntilLocked(absl::Time deadline, const absl::Notification* cancel)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  int SleepersLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  mutable absl::Mutex mu_;
  absl::Time now_ ABSL_GUARDED_BY(mu_);
  std::multiset<absl::Time> deadlines_ ABSL_GUARDED_BY(mu_);  // of the sleeping threads
};

}  // namespace ccm
