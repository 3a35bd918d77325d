#include "kube/leader_election.h"

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "testing/eventually.h"
#include "testing/fake_clock.h"
#include "testing/fixed_random.h"
#include "testing/memory_lease_lock.h"

namespace ccm::kube {
namespace {

using absl::Seconds;
using ::ccm::testing::Eventually;

// One candidate on a shared in-memory lease, with a switch to cut it off from the "API server".
struct Candidate {
  Candidate(std::string id, LeaseLock& store, Clock& clock, Random& random,
            LeaderElectionConfig config = {})
      : identity(std::move(id)), lock(store) {
    config.identity = identity;
    LeaderCallbacks cb;
    cb.on_started_leading = [this](const absl::Notification& stop) {
      ++started;
      stop.WaitForNotification();
      ++returned;
    };
    cb.on_stopped_leading = [this] {
      ++stopped;
      // Leadership ends before the leading thread is joined: the process can stop acting at once.
      stopped_before_return = returned.load() == 0;
    };
    cb.on_new_leader = [this](const std::string& who) { new_leaders.push_back(who); };
    auto e = LeaderElector::New(config, lock, std::move(cb), clock, random);
    EXPECT_TRUE(e.ok()) << e.status();
    elector = std::move(*e);
  }

  std::string identity;
  FaultyLeaseLock lock;
  std::atomic<int> started{0}, stopped{0}, returned{0};
  std::atomic<bool> stopped_before_return{false};
  std::vector<std::string> new_leaders;  // only touched on the polling thread
  std::unique_ptr<LeaderElector> elector;
  absl::Time next = absl::InfinitePast();
  bool polled = true;  // false = crashed: nobody drives this elector any more
  std::optional<absl::Time> led_at, lost_at;
};

// Drives several electors on one FakeClock, single-threaded and exact: always polls the candidate
// whose next poll is soonest (ties in list order), and checks that at most one leads at any time.
class Election {
 public:
  Election() = default;
  Candidate& Add(const std::string& id, LeaderElectionConfig config = {}) {
    candidates_.push_back(std::make_unique<Candidate>(id, store, clock, random, config));
    candidates_.back()->next = clock.Now();
    return *candidates_.back();
  }

  void RunFor(absl::Duration d) { RunUntil(clock.Now() + d); }
  void RunUntil(absl::Time end) {
    while (true) {
      Candidate* due = nullptr;
      for (auto& c : candidates_) {
        if (!c->polled || c->elector->Finished()) continue;
        if (due == nullptr || c->next < due->next) due = c.get();
      }
      if (due == nullptr || due->next > end) break;
      if (due->next > clock.Now()) clock.Advance(due->next - clock.Now());
      due->next = due->elector->Poll();
      if (due->elector->IsLeader() && !due->led_at) due->led_at = clock.Now();
      if (due->elector->Lost() && !due->lost_at) due->lost_at = clock.Now();
      int leaders = 0;
      for (auto& c : candidates_) leaders += c->polled && c->elector->IsLeader() ? 1 : 0;
      ASSERT_LE(leaders, 1) << "two leaders at " << clock.Now();
    }
    if (end > clock.Now()) clock.Advance(end - clock.Now());
  }

  FakeClock clock;
  FixedRandom random{0.0};  // acquire retries exactly every RetryPeriod
  MemoryLeaseLock store{"kube-system/cloud-controller-manager"};
  const absl::Time t0 = clock.Now();

