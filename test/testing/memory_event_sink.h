#pragma once

#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "kube/event_sink.h"

namespace ccm::kube {

// Events in memory, with fault injection for tests. Thread-safe.
class MemoryEventSink final : public EventSink {
 public:
  absl::StatusOr<Event> Create(const Event& event) override;
  absl::StatusOr<Event> Patch(const Event& event) override;

  // The next `n` calls fail with `s`.
  void FailNext(int n, absl::Status s);
  // Stored events in creation order.
  std::vector<Event> Events() const;
  // "create <name>" / "patch <name>" per successful call, in order.
  std::vector<std::string> Calls() const;
  void Delete(const std::string& ns, const std::string& name);
  // Calls made, including failed ones.
  int attempts() const;

 private:
  absl::Status MaybeFail() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  mutable absl::Mutex mu_;
  std::vector<Event> events_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> calls_ ABSL_GUARDED_BY(mu_);
  int fail_next_ ABSL_GUARDED_BY(mu_) = 0;
  int attempts_ ABSL_GUARDED_BY(mu_) = 0;
  absl::Status fail_status_ ABSL_GUARDED_BY(mu_);
  int64_t version_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace ccm::kube
