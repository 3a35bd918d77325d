#include "kube/work_queue.h"

#include <thread>
#include <vector>

#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"
#include "testing/fake_clock.h"

namespace ccm::kube {
namespace {

// Upper bound for waiting on another thread's progress; never reached when the code is right.
constexpr absl::Duration kWait = absl::Seconds(10);

struct QueueFixture {
  FakeClock clock;
  WorkQueue q{WorkQueueOptions{.name = "test", .clock = &clock}};
};

TEST(WorkQueueTest, DeduplicatesQueuedItemsAndKeepsFifoOrder) {
  QueueFixture f;
  f.q.Add("a");
  f.q.Add("b");
  f.q.Add("a");
  f.q.Add("c");
  f.q.Add("b");
  EXPECT_EQ(f.q.Len(), 3);
  std::vector<std::string> got;
  for (int i = 0; i < 3; ++i) {
    auto item = f.q.Get();
    ASSERT_TRUE(item.has_value());
    got.push_back(*item);
    f.q.Done(*item);
  }
  EXPECT_EQ(got, (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(f.q.Len(), 0);
}

TEST(WorkQueueTest, ItemAddedWhileProcessingIsRequeuedOnDoneOnly) {
  QueueFixture f;
  f.q.Add("a");
  ASSERT_EQ(f.q.Get(), "a");
  // Re-added twice during processing: not handed to another worker now, queued once on Done.
  f.q.Add("a");
  f.q.Add("a");
  EXPECT_EQ(f.q.Len(), 0);
  f.q.Add("b");
  EXPECT_EQ(f.q.Get(), "b");
  f.q.Done("b");
  f.q.Done("a");
  EXPECT_EQ(f.q.Len(), 1);
  EXPECT_EQ(f.q.Get(), "a");
  f.q.Done("a");
  // Done without a re-add does not requeue.
  EXPECT_EQ(f.q.Len(), 0);
}

// GetReady hands out what is ready now, at most `max`, in order, each as Get would: a re-add
// while it is processed waits for its Done; with nothing ready it returns at once.
TEST(WorkQueueTest, GetReadyTakesWhatIsReadyWithoutBlocking) {
  QueueFixture f;
  EXPECT_TRUE(f.q.GetReady(5).empty());
  for (const char* item : {"a", "b", "c", "d"}) f.q.Add(item);
  f.q.AddAfter("later", absl::Seconds(5));
  EXPECT_EQ(f.q.GetReady(3), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(f.q.GetReady(3), (std::vector<std::string>{"d"}));
  f.q.Add("b");  // being processed: queued again only on its Done
  EXPECT_TRUE(f.q.GetReady(3).empty());
  for (const char* item : {"a", "b", "c", "d"}) f.q.Done(item);
  EXPECT_EQ(f.q.GetReady(3), (std::vector<std::string>{"b"}));
  f.q.Done("b");
  f.clock.Advance(absl::Seconds(5));
  EXPECT_EQ(f.q.GetReady(3), (std::vector<std::string>{"later"}));
  f.q.Done("later");
  EXPECT_EQ(f.q.Len(), 0);
}

TEST(WorkQueueTest, GetBlocksUntilAdd) {
  QueueFixture f;
  std::optional<std::string> got;
  absl::Notification done;
  std::thread worker([&] {
    got = f.q.Get();
    done.Notify();
  });
  f.q.Add("x");
  ASSERT_TRUE(done.WaitForNotificationWithTimeout(kWait));
  worker.join();
  EXPECT_EQ(got, "x");
}

TEST(WorkQueueTest, ShutDownUnblocksGetAndIgnoresLaterAdds) {
  QueueFixture f;
  std::vector<std::optional<std::string>> got(2, std::string("unset"));
  std::vector<std::thread> workers;
  for (int i = 0; i < 2; ++i) workers.emplace_back([&, i] { got[i] = f.q.Get(); });
  f.q.ShutDown();
  for (auto& w : workers) w.join();
  EXPECT_EQ(got[0], std::nullopt);
  EXPECT_EQ(got[1], std::nullopt);
  EXPECT_TRUE(f.q.ShuttingDown());
  f.q.Add("late");
  f.q.AddAfter("later", absl::Seconds(1));
  EXPECT_EQ(f.q.Len(), 0);
  EXPECT_EQ(f.q.Get(), std::nullopt);
}

TEST(WorkQueueTest, ItemsQueuedBeforeShutDownAreStillHandedOut) {
  QueueFixture f;
  f.q.Add("a");
  f.q.Add("b");
  f.q.ShutDown();
  EXPECT_EQ(f.q.Get(), "a");
  EXPECT_EQ(f.q.Get(), "b");
  EXPECT_EQ(f.q.Get(), std::nullopt);
}

TEST(WorkQueueTest, ShutDownWithDrainWaitsForItemsInProcessing) {
  QueueFixture f;
  f.q.Add("a");
  ASSERT_EQ(f.q.Get(), "a");
  absl::Notification drained;
  std::thread stopper([&] {
    f.q.ShutDownWithDrain();
    drained.Notify();
  });
  // Still processing "a": the drain must not finish.
  EXPECT_FALSE(drained.WaitForNotificationWithTimeout(absl::Milliseconds(50)));
  EXPECT_TRUE(f.q.ShuttingDown());
  f.q.Done("a");
  EXPECT_TRUE(drained.WaitForNotificationWithTimeout(kWait));
  stopper.join();
}

TEST(WorkQueueTest, AddAfterReleasesItemsInTimeOrder) {
  QueueFixture f;
  f.q.AddAfter("c", absl::Seconds(3));
  f.q.AddAfter("a", absl::Seconds(1));
  f.q.AddAfter("b", absl::Seconds(2));
  f.q.AddAfter("now", absl::ZeroDuration());
  EXPECT_EQ(f.q.Len(), 1);
  EXPECT_EQ(f.q.NumWaiting(), 3);
  EXPECT_EQ(f.q.Get(), "now");
  f.clock.Advance(absl::Milliseconds(999));
  EXPECT_EQ(f.q.Len(), 0);
  f.clock.Advance(absl::Milliseconds(1));
  EXPECT_EQ(f.q.Len(), 1);
  EXPECT_EQ(f.q.Get(), "a");
  f.clock.Advance(absl::Seconds(5));
  EXPECT_EQ(f.q.Len(), 2);
  EXPECT_EQ(f.q.Get(), "b");
  EXPECT_EQ(f.q.Get(), "c");
  EXPECT_EQ(f.q.NumWaiting(), 0);
}

TEST(WorkQueueTest, AddAfterKeepsTheEarlierTimeOfARepeatedItem) {
  struct Case {
    absl::Duration first, second, ready;
  };
  for (const Case& c : {Case{absl::Seconds(5), absl::Seconds(1), absl::Seconds(1)},
                        Case{absl::Seconds(1), absl::Seconds(5), absl::Seconds(1)}}) {
    QueueFixture f;
    f.q.AddAfter("x", c.first);
    f.q.AddAfter("x", c.second);
    EXPECT_EQ(f.q.NumWaiting(), 1);
    f.clock.Advance(c.ready - absl::Milliseconds(1));
    EXPECT_EQ(f.q.Len(), 0);
    f.clock.Advance(absl::Milliseconds(1));
    EXPECT_EQ(f.q.Len(), 1);
    ASSERT_EQ(f.q.Get(), "x");
    f.q.Done("x");
    // The later add was merged into the earlier one: nothing fires afterwards.
    f.clock.Advance(absl::Seconds(10));
    EXPECT_EQ(f.q.Len(), 0);
    EXPECT_EQ(f.q.NumWaiting(), 0);
  }
}

TEST(WorkQueueTest, BlockedGetIsWokenWhenADelayedItemBecomesReady) {
  QueueFixture f;
  std::optional<std::string> got;
  absl::Notification done;
  std::thread worker([&] {
    got = f.q.Get();
    done.Notify();
  });
  f.q.AddAfter("x", absl::Seconds(30));
  f.clock.Advance(absl::Seconds(30));
  ASSERT_TRUE(done.WaitForNotificationWithTimeout(kWait));
  worker.join();
  EXPECT_EQ(got, "x");
}

TEST(WorkQueueTest, DelayedItemsAreDroppedAtShutDown) {
  QueueFixture f;
  f.q.AddAfter("x", absl::Seconds(1));
  f.q.ShutDown();
  f.clock.Advance(absl::Seconds(2));
  EXPECT_EQ(f.q.Get(), std::nullopt);
}

TEST(WorkQueueTest, AddRateLimitedBacksOffPerItemAndForgetResets) {
  QueueFixture f;
  const std::vector<absl::Duration> want = {absl::Milliseconds(5), absl::Milliseconds(10),
                                            absl::Milliseconds(20), absl::Milliseconds(40)};
  for (size_t i = 0; i < want.size(); ++i) {
    f.q.AddRateLimited("x");
    EXPECT_EQ(f.q.NumRequeues("x"), static_cast<int>(i + 1));
    f.clock.Advance(want[i] - absl::Microseconds(1));
    EXPECT_EQ(f.q.Len(), 0) << "retry " << i << " released early";
    f.clock.Advance(absl::Microseconds(1));
    ASSERT_EQ(f.q.Len(), 1) << "retry " << i;
    ASSERT_EQ(f.q.Get(), "x");
    f.q.Done("x");
  }
  f.q.Forget("x");
  EXPECT_EQ(f.q.NumRequeues("x"), 0);
  f.q.AddRateLimited("x");
  f.clock.Advance(absl::Milliseconds(5));
  EXPECT_EQ(f.q.Len(), 1);
}

TEST(WorkQueueTest, OverallBucketLimitsManyItems) {
  QueueFixture f;
  for (int i = 0; i < 100; ++i) f.q.AddRateLimited("item" + std::to_string(i));
  f.q.AddRateLimited("x101");  // burst used up: waits 100ms for its token
  f.q.AddRateLimited("x102");  // 200ms
  f.clock.Advance(absl::Milliseconds(5));
  EXPECT_EQ(f.q.Len(), 100);
  f.clock.Advance(absl::Milliseconds(94));
  EXPECT_EQ(f.q.Len(), 100);
  f.clock.Advance(absl::Milliseconds(1));
  EXPECT_EQ(f.q.Len(), 101);
  f.clock.Advance(absl::Milliseconds(100));
  EXPECT_EQ(f.q.Len(), 102);
}

class RecordingMetrics : public WorkQueueMetrics {
 public:
  void SetDepth(int64_t d) override { depth = d; }
  void IncAdds() override { ++adds; }
  void ObserveQueueLatency(absl::Duration d) override { latencies.push_back(d); }
  void ObserveWorkDuration(absl::Duration d) override { work.push_back(d); }
  void IncRetries() override { ++retries; }
  void SetUnfinishedWorkSeconds(double s) override { unfinished = s; }
  void SetLongestRunningProcessorSeconds(double s) override { longest = s; }

  int64_t depth = -1;
  int adds = 0, retries = 0;
  std::vector<absl::Duration> latencies, work;
  double unfinished = -1, longest = -1;
};

class RecordingProvider : public WorkQueueMetricsProvider {
 public:
  std::unique_ptr<WorkQueueMetrics> NewQueueMetrics(const std::string& name) override {
    names.push_back(name);
    auto m = std::make_unique<RecordingMetrics>();
    last = m.get();
    return m;
  }
  std::vector<std::string> names;
  RecordingMetrics* last = nullptr;
};

TEST(WorkQueueTest, ReportsMetrics) {
  FakeClock clock;
  RecordingProvider provider;
  WorkQueue q(WorkQueueOptions{.name = "node", .clock = &clock, .metrics = &provider});
  ASSERT_EQ(provider.names, std::vector<std::string>{"node"});
  RecordingMetrics& m = *provider.last;
  q.Add("a");
  q.Add("a");  // deduplicated: not an add
  q.Add("b");
  EXPECT_EQ(m.adds, 2);
  EXPECT_EQ(m.depth, 2);
  clock.Advance(absl::Seconds(3));
  ASSERT_EQ(q.Get(), "a");
  EXPECT_EQ(m.depth, 1);
  ASSERT_EQ(m.latencies.size(), 1u);
  EXPECT_EQ(m.latencies[0], absl::Seconds(3));
  clock.Advance(absl::Seconds(2));
  ASSERT_EQ(q.Get(), "b");
  clock.Advance(absl::Seconds(1));
  q.UpdateUnfinishedWorkMetrics();
  EXPECT_DOUBLE_EQ(m.unfinished, 3.0 + 1.0);
  EXPECT_DOUBLE_EQ(m.longest, 3.0);
  q.Done("a");
  ASSERT_EQ(m.work.size(), 1u);
  EXPECT_EQ(m.work[0], absl::Seconds(3));
  q.AddRateLimited("a");
  EXPECT_EQ(m.retries, 1);
  q.Done("b");
  q.UpdateUnfinishedWorkMetrics();
  EXPECT_DOUBLE_EQ(m.unfinished, 0.0);
  EXPECT_DOUBLE_EQ(m.longest, 0.0);
}

TEST(WorkQueueTest, ManyWorkersProcessEachAddExactlyOnceAtATime) {
  WorkQueue q(WorkQueueOptions{.name = "stress", .clock = &Clock::Real()});
  absl::Mutex mu;
  absl::flat_hash_set<std::string> in_flight;
  bool overlap = false;
  int processed = 0;
  std::vector<std::thread> workers;
  for (int w = 0; w < 4; ++w) {
    workers.emplace_back([&] {
      while (auto item = q.Get()) {
        {
          absl::MutexLock lock(&mu);
          if (!in_flight.insert(*item).second) overlap = true;
          ++processed;
        }
        {
          absl::MutexLock lock(&mu);
          in_flight.erase(*item);
        }
        q.Done(*item);
      }
    });
  }
  for (int i = 0; i < 2000; ++i) q.Add("k" + std::to_string(i % 10));
  q.ShutDownWithDrain();
  for (auto& w : workers) w.join();
  absl::MutexLock lock(&mu);
  EXPECT_FALSE(overlap);
  EXPECT_GE(processed, 10);
  EXPECT_LE(processed, 2000);
}

}  // namespace
}  // namespace ccm::kube
