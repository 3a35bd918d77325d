#pragma once
// Time is injected everywhere (backoff, resync, lease renewal, work queue delays) so tests are
// exact: production code uses RealClock, tests use FakeClock (test/testing/fake_clock.h) and
// move time by hand.
// Thread-safe: all methods may be called from any thread.

#include <cstdint>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"

namespace ccm {

class Clock {
 public:
  virtual ~Clock() = default;
  virtual absl::Time Now() const = 0;
  // Blocks until `d` has passed on this clock or `cancel` (may be null) is notified.
  // Returns false when cancelled.
  virtual bool SleepFor(absl::Duration d, const absl::Notification* cancel) = 0;
  // Like SleepFor(t - Now()), but an implementation may read Now() atomically with starting the
  // sleep (FakeClock does, so a concurrent Advance() cannot push the deadline back).
  virtual bool SleepUntil(absl::Time t, const absl::Notification* cancel) {
    return SleepFor(t - Now(), cancel);
  }
  // The process-wide real clock.
  static Clock& Real();
};

class RealClock final : public Clock {
 public:
  absl::Time Now() const override { return absl::Now(); }
  bool SleepFor(absl::Duration d, const absl::Notification* cancel) override;
};

}  // namespace ccm
