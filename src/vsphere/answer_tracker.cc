#include "vsphere/answer_tracker.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace ccm::vsphere {
namespace {

constexpr char kNotAnsweringPayload[] = "type.ccm/vsphere.NotAnswering";

absl::Status NotAnswering(std::string message) {
  absl::Status s = absl::UnavailableError(message);
  s.SetPayload(kNotAnsweringPayload, absl::Cord("1"));
  return s;
}

std::string Seconds(absl::Duration d) {
  return absl::StrCat(absl::ToInt64Seconds(absl::Trunc(d, absl::Seconds(1))), " s");
}

}  // namespace

bool IsNotAnswering(const absl::Status& s) {
  return s.GetPayload(kNotAnsweringPayload).has_value();
}

AnswerTracker::AnswerTracker(std::string url, absl::Duration answer_within)
    : url_(std::move(url)), answer_within_(answer_within), last_answer_(absl::InfinitePast()) {}

uint64_t AnswerTracker::Sent(absl::string_view method, absl::Time now, absl::Duration expected) {
  absl::MutexLock l(&mu_);
  const uint64_t id = ++next_id_;
  in_flight_[id] = {std::string(method), now, expected};
  return id;
}

void AnswerTracker::Ended(uint64_t id, absl::Time now, Outcome outcome) {
  absl::MutexLock l(&mu_);
  auto it = in_flight_.find(id);
  if (it == in_flight_.end()) return;
  Request r = std::move(it->second);
  in_flight_.erase(it);
  if (outcome == Outcome::kAnswered) {
    last_answer_ = std::max(last_answer_, now);
    silence_.reset();
    return;
  }
  if (outcome != Outcome::kTimedOut || r.sent < last_answer_) return;
  if (!silence_ || r.sent < silence_->sent) silence_ = Silence{r.method, r.sent, now - r.sent};
}

absl::Status AnswerTracker::Check(absl::Time now) const {
  absl::MutexLock l(&mu_);
  if (silence_) {
    return NotAnswering(absl::StrCat(
        "vCenter ", url_, " is not answering: ", silence_->method, " waited ",
        Seconds(silence_->waited), " without an answer",
        last_answer_ == absl::InfinitePast()
            ? ""
            : absl::StrCat(" (its last answer came ", Seconds(now - last_answer_), " ago)")));
  }
  for (const auto& [id, r] : in_flight_) {
    if (r.sent < last_answer_) continue;  // vCenter answered something since
    if (now - r.sent < r.expected + answer_within_) continue;
    return NotAnswering(absl::StrCat("vCenter ", url_, " is not answering: ", r.method,
                                     " has waited ", Seconds(now - r.sent), " for an answer"));
  }
  return absl::OkStatus();
}

absl::Time AnswerTracker::last_answer() const {
  absl::MutexLock l(&mu_);
  return last_answer_;
}

int AnswerTracker::ordinary_in_flight() const {
  absl::MutexLock l(&mu_);
  int n = 0;
  for (const auto& [id, r] : in_flight_) n += r.expected == absl::ZeroDuration() ? 1 : 0;
  return n;
}

}  // namespace ccm::vsphere
