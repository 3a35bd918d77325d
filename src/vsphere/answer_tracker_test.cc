#include "vsphere/answer_tracker.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"

namespace ccm::vsphere {
namespace {

constexpr absl::Duration kWithin = absl::Seconds(30);

// One request's life, seconds from the tracker's start.
using Outcome = AnswerTracker::Outcome;
constexpr Outcome kAnswered = Outcome::kAnswered, kTimedOut = Outcome::kTimedOut,
                  kOther = Outcome::kOther;
struct Req {
  double sent, ended;  // ended < 0: still waiting at `at`
  Outcome outcome;
  double expected = 0;
};

TEST(AnswerTrackerTest, NotAnsweringOnlyAfterAWaitPastTheAllowanceWithNoAnswerSince) {
  struct Case {
    const char* name;
    std::vector<Req> reqs;
    double at;
    const char* want;  // "" = answering, else a part of the message
  } cases[] = {
      {"nothing sent", {}, 100, ""},
      {"answered", {{1, 2, kAnswered}}, 100, ""},
      {"refused", {{1, 1.1, kOther}}, 100, ""},
      {"cut by a caller's deadline", {{1, 40, kOther}}, 100, ""},
      {"timed out", {{1, 4, kTimedOut}}, 10, "RetrievePropertiesEx waited 3 s"},
      {"answered after the time-out", {{1, 4, kTimedOut}, {5, 6, kAnswered}}, 10, ""},
      {"an older answer does not clear it",
       {{5, 9, kTimedOut}, {1, 3, kAnswered}},
       10,
       "waited 4 s without an answer (its last answer came 7 s ago)"},
      {"a time-out sent before the last answer", {{1, 9, kTimedOut}, {2, 3, kAnswered}}, 10, ""},
      {"waiting past the allowance", {{1, -1, kOther}}, 40, "has waited 39 s"},
      {"waiting within the allowance", {{1, -1, kOther}}, 20, ""},
      {"a long poll waits its maxWait", {{1, -1, kOther, 120}}, 140, ""},
      {"a long poll past maxWait", {{1, -1, kOther, 120}}, 152, "has waited 151 s"},
      {"waiting but answered since", {{1, -1, kOther}, {2, 3, kAnswered}}, 40, ""},
  };
  const absl::Time t0 = absl::FromUnixSeconds(1'000'000);
  auto at = [&](double s) { return t0 + absl::Seconds(s); };
  for (const Case& c : cases) {
    AnswerTracker t("https://vc/sdk", kWithin);
    // Events in time order: sends, then ends.
    std::vector<std::pair<double, int>> events;  // (time, +index sent / -index-1 ended)
    for (int i = 0; i < static_cast<int>(c.reqs.size()); ++i) {
      events.push_back({c.reqs[i].sent, i});
      if (c.reqs[i].ended >= 0) events.push_back({c.reqs[i].ended, -i - 1});
    }
    std::sort(events.begin(), events.end());
    std::vector<uint64_t> ids(c.reqs.size());
    for (const auto& [time, e] : events) {
      if (e >= 0) {
        ids[e] = t.Sent("RetrievePropertiesEx", at(time), absl::Seconds(c.reqs[e].expected));
      } else {
        t.Ended(ids[-e - 1], at(time), c.reqs[-e - 1].outcome);
      }
    }
    absl::Status s = t.Check(at(c.at));
    if (std::string(c.want).empty()) {
      EXPECT_TRUE(s.ok()) << c.name << ": " << s;
    } else {
      EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable) << c.name;
      EXPECT_TRUE(IsNotAnswering(s)) << c.name;
      EXPECT_TRUE(absl::StrContains(s.message(), c.want)) << c.name << ": " << s;
      EXPECT_TRUE(absl::StrContains(s.message(), "https://vc/sdk is not answering")) << s;
    }
  }
}

TEST(AnswerTrackerTest, CountsOrdinaryRequestsInFlight) {
  AnswerTracker t("vc", kWithin);
  const absl::Time now = absl::Now();
  const uint64_t poll = t.Sent("WaitForUpdatesEx", now, absl::Seconds(120));
  const uint64_t call = t.Sent("RetrievePropertiesEx", now, absl::ZeroDuration());
  EXPECT_EQ(t.ordinary_in_flight(), 1);
  t.Ended(call, now + absl::Seconds(1), kAnswered);
  EXPECT_EQ(t.ordinary_in_flight(), 0);
  EXPECT_EQ(t.last_answer(), now + absl::Seconds(1));
  t.Ended(poll, now + absl::Seconds(2), kAnswered);
}

}  // namespace
}  // namespace ccm::vsphere
