#pragma once
// Records core/v1 Events the way client-go's record.EventRecorder does:
//
//   - Asynchronous: Record() only queues (bounded; drops and counts when full), a background
//     thread sends, so a controller never blocks on the API server.
//   - Aggregated (client-go's EventCorrelator): the same object + type + reason + message seen
//   again
//     within `aggregation_window` of its last occurrence PATCHes the existing Event (count + 1,
//     lastTimestamp) instead of creating a new one. If that Event is gone, it is created again.
//   - Spam filter: a token bucket per involved object (burst 25, refilled 1 per 5 minutes); events
//     beyond it are dropped.
//   - Transport errors (Unavailable, DeadlineExceeded, ResourceExhausted, Unknown) are retried up
//     to 12 times, 10s apart on the injected clock; an answer of the API server (Forbidden,
//     Invalid, AlreadyExists ...) is not retried.
//
// Messages are shown to every user who can read events: callers must never put a credential,
// a password, a token or a Secret's content into a reason or message.

#include <cstdint>
#include <deque>
#include <list>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "common/metrics.h"
#include "kube/event_sink.h"
#include "kube/rate_limiter.h"

namespace ccm::kube {

enum class EventType { kNormal, kWarning };
absl::string_view EventTypeName(EventType t);  // "Normal", "Warning"

struct EventRecorderOptions {
  std::string component = "cloud-controller-manager";  // source.component
  std::string host;                  // source.host (the node we run on); may be empty
  std::string reporting_controller;  // "" = component
  std::string reporting_instance;    // "" = host
  Clock* clock = nullptr;            // null = Clock::Real()
  size_t queue_size = 1000;
  absl::Duration aggregation_window = absl::Minutes(10);
  int spam_burst = 25;
  double spam_qps = 1.0 / 300;
  size_t cache_size = 4096;  // objects / event kinds remembered (least recently used evicted)
  int max_tries = 12;
  absl::Duration retry_interval = absl::Seconds(10);
  // Nullable. Registers events_dropped_total{reason}: "queue_full" (Record() found the queue
  // full), "shut_down" (recorded after Shutdown()), "spam_filter" (over the per-object budget).
  metrics::Registry* metrics = nullptr;
};

// The pure part: spam filter and aggregation. Not thread-safe (the recorder's thread owns it).
class EventCorrelator {
 public:
  EventCorrelator(Clock& clock, const EventRecorderOptions& options);
  struct Result {
    bool skip = false;   // dropped by the spam filter
    bool patch = false;  // repeat of an existing event: PATCH it
    Event event;         // with name, count and firstTimestamp filled
  };
  // `event` has its object, reason, message, type, source and lastTimestamp set.
  Result Correlate(Event event);

 private:
  // Each cache keeps its keys in use order (least recently used first), so an eviction is O(1)
  // (it was a scan of all 4,096 entries per new event).
  using UseOrder = std::list<uint64_t>;
  struct Seen {
    std::string name;
    int count = 0;
    absl::Time first_timestamp, last_timestamp;
    UseOrder::iterator use;
  };
  struct Bucket {
    std::unique_ptr<TokenBucket> bucket;
    UseOrder::iterator use;
  };
  // Marks the entry `it` (new when `inserted`) as the most recently used, then evicts the least
  // recently used entries beyond cache_size.
  template <typename Map>
  void Touch(Map& m, UseOrder& order, typename Map::iterator it, bool inserted);

  Clock& clock_;
  const EventRecorderOptions& options_;
  absl::flat_hash_map<uint64_t, Seen> seen_;       // fingerprint of the aggregation key
  absl::flat_hash_map<uint64_t, Bucket> buckets_;  // fingerprint of the involved object
  UseOrder seen_order_, bucket_order_;
  int64_t last_name_nanos_ = 0;
};

class EventRecorder {
 public:
  EventRecorder(EventSink& sink, EventRecorderOptions options = {});
  ~EventRecorder();  // Shutdown()
  EventRecorder(const EventRecorder&) = delete;
  EventRecorder& operator=(const EventRecorder&) = delete;

  // Queues an event about `object`; never blocks on the API server.
  void Record(const ObjectReference& object, EventType type, absl::string_view reason,
              absl::string_view message);
  void Normal(const ObjectReference& object, absl::string_view reason, absl::string_view message) {
    Record(object, EventType::kNormal, reason, message);
  }
  void Warning(const ObjectReference& object, absl::string_view reason, absl::string_view message) {
    Record(object, EventType::kWarning, reason, message);
  }

  // Blocks until every queued event has been sent or given up (tests; orderly shutdown), or
  // `timeout` (real time) has passed; returns whether the queue was drained. A retry waits on the
  // injected clock: with a fake one that nobody advances, only the timeout ends the wait.
  bool Flush(absl::Duration timeout = absl::InfiniteDuration());
  // Sends what is queued without retrying, then stops; later Record() calls are dropped. Events
  // still queued `drain` after the call (on the injected clock) are dropped instead of sent, so
  // a long queue on a slow Events budget never holds up a process that is shutting down.
  void Shutdown(absl::Duration drain = absl::InfiniteDuration());
  // Events dropped because the queue was full or the recorder was shut down (the spam filter's
  // drops are counted only in the metric).
  int64_t dropped() const;

 private:
  void Loop();
  void Send(Event event);
  void CountDrop(const char* reason);

  EventSink& sink_;
  const EventRecorderOptions options_;
  Clock& clock_;
  EventCorrelator correlator_;  // used by the sending thread only
  metrics::Family* dropped_metric_ = nullptr;

  mutable absl::Mutex mu_;
  std::deque<Event> queue_ ABSL_GUARDED_BY(mu_);
  bool busy_ ABSL_GUARDED_BY(mu_) = false;
  absl::Time drain_until_ ABSL_GUARDED_BY(mu_) = absl::InfiniteFuture();
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  int64_t dropped_ ABSL_GUARDED_BY(mu_) = 0;
  absl::Notification stop_;  // cancels retry sleeps
  std::thread thread_;
};

}  // namespace ccm::kube
