#include "testing/memory_event_sink.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace ccm::kube {

absl::Status MemoryEventSink::MaybeFail() {
  ++attempts_;
  if (fail_next_ <= 0) return absl::OkStatus();
  --fail_next_;
  return fail_status_;
}

absl::StatusOr<Event> MemoryEventSink::Create(const Event& event) {
  absl::MutexLock lock(&mu_);
  if (absl::Status s = MaybeFail(); !s.ok()) return s;
  for (const Event& e : events_) {
    if (e.ns == event.ns && e.name == event.name) {
      return absl::AlreadyExistsError(absl::StrCat("event ", event.ns, "/", event.name, " exists"));
    }
  }
  Event stored = event;
  stored.resource_version = absl::StrCat(++version_);
  events_.push_back(stored);
  calls_.push_back("create " + event.name);
  return stored;
}

absl::StatusOr<Event> MemoryEventSink::Patch(const Event& event) {
  absl::MutexLock lock(&mu_);
  if (absl::Status s = MaybeFail(); !s.ok()) return s;
  for (Event& e : events_) {
    if (e.ns == event.ns && e.name == event.name) {
      e.count = event.count;
      e.last_timestamp = event.last_timestamp;
      e.message = event.message;
      e.resource_version = absl::StrCat(++version_);
      calls_.push_back("patch " + event.name);
      return e;
    }
  }
  return absl::NotFoundError(absl::StrCat("event ", event.ns, "/", event.name, " not found"));
}

void MemoryEventSink::FailNext(int n, absl::Status s) {
  absl::MutexLock lock(&mu_);
  fail_next_ = n;
  fail_status_ = std::move(s);
}

std::vector<Event> MemoryEventSink::Events() const {
  absl::MutexLock lock(&mu_);
  return events_;
}

std::vector<std::string> MemoryEventSink::Calls() const {
  absl::MutexLock lock(&mu_);
  return calls_;
}

int MemoryEventSink::attempts() const {
  absl::MutexLock lock(&mu_);
  return attempts_;
}

void MemoryEventSink::Delete(const std::string& ns, const std::string& name) {
  absl::MutexLock lock(&mu_);
  events_.erase(std::remove_if(events_.begin(), events_.end(),
                               [&](const Event& e) { return e.ns == ns && e.name == name; }),
                events_.end());
}

}  // namespace ccm::kube
