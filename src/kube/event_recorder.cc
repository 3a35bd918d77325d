#include "kube/event_recorder.h"

#include <algorithm>

#include "absl/hash/hash.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/logging.h"

namespace ccm::kube {
namespace {

std::string ObjectKeyOf(const Event& e) {
  const ObjectReference& o = e.involved_object;
  // \x1f separates fields so that no two different tuples give the same key.
  return absl::StrCat(e.source_component, "\x1f", e.source_host, "\x1f", o.kind, "\x1f", o.ns,
                      "\x1f", o.name, "\x1f", o.uid, "\x1f", o.api_version);
}

bool Retryable(const absl::Status& s) {
  switch (s.code()) {
    case absl::StatusCode::kUnavailable:
    case absl::StatusCode::kDeadlineExceeded:
    case absl::StatusCode::kResourceExhausted:
    case absl::StatusCode::kUnknown:
      return true;
    default:
      return false;
  }
}

}  // namespace

absl::string_view EventTypeName(EventType t) {
  return t == EventType::kWarning ? "Warning" : "Normal";
}

EventCorrelator::EventCorrelator(Clock& clock, const EventRecorderOptions& options)
    : clock_(clock), options_(options) {}

template <typename Map>
void EventCorrelator::Touch(Map& m, UseOrder& order, typename Map::iterator it, bool inserted) {
  if (inserted) {
    it->second.use = order.insert(order.end(), it->first);
  } else {
    order.splice(order.end(), order, it->second.use);  // iterators stay valid
  }
  while (m.size() > options_.cache_size) {
    m.erase(order.front());
    order.pop_front();
  }
}

EventCorrelator::Result EventCorrelator::Correlate(Event event) {
  Result r;
  // The caches are keyed by 64-bit fingerprints of client-go's keys, not the keys themselves
  // (which hold the whole message): 4,096 remembered events cost ~8 bytes of key each, and a
  // collision among them (odds ~1e-12) would at worst merge two events' counts.
  const std::string object_key = ObjectKeyOf(event);
  const absl::Hash<std::string> hash;

  // Spam filter first: a dropped event changes no aggregation state.
  const uint64_t object = hash(object_key);
  auto [bit, inserted] = buckets_.try_emplace(object);
  if (inserted) {
    bit->second.bucket =
        std::make_unique<TokenBucket>(options_.spam_qps, options_.spam_burst, clock_);
  }
  const bool allowed = bit->second.bucket->TryTake();
  Touch(buckets_, bucket_order_, bit, inserted);  // may evict: `bit` is not used after it
  if (!allowed) {
    r.skip = true;
    r.event = std::move(event);
    return r;
  }

  const uint64_t key = hash(
      absl::StrCat(object_key, "\x1f", event.type, "\x1f", event.reason, "\x1f", event.message));
  auto it = seen_.find(key);
  if (it != seen_.end() &&
      event.last_timestamp - it->second.last_timestamp <= options_.aggregation_window) {
    Seen& s = it->second;
    s.count++;
    s.last_timestamp = event.last_timestamp;
    Touch(seen_, seen_order_, it, false);  // the entry itself is the most recent: not evicted
    event.name = s.name;
    event.count = s.count;
    event.first_timestamp = s.first_timestamp;
    r.patch = true;
  } else {
    // client-go names events "<object>.<hex unix nanos>"; keep the number increasing so two
    // events in the same nanosecond (or on a coarse clock) never collide.
    last_name_nanos_ = std::max(last_name_nanos_ + 1, absl::ToUnixNanos(event.last_timestamp));
    event.name = absl::StrFormat("%s.%x", event.involved_object.name, last_name_nanos_);
    event.count = 1;
    event.first_timestamp = event.last_timestamp;
    if (it != seen_.end()) {  // its aggregation window passed: this is a new event
      seen_order_.erase(it->second.use);
      seen_.erase(it);
    }
    auto [sit, unused] = seen_.try_emplace(
        key, Seen{event.name, 1, event.first_timestamp, event.last_timestamp, {}});
    Touch(seen_, seen_order_, sit, true);
  }
  r.event = std::move(event);
  return r;
}

EventRecorder::EventRecorder(EventSink& sink, EventRecorderOptions options)
    : sink_(sink),
      options_(std::move(options)),
      clock_(options_.clock != nullptr ? *options_.clock : Clock::Real()),
      correlator_(clock_, options_) {
  if (options_.metrics != nullptr) {
    dropped_metric_ = options_.metrics->Counter(
        "events_dropped_total", "Events not sent, by reason (queue_full, shut_down, spam_filter).",
        {"reason"});
  }
  thread_ = std::thread([this] { Loop(); });
}

EventRecorder::~EventRecorder() { Shutdown(); }

void EventRecorder::Record(const ObjectReference& object, EventType type, absl::string_view reason,
                           absl::string_view message) {
  Event e;
  e.ns = object.ns.empty() ? "default" : object.ns;
  e.involved_object = object;
  e.reason = std::string(reason);
  e.message = std::string(message);
  e.type = std::string(EventTypeName(type));
  e.source_component = options_.component;
  e.source_host = options_.host;
  e.reporting_controller =
      options_.reporting_controller.empty() ? options_.component : options_.reporting_controller;
  e.reporting_instance =
      options_.reporting_instance.empty() ? options_.host : options_.reporting_instance;
  e.last_timestamp = absl::FromUnixMicros(absl::ToUnixMicros(clock_.Now()));
  e.first_timestamp = e.last_timestamp;
  VLOG(2, "Event(kind={} ns={} name={}): type={} reason={} message={}", object.kind, object.ns,
       object.name, e.type, e.reason, e.message);
  const char* drop_reason = nullptr;
  {
    absl::MutexLock lock(&mu_);
    if (stopping_ || queue_.size() >= options_.queue_size) {
      ++dropped_;
      drop_reason = stopping_ ? "shut_down" : "queue_full";
    } else {
      queue_.push_back(std::move(e));
    }
  }
  if (drop_reason != nullptr) {
    VLOG(2, "dropping event {} for {}: {}", reason, object.name, drop_reason);
    CountDrop(drop_reason);
  }
}

void EventRecorder::CountDrop(const char* reason) {
  if (dropped_metric_ != nullptr) dropped_metric_->Add({reason});
}

void EventRecorder::Loop() {
  while (true) {
    Event e;
    {
      absl::MutexLock lock(&mu_);
      auto ready = [this]()
                       ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return !queue_.empty() || stopping_; };
      mu_.Await(absl::Condition(&ready));
      if (queue_.empty()) return;
      if (stopping_ && clock_.Now() >= drain_until_) {
        dropped_ += static_cast<int64_t>(queue_.size());
        if (dropped_metric_ != nullptr) {
          dropped_metric_->Add({"shut_down"}, static_cast<double>(queue_.size()));
        }
        LOG_WARN("event recorder: shutting down, {} queued event(s) not sent", queue_.size());
        queue_.clear();
        return;
      }
      e = std::move(queue_.front());
      queue_.pop_front();
      busy_ = true;
    }
    Send(std::move(e));
    absl::MutexLock lock(&mu_);
    busy_ = false;
  }
}

