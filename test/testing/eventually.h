#pragma once
// The one polling wait for tests (issue 11 item 6).
//
// Eventually is a real-time wait for an effect produced on another thread or by I/O: a worker
// thread's write to the fake API server, a child process answering, a watch event arriving. It
// is never a way to let a schedule pass: when the code under test waits on a Clock, the test uses
// FakeClock, waits with FakeClock::WaitForSleepers(n) until the threads are asleep, then
// Advance()s, so no test depends on how fast the machine is.

#include <functional>

#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace ccm::testing {

// Polls `cond` every `poll` (real time) until it returns true (then true) or `timeout` has
// passed (then false, after one last check). The timeout is generous on purpose: it only bounds
// a failing test, a passing one returns as soon as the effect is visible.
inline bool Eventually(const std::function<bool()>& cond,
                       absl::Duration timeout = absl::Seconds(20),
                       absl::Duration poll = absl::Milliseconds(5)) {
  const absl::Time deadline = absl::Now() + timeout;
  while (!cond()) {
    if (absl::Now() >= deadline) return cond();
    absl::SleepFor(poll);
  }
  return true;
}

}  // namespace ccm::testing