 private:
  std::vector<std::unique_ptr<Candidate>> candidates_;
};

TEST(LeaderElectionTest, ExactlyOneOfTwoCandidatesLeads) {
  Election e;
  Candidate& a = e.Add("a");
  Candidate& b = e.Add("b");
  e.RunFor(Seconds(60));
  EXPECT_TRUE(a.elector->IsLeader());
  EXPECT_FALSE(b.elector->IsLeader());
  EXPECT_EQ(a.led_at, e.t0);
  EXPECT_TRUE(Eventually([&] { return a.started.load() == 1; }));
  EXPECT_EQ(b.started.load(), 0);
  EXPECT_EQ(a.elector->GetLeader(), "a");
  EXPECT_EQ(b.elector->GetLeader(), "a");
  EXPECT_EQ(a.new_leaders, std::vector<std::string>{"a"});
  EXPECT_EQ(b.new_leaders, std::vector<std::string>{"a"});
  const VersionedRecord r = e.store.Peek();
  EXPECT_EQ(r.record.holder_identity, "a");
  EXPECT_EQ(r.record.lease_duration_seconds, 15);
  EXPECT_EQ(r.record.lease_transitions, 0);
  EXPECT_EQ(r.record.acquire_time, e.t0);
  EXPECT_EQ(r.record.renew_time, e.t0 + Seconds(60));  // renewed every RetryPeriod
  EXPECT_EQ(e.store.writes(), 1 + 30);                 // create + one write per renewal
  EXPECT_TRUE(a.elector->Check(absl::ZeroDuration()).ok());
}

TEST(LeaderElectionTest, OtherTakesOverWithinLeaseDurationAfterLeaderStopsRenewing) {
  Election e;
  Candidate& a = e.Add("a");
  Candidate& b = e.Add("b");
  e.RunFor(Seconds(10));
  ASSERT_TRUE(a.elector->IsLeader());
  // a's process hangs: it renewed last at t0+10s and never again (and never steps down).
  const absl::Time last_renewal = e.store.Peek().record.renew_time;
  ASSERT_EQ(last_renewal, e.t0 + Seconds(10));
  a.polled = false;
  e.RunFor(Seconds(30));
  ASSERT_TRUE(b.led_at.has_value());
  // b saw the last renewal when it polled at t0+10s (it polls every 2s, after a at equal times);
  // the lease is valid until then + 15s, and b's next poll at or after that takes it.
  EXPECT_EQ(*b.led_at, last_renewal + Seconds(16));
  EXPECT_GT(*b.led_at, last_renewal + Seconds(15));  // never before the lease expired
  EXPECT_LE(*b.led_at, last_renewal + Seconds(15) + 2 * Seconds(2));
  EXPECT_TRUE(Eventually([&] { return b.started.load() == 1; }));
  const VersionedRecord r = e.store.Peek();
  EXPECT_EQ(r.record.holder_identity, "b");
  EXPECT_EQ(r.record.lease_transitions, 1);
  EXPECT_EQ(r.record.acquire_time, *b.led_at);
  EXPECT_EQ(b.new_leaders, (std::vector<std::string>{"a", "b"}));
  a.polled = true;  // let the fixture's destructor finish a cleanly
}

TEST(LeaderElectionTest, LeaderThatCannotRenewForRenewDeadlineReportsLost) {
  Election e;
  Candidate& a = e.Add("a");
  Candidate& b = e.Add("b");
  e.RunFor(Seconds(4));  // a renewed at +2 and +4
  ASSERT_TRUE(a.elector->IsLeader());
  a.lock.SetError(absl::UnavailableError("connection refused"));
  // Renewal round starting at +6 fails at +6, +8, ..., +14; at +16 (= +6 + RenewDeadline) a
  // gives up.
  e.RunUntil(e.t0 + Seconds(16) - absl::Milliseconds(1));
  EXPECT_TRUE(a.elector->IsLeader());
  EXPECT_EQ(a.stopped.load(), 0);
  e.RunUntil(e.t0 + Seconds(16));
  EXPECT_FALSE(a.elector->IsLeader());
  EXPECT_TRUE(a.elector->Lost());
  EXPECT_EQ(a.lost_at, e.t0 + Seconds(16));
  EXPECT_EQ(a.stopped.load(), 1);
  EXPECT_TRUE(a.stopped_before_return.load());
  EXPECT_EQ(a.returned.load(), 1);  // its leading thread was told to stop and joined
  // b only takes over after the lease expired, well after a stopped acting.
  e.RunFor(Seconds(20));
  ASSERT_TRUE(b.led_at.has_value());
  EXPECT_GE(*b.led_at, e.t0 + Seconds(4) + Seconds(15));
  EXPECT_GT(*b.led_at, *a.lost_at);
  EXPECT_EQ(e.store.Peek().record.lease_transitions, 1);
}

TEST(LeaderElectionTest, ShortOutageWithinRenewDeadlineKeepsLeadership) {
  Election e;
  Candidate& a = e.Add("a");
  e.Add("b");
  e.RunFor(Seconds(4));
  a.lock.SetError(absl::UnavailableError("timeout"));
  e.RunFor(Seconds(7));  // fails at +6, +8, +10
  a.lock.SetError(absl::OkStatus());
  e.RunFor(Seconds(30));
  EXPECT_TRUE(a.elector->IsLeader());
  EXPECT_FALSE(a.elector->Lost());
  EXPECT_EQ(e.store.Peek().record.lease_transitions, 0);
}

TEST(LeaderElectionTest, ReleaseOnShutdownLetsTheOtherTakeOverAtOnce) {
  Election e;
  Candidate& a = e.Add("a");
  Candidate& b = e.Add("b");
  e.RunFor(Seconds(9));
  ASSERT_TRUE(a.elector->IsLeader());
  a.elector->Shutdown();
  EXPECT_FALSE(a.elector->IsLeader());
  EXPECT_FALSE(a.elector->Lost());
  EXPECT_EQ(a.stopped.load(), 1);
  EXPECT_EQ(a.returned.load(), 1);
  const VersionedRecord released = e.store.Peek();
  EXPECT_EQ(released.record.holder_identity, "");
  EXPECT_EQ(released.record.lease_duration_seconds, 1);
  EXPECT_EQ(released.record.lease_transitions, 0);
  e.RunFor(Seconds(2));
  // b polls at +10 and takes the free lease then, not 15s later.
  EXPECT_EQ(b.led_at, e.t0 + Seconds(10));
  EXPECT_EQ(e.store.Peek().record.holder_identity, "b");
  EXPECT_EQ(e.store.Peek().record.lease_transitions, 1);
}

TEST(LeaderElectionTest, WithoutReleaseTheOtherWaitsForExpiry) {
  Election e;
  LeaderElectionConfig config;
  config.release_on_cancel = false;
  Candidate& a = e.Add("a", config);
  Candidate& b = e.Add("b");
  e.RunFor(Seconds(9));
  a.elector->Shutdown();
  EXPECT_EQ(e.store.Peek().record.holder_identity, "a");
  e.RunFor(Seconds(30));
  ASSERT_TRUE(b.led_at.has_value());
  EXPECT_GT(*b.led_at, e.t0 + Seconds(8) + Seconds(15));
}

TEST(LeaderElectionTest, TransitionsAreCountedAcrossHandOvers) {
  Election e;
  Candidate& a = e.Add("a");
  Candidate& b = e.Add("b");
  Candidate& c = e.Add("c");
  e.RunFor(Seconds(3));
  a.elector->Shutdown();  // a -> (b or c)
  e.RunFor(Seconds(3));
  Candidate& second = b.elector->IsLeader() ? b : c;
  Candidate& third = b.elector->IsLeader() ? c : b;
  ASSERT_TRUE(second.elector->IsLeader());
  EXPECT_EQ(e.store.Peek().record.lease_transitions, 1);
  second.elector->Shutdown();
  e.RunFor(Seconds(3));
  ASSERT_TRUE(third.elector->IsLeader());
  EXPECT_EQ(e.store.Peek().record.lease_transitions, 2);
  EXPECT_EQ(third.new_leaders.back(), third.identity);
}

TEST(LeaderElectionTest, LeaseWrittenByAnotherHolderEndsLeadershipAtOnce) {
  Election e;
  Candidate& a = e.Add("a");
  e.RunFor(Seconds(4));
  ASSERT_TRUE(a.elector->IsLeader());
  // Someone else (an admin, or a candidate with a wrong clock) overwrites the lease.
  VersionedRecord cur = e.store.Peek();
  LeaderElectionRecord stolen = cur.record;
  stolen.holder_identity = "intruder";
  stolen.lease_transitions++;
  ASSERT_TRUE(e.store.Update(stolen, cur.resource_version).ok());
  e.RunFor(Seconds(2));
  EXPECT_TRUE(a.elector->Lost());
  EXPECT_EQ(a.lost_at, e.t0 + Seconds(6));
  EXPECT_EQ(a.stopped.load(), 1);
  EXPECT_EQ(a.elector->GetLeader(), "intruder");
  EXPECT_EQ(e.store.Peek().record.holder_identity, "intruder");  // not released by a
}

TEST(LeaderElectionTest, AcquireRetriesAreJittered) {
  FakeClock clock;
  FixedRandom random(0.5);
  MemoryLeaseLock store;
  // Another holder has a valid lease: the candidate keeps retrying.
  ASSERT_TRUE(store.Create({.holder_identity = "other", .lease_duration_seconds = 15}).ok());
  Candidate c("c", store, clock, random);
  const absl::Time next = c.elector->Poll();
  EXPECT_FALSE(c.elector->IsLeader());
  EXPECT_EQ(next - clock.Now(), Seconds(2) * (1 + 1.2 * 0.5));
}

TEST(LeaderElectionTest, HealthCheckFailsWhenLeaderStopsRenewing) {
  Election e;
  Candidate& a = e.Add("a");
  e.RunFor(Seconds(2));
  EXPECT_TRUE(a.elector->Check(Seconds(5)).ok());
  e.clock.Advance(Seconds(21));  // nobody polls: a stuck elector
  EXPECT_FALSE(a.elector->Check(Seconds(5)).ok());
  EXPECT_TRUE(a.elector->Check(Seconds(10)).ok());
}

TEST(LeaderElectionTest, ValidatesConfig) {
  FakeClock clock;
  FixedRandom random;
  MemoryLeaseLock store;
  auto make = [&](LeaderElectionConfig c, bool with_callbacks = true) {
    LeaderCallbacks cb;
    if (with_callbacks) {
      cb.on_started_leading = [](const absl::Notification&) {};
      cb.on_stopped_leading = [] {};
    }
    return LeaderElector::New(c, store, cb, clock, random).status();
  };
  LeaderElectionConfig ok{.identity = "a"};
  EXPECT_TRUE(make(ok).ok());
  struct Case {
    const char* name;
    LeaderElectionConfig config;
  };
  const Case bad[] = {
      {"empty identity", {.identity = ""}},
      {"lease <= renew", {.identity = "a", .lease_duration = Seconds(10)}},
      {"renew <= 1.2 * retry", {.identity = "a", .retry_period = Seconds(9)}},
      {"zero retry", {.identity = "a", .retry_period = absl::ZeroDuration()}},
      {"negative renew", {.identity = "a", .renew_deadline = Seconds(-1)}},
  };
  for (const Case& c : bad) {
    EXPECT_EQ(make(c.config).code(), absl::StatusCode::kInvalidArgument) << c.name;
  }
  EXPECT_EQ(make(ok, false).code(), absl::StatusCode::kInvalidArgument);
}

TEST(LeaderElectionTest, RunLeadsUntilStoppedThenReleases) {
  FakeClock clock;
  FixedRandom random;
  MemoryLeaseLock store;
  absl::Notification leading;
  std::atomic<int> stopped{0};
  LeaderCallbacks cb;
  cb.on_started_leading = [&](const absl::Notification& stop) {
    leading.Notify();
    stop.WaitForNotification();
  };
  cb.on_stopped_leading = [&] { ++stopped; };
  auto elector = LeaderElector::New({.identity = "a"}, store, cb, clock, random);
  ASSERT_TRUE(elector.ok());
  absl::Notification stop;
  std::thread runner([&] { (*elector)->Run(stop); });
  ASSERT_TRUE(leading.WaitForNotificationWithTimeout(absl::Seconds(10)));
  EXPECT_EQ(store.Peek().record.holder_identity, "a");
  stop.Notify();
  runner.join();
  EXPECT_EQ(stopped.load(), 1);
  EXPECT_EQ(store.Peek().record.holder_identity, "");
  EXPECT_TRUE((*elector)->Finished());
}

}  // namespace
}  // namespace ccm::kube
