#pragma once
// A deduplicating, delaying, rate-limited work queue with client-go's semantics
// (k8s.io/client-go/util/workqueue: Type + DelayingQueue + RateLimitingQueue in one class).
//
//   - Keys are strings ("namespace/name" or "name").
//   - An item added while queued is queued once. An item added while a worker processes it is
//     not handed to a second worker: it is queued again when the worker calls Done().
//   - Get() blocks until an item is available or the queue shuts down.
//   - AddAfter() delays an add on the injected Clock; AddRateLimited() delays it by the rate
//     limiter's answer (per-item backoff, overall bucket); Forget() resets the item's backoff.
//   - ShutDown() makes Get() return `shutdown` once the queue is empty and ignores later adds;
//     ShutDownWithDrain() also waits until every item handed out has been Done().
//
// Worker loop (the one place that logs and requeues):
//   while (auto item = q.Get()) {
//     absl::Status s = Sync(*item);
//     if (s.ok()) q.Forget(*item); else q.AddRateLimited(*item);
//     q.Done(*item);
//   }
//
// Thread-safe. The destructor shuts the queue down and joins its timer thread.

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <queue>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "kube/rate_limiter.h"

namespace ccm::kube {

// Metrics of one queue (client-go's workqueue metrics). The app implements it on its Prometheus
// registry (workqueue_depth, workqueue_adds_total, workqueue_queue_duration_seconds,
// workqueue_work_duration_seconds, workqueue_retries_total, workqueue_unfinished_work_seconds,
// workqueue_longest_running_processor_seconds, all labelled name=<queue name>).
// Called with the queue's lock held: implementations must be quick and must not call the queue.
class WorkQueueMetrics {
 public:
  virtual ~WorkQueueMetrics() = default;
  virtual void SetDepth(int64_t depth) = 0;
  virtual void IncAdds() = 0;
  // Time from an item being queued to a worker picking it up.
  virtual void ObserveQueueLatency(absl::Duration d) = 0;
  // Time from Get() to Done().
  virtual void ObserveWorkDuration(absl::Duration d) = 0;
  virtual void IncRetries() = 0;
  // Sum of the running time of all items being processed, and the longest one (seconds).
  virtual void SetUnfinishedWorkSeconds(double s) = 0;
  virtual void SetLongestRunningProcessorSeconds(double s) = 0;
};

// Creates the metrics of a named queue (like client-go's workqueue.MetricsProvider).
class WorkQueueMetricsProvider {
 public:
  virtual ~WorkQueueMetricsProvider() = default;
  virtual std::unique_ptr<WorkQueueMetrics> NewQueueMetrics(const std::string& queue_name) = 0;
};

struct WorkQueueOptions {
  std::string name;                             // for metrics and logs; may be empty
  Clock* clock = nullptr;                       // null = Clock::Real()
  std::unique_ptr<RateLimiter> limiter;         // null = DefaultControllerRateLimiter(*clock)
  WorkQueueMetricsProvider* metrics = nullptr;  // null = no metrics
};

class WorkQueue {
 public:
  explicit WorkQueue(WorkQueueOptions options = {});
  ~WorkQueue();
  WorkQueue(const WorkQueue&) = delete;
  WorkQueue& operator=(const WorkQueue&) = delete;

  void Add(const std::string& item);
  // Adds `item` once `delay` has passed on the clock (at once if delay <= 0). If the item is
  // already waiting, the earlier of the two times wins.
  void AddAfter(const std::string& item, absl::Duration delay);
  // AddAfter(item, limiter.When(item)); counts a retry.
  void AddRateLimited(const std::string& item);
  // Clears the item's rate-limiter history (call when it was processed successfully or dropped).
  void Forget(const std::string& item);
  int NumRequeues(const std::string& item);

  // Blocks until an item is available (returned; the caller must call Done) or the queue is shut
  // down and empty (nullopt).
  std::optional<std::string> Get();
  // Up to `max` items that are ready now, without blocking (none when there are none); each
  // handed out as by Get() (the caller must call Done for each).
  std::vector<std::string> GetReady(size_t max);
  // Marks `item` processed; if it was added again meanwhile, it is queued now.
  void Done(const std::string& item);

  // Items queued and ready (not counting delayed ones or ones being processed).
  int Len();
  // Items waiting for their AddAfter time.
  int NumWaiting();

  void ShutDown();
  // ShutDown, then block until every item handed out by Get() is Done().
  void ShutDownWithDrain();
  bool ShuttingDown();

  // Pushes unfinished-work and longest-running-processor seconds to the metrics. The app calls
  // it periodically (client-go does every 500ms) or when it is scraped.
  void UpdateUnfinishedWorkMetrics();

 private:
  struct Waiting {
    absl::Time ready;
    uint64_t seq;  // FIFO among equal times
    std::string item;
    bool operator>(const Waiting& o) const {
      return ready != o.ready ? ready > o.ready : seq > o.seq;
    }
  };

  void AddLocked(const std::string& item) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Hands out the front item (the queue must not be empty).
  std::string TakeFrontLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Moves waiting items whose time has come into the queue; returns the next ready time.
  std::optional<absl::Time> PromoteLocked(absl::Time now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void WakeTimerLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void TimerLoop();

  const std::string name_;
  Clock& clock_;
  std::unique_ptr<RateLimiter> limiter_;
  std::unique_ptr<WorkQueueMetrics> metrics_;

  absl::Mutex mu_;
  std::deque<std::string> queue_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_set<std::string> dirty_ ABSL_GUARDED_BY(mu_);
  // Item -> when a worker got it.
  absl::flat_hash_map<std::string, absl::Time> processing_ ABSL_GUARDED_BY(mu_);
  // Item -> when it was queued (for the latency metric).
  absl::flat_hash_map<std::string, absl::Time> added_at_ ABSL_GUARDED_BY(mu_);
  std::priority_queue<Waiting, std::vector<Waiting>, std::greater<Waiting>> waiting_
      ABSL_GUARDED_BY(mu_);
  // Item -> its current ready time; heap entries that disagree are stale and skipped.
  absl::flat_hash_map<std::string, absl::Time> waiting_ready_ ABSL_GUARDED_BY(mu_);
  uint64_t seq_ ABSL_GUARDED_BY(mu_) = 0;
  bool shutting_down_ ABSL_GUARDED_BY(mu_) = false;
  // Notified to wake the timer thread early (a sooner item arrived, or shutdown).
  std::shared_ptr<absl::Notification> timer_wake_ ABSL_GUARDED_BY(mu_);
  absl::Notification stop_timer_;
  std::thread timer_;
};

}  // namespace ccm::kube
