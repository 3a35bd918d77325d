#pragma once
// Bounds a process's stop whatever its servers do (issue 43): when `stop` is notified (SIGTERM,
// a config change that needs a restart), `set(now + budget)` is called once, from a thread of
// its own, at that moment. The binaries pass their Kubernetes clients' SetDeadline, so that
// a hung API server cannot hold the lease release, the informers' stop or a last write past the
// budget; everything that runs before the deadline (the release first) still gets its chance.

#include <atomic>
#include <functional>
#include <thread>

#include "absl/synchronization/notification.h"
#include "absl/time/time.h"

namespace ccm::app {

// The Kubernetes requests' share of the 5 s a pod gets to stop in our bound (the vCenter
// clean-up, cloud::VCenter::kStopBudget, runs at the same time). 2.5 s, not more: a transfer
// under way ends up to about a second after the deadline, and the shutdown steps after the
// lease release need their share too; at 3.5 s a hung API server's stop took 3.5 s on a quiet
// machine and passed 5 s under a CI run's load.
inline constexpr absl::Duration kKubeStopBudget = absl::Milliseconds(2500);

class StopDeadline {
 public:
  // `stop` must outlive this object.
  StopDeadline(const absl::Notification& stop, absl::Duration budget,
               std::function<void(absl::Time)> set);
  ~StopDeadline();  // ends the thread (without calling `set` when stop was never notified)
  StopDeadline(const StopDeadline&) = delete;
  StopDeadline& operator=(const StopDeadline&) = delete;

 private:
  std::atomic<bool> done_{false};
  std::thread thread_;
};

}  // namespace ccm::app
