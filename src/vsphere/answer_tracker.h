#pragma once
// Whether a vCenter answers (issue 43): a vCenter that hangs (TCP open, no answer: a storage
// outage, a half-dead load balancer, a network black hole) refuses nothing, so only the time its
// requests wait tells. The client reports every request it sends and how it ended; Check() says
// "not answering" when
//   - a request timed out (its own timeout: not a refused connection, not a caller's deadline or
//     a stop) and nothing was answered since it was sent; or
//   - a request has waited longer than `answer_within` beyond what it expected (a long poll
//     expects its maxWaitSeconds) and nothing was answered since it was sent.
// Any HTTP answer (an error status too) clears it: vCenter is alive. Pure state with the time
// passed in (table-tested); thread-safe.

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace ccm::vsphere {

// Whether `s` is AnswerTracker::Check's "not answering" (a payload survives Annotate).
bool IsNotAnswering(const absl::Status& s);

class AnswerTracker {
 public:
  // `url` names the vCenter in messages.
  AnswerTracker(std::string url, absl::Duration answer_within);

  // A request of `method` sent at `now` that may take `expected` (zero: an ordinary call).
  uint64_t Sent(absl::string_view method, absl::Time now, absl::Duration expected);
  enum class Outcome {
    kAnswered,  // any HTTP answer (an error status too), or part of one
    kTimedOut,  // its own timeout passed with no answer
    kOther,     // refused, reset, cut by a caller's deadline or a stop: says nothing of a hang
  };
  void Ended(uint64_t id, absl::Time now, Outcome outcome);

  // OK, or Unavailable naming the request that waited and for how long.
  absl::Status Check(absl::Time now) const;
  // When vCenter last answered (absl::InfinitePast() before any answer).
  absl::Time last_answer() const;
  // Ordinary requests waiting now (long polls not counted).
  int ordinary_in_flight() const;
  absl::Duration answer_within() const { return answer_within_; }

 private:
  struct Request {
    std::string method;
    absl::Time sent;
    absl::Duration expected;
  };
  struct Silence {  // a request that ended unanswered after waiting too long
    std::string method;
    absl::Time sent;
    absl::Duration waited;
  };

  const std::string url_;
  const absl::Duration answer_within_;
  mutable absl::Mutex mu_;
  uint64_t next_id_ ABSL_GUARDED_BY(mu_) = 0;
  std::map<uint64_t, Request> in_flight_ ABSL_GUARDED_BY(mu_);
  absl::Time last_answer_ ABSL_GUARDED_BY(mu_);
  std::optional<Silence> silence_ ABSL_GUARDED_BY(mu_);
};

}  // namespace ccm::vsphere
