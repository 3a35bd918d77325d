#pragma once
// The skeleton every controller runs on (node, node lifecycle, and the CSI metadata syncer):
//
//   Start() -> wait until every informer has synced -> optional readiness wait (e.g. every
//   vCenter inventory loaded) -> `workers` threads calling process_next_item() until it returns
//   false (the queue was shut down), and/or a periodic pass on a fixed schedule.
//   Stop() -> stop notified, queue shut down, every thread joined.
//
// The periodic schedule is fixed (next = previous + period), so time spent in a pass does not
// push the next one back; when far behind (a long stall) it skips to now rather than running
// several passes back to back. Its origin is Start(), or the end of the waits when they took
// time. Time is the injected Clock, so tests move it by hand (FakeClock) and never sleep.

#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "kube/informer.h"

namespace ccm::kube {

struct ControllerSpec {
  std::string name;                  // for logs ("node controller")
  std::vector<Informer*> informers;  // all must have synced before anything runs
  // Extra wait after the informers; returns false when `stop` was notified first.
  std::function<bool(const absl::Notification& stop)> wait_ready;
  int workers = 0;                               // threads running process_next_item
  std::function<bool()> process_next_item;       // one worker step; false once shut down
  std::function<void()> shut_down_queue;         // Stop() calls it before joining the workers
  absl::Duration period = absl::ZeroDuration();  // zero: no periodic pass
  bool pass_at_start = false;  // the first pass at once (else one period after the start)
  std::function<void()> pass;
};

class ControllerRunner {
 public:
  explicit ControllerRunner(Clock& clock) : clock_(clock) {}
  ~ControllerRunner() { Stop(); }
  ControllerRunner(const ControllerRunner&) = delete;
  ControllerRunner& operator=(const ControllerRunner&) = delete;

  // Returns at once. Only the first call counts; a call after Stop() does nothing.
  void Start(ControllerSpec spec);
  // Idempotent; returns when every thread has ended.
  void Stop();

  // Notified by Stop(); passes that walk many objects check it to end early.
  const absl::Notification& stopping() const { return stop_; }
  Clock& clock() const { return clock_; }
  // When Start() was called (on the clock).
  absl::Time start_time() const;

 private:
  void Run();
  void PeriodicLoop();

  Clock& clock_;
  // Written by Start() under mu_ before any thread exists, then read-only.
  ControllerSpec spec_;
  mutable absl::Mutex mu_;
  bool started_ ABSL_GUARDED_BY(mu_) = false;
  absl::Time start_time_ ABSL_GUARDED_BY(mu_);
  absl::Notification stop_;
  std::thread runner_;
  std::vector<std::thread> threads_;  // owned by runner_ until it is joined
};

}  // namespace ccm::kube