void EventRecorder::Send(Event event) {
  EventCorrelator::Result r = correlator_.Correlate(std::move(event));
  if (r.skip) {
    CountDrop("spam_filter");
    VLOG(4, "event {} for {} dropped by the spam filter", r.event.reason,
         r.event.involved_object.name);
    return;
  }
  bool patch = r.patch;
  for (int attempt = 1;; ++attempt) {
    absl::StatusOr<Event> sent = patch ? sink_.Patch(r.event) : sink_.Create(r.event);
    if (patch && !sent.ok() && absl::IsNotFound(sent.status())) {
      // The aggregated event expired on the server: create it again, keeping the count.
      patch = false;
      r.event.resource_version.clear();
      sent = sink_.Create(r.event);
    }
    if (sent.ok()) return;
    if (!Retryable(sent.status())) {
      LOG_WARN("server rejected event {}/{} (will not retry): {}", r.event.ns, r.event.name,
               sent.status());
      return;
    }
    if (attempt >= options_.max_tries) {
      LOG_ERROR("unable to write event {}/{} (retry limit exceeded): {}", r.event.ns, r.event.name,
                sent.status());
      return;
    }
    if (!clock_.SleepFor(options_.retry_interval, &stop_)) return;  // shutting down
  }
}

bool EventRecorder::Flush(absl::Duration timeout) {
  absl::MutexLock lock(&mu_);
  auto idle = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return queue_.empty() && !busy_; };
  return mu_.AwaitWithTimeout(absl::Condition(&idle), timeout);
}

void EventRecorder::Shutdown(absl::Duration drain) {
  {
    absl::MutexLock lock(&mu_);
    if (stopping_) return;
    stopping_ = true;
    drain_until_ =
        drain == absl::InfiniteDuration() ? absl::InfiniteFuture() : clock_.Now() + drain;
  }
  stop_.Notify();
  if (thread_.joinable()) thread_.join();
}

int64_t EventRecorder::dropped() const {
  absl::MutexLock lock(&mu_);
  return dropped_;
}

}  // namespace ccm::kube
