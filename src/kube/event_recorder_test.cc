#include "kube/event_recorder.h"

#include <functional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "gtest/gtest.h"
#include "testing/eventually.h"
#include "testing/fake_clock.h"
#include "testing/memory_event_sink.h"

namespace ccm::kube {
namespace {

using absl::Minutes;
using absl::Seconds;
using ::ccm::testing::Eventually;

ObjectReference Node(const std::string& name) {
  return {.kind = "Node", .name = name, .uid = "uid-" + name, .api_version = "v1"};
}

struct Fixture {
  explicit Fixture(EventRecorderOptions o = {}) {
    o.clock = &clock;
    o.host = "cp-1";
    o.metrics = &registry;
    recorder = std::make_unique<EventRecorder>(sink, o);
  }
  double Dropped(const std::string& reason) {
    return registry.Find("events_dropped_total")->Value({reason});
  }
  FakeClock clock;
  metrics::Registry registry;
  MemoryEventSink sink;
  std::unique_ptr<EventRecorder> recorder;
};

TEST(EventRecorderTest, CreatesACoreV1Event) {
  Fixture f;
  const absl::Time t0 = f.clock.Now();
  f.recorder->Warning(Node("worker-1"), "FailedToFindVM", "no VM with uuid 4237");
  f.recorder->Flush();
  const std::vector<Event> events = f.sink.Events();
  ASSERT_EQ(events.size(), 1u);
  const Event& e = events[0];
  EXPECT_EQ(e.ns, "default");  // cluster-scoped object
  EXPECT_EQ(e.name, absl::StrFormat("worker-1.%x", absl::ToUnixNanos(t0)));
  EXPECT_EQ(e.involved_object.kind, "Node");
  EXPECT_EQ(e.involved_object.name, "worker-1");
  EXPECT_EQ(e.involved_object.uid, "uid-worker-1");
  EXPECT_EQ(e.type, "Warning");
  EXPECT_EQ(e.reason, "FailedToFindVM");
  EXPECT_EQ(e.message, "no VM with uuid 4237");
  EXPECT_EQ(e.source_component, "cloud-controller-manager");
  EXPECT_EQ(e.source_host, "cp-1");
  EXPECT_EQ(e.reporting_controller, "cloud-controller-manager");
  EXPECT_EQ(e.reporting_instance, "cp-1");
  EXPECT_EQ(e.count, 1);
  EXPECT_EQ(e.first_timestamp, t0);
  EXPECT_EQ(e.last_timestamp, t0);
}

TEST(EventRecorderTest, NamespacedObjectKeepsItsNamespace) {
  Fixture f;
  f.recorder->Normal({.kind = "Secret", .ns = "kube-system", .name = "vsphere-creds"},
                     "CredentialsRotated", "new credentials picked up");
  f.recorder->Flush();
  ASSERT_EQ(f.sink.Events().size(), 1u);
  EXPECT_EQ(f.sink.Events()[0].ns, "kube-system");
  EXPECT_EQ(f.sink.Events()[0].type, "Normal");
}

TEST(EventRecorderTest, RepeatsWithinTenMinutesArePatchedWithCountAndLastTimestamp) {
  Fixture f;
  const absl::Time t0 = f.clock.Now();
  for (int i = 0; i < 3; ++i) {
    f.recorder->Warning(Node("w1"), "Unreachable", "vCenter timed out");
    f.recorder->Flush();
    f.clock.Advance(Minutes(4));
  }
  // Same object and reason, other message: its own event.
  f.recorder->Warning(Node("w1"), "Unreachable", "vCenter refused the connection");
  f.recorder->Flush();
  const std::vector<Event> events = f.sink.Events();
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].count, 3);
  EXPECT_EQ(events[0].first_timestamp, t0);
  EXPECT_EQ(events[0].last_timestamp, t0 + Minutes(8));
  EXPECT_EQ(events[1].count, 1);
  const std::string n = events[0].name;
  EXPECT_EQ(f.sink.Calls(), (std::vector<std::string>{"create " + n, "patch " + n, "patch " + n,
                                                      "create " + events[1].name}));
}

TEST(EventCorrelatorTest, AggregationWindowBoundary) {
  struct Case {
    absl::Duration gap;
    bool patch;
  };
  for (const Case& c : {Case{Minutes(10), true}, Case{Minutes(10) + absl::Microseconds(1), false},
                        Case{absl::ZeroDuration(), true}}) {
    FakeClock clock;
    EventRecorderOptions options;
    EventCorrelator correlator(clock, options);
    Event e{.involved_object = Node("w1"), .reason = "R", .message = "m", .type = "Normal"};
    e.last_timestamp = clock.Now();
    EventCorrelator::Result first = correlator.Correlate(e);
    EXPECT_FALSE(first.patch);
    clock.Advance(c.gap);
    e.last_timestamp = clock.Now();
    EventCorrelator::Result second = correlator.Correlate(e);
    EXPECT_EQ(second.patch, c.patch) << c.gap;
    EXPECT_EQ(second.event.count, c.patch ? 2 : 1);
    EXPECT_EQ(second.event.name == first.event.name, c.patch);
  }
}

// The caches forget the least recently used entry: a repeat of the event used most recently
// still aggregates, the one used least recently starts again. On one clock tick too (the
// former eviction compared use times, so equal times evicted an arbitrary entry).
TEST(EventCorrelatorTest, EvictsTheLeastRecentlyUsed) {
  FakeClock clock;
  EventRecorderOptions options;
  options.cache_size = 2;
  EventCorrelator correlator(clock, options);
  auto event = [&](const std::string& node) {
    Event e{.involved_object = Node(node), .reason = "R", .message = "m", .type = "Normal"};
    e.last_timestamp = clock.Now();
    return correlator.Correlate(e);
  };
  ASSERT_FALSE(event("a").patch);
  ASSERT_FALSE(event("b").patch);
  EXPECT_TRUE(event("a").patch);   // a is now the most recent, b the least
  EXPECT_FALSE(event("c").patch);  // c in, b out
  EXPECT_TRUE(event("a").patch);
  EXPECT_TRUE(event("c").patch);
  EventCorrelator::Result b = event("b");  // forgotten: a new event
  EXPECT_FALSE(b.patch);
  EXPECT_EQ(b.event.count, 1);
}

TEST(EventRecorderTest, AggregatedEventThatExpiredIsCreatedAgainKeepingItsCount) {
  Fixture f;
  f.recorder->Warning(Node("w1"), "R", "m");
  f.recorder->Flush();
  const std::string name = f.sink.Events()[0].name;
  f.sink.Delete("default", name);  // the API server's event TTL removed it
  f.recorder->Warning(Node("w1"), "R", "m");
  f.recorder->Flush();
  ASSERT_EQ(f.sink.Events().size(), 1u);
  EXPECT_EQ(f.sink.Events()[0].name, name);
  EXPECT_EQ(f.sink.Events()[0].count, 2);
}

TEST(EventRecorderTest, SpamFilterLimitsEachObjectTo25ThenOnePerFiveMinutes) {
  Fixture f;
  for (int i = 0; i < 30; ++i) f.recorder->Normal(Node("noisy"), "Sync", absl::StrCat("m", i));
  f.recorder->Normal(Node("quiet"), "Sync", "m");
  f.recorder->Flush();
  int noisy = 0, quiet = 0;
  for (const Event& e : f.sink.Events()) (e.involved_object.name == "noisy" ? noisy : quiet)++;
  EXPECT_EQ(noisy, 25);
  EXPECT_EQ(quiet, 1);
  f.clock.Advance(Minutes(5) - Seconds(1));
  f.recorder->Normal(Node("noisy"), "Sync", "late");
  f.recorder->Flush();
  EXPECT_EQ(f.sink.Events().size(), 26u);
  f.clock.Advance(Seconds(1));
  f.recorder->Normal(Node("noisy"), "Sync", "later");
  f.recorder->Normal(Node("noisy"), "Sync", "too soon");
  f.recorder->Flush();
  ASSERT_EQ(f.sink.Events().size(), 27u);
  EXPECT_EQ(f.sink.Events().back().message, "later");
  EXPECT_EQ(f.Dropped("spam_filter"), 7);  // 5 of the 30, "late" and "too soon"
}

TEST(EventRecorderTest, TransportErrorsAreRetriedOnTheClock) {
  Fixture f;
  f.sink.FailNext(2, absl::UnavailableError("connection refused"));
  f.recorder->Normal(Node("w1"), "R", "m");
  for (int attempt = 1; attempt <= 2; ++attempt) {
    ASSERT_TRUE(Eventually([&] { return f.sink.attempts() == attempt; }));
    ASSERT_TRUE(f.clock.WaitForSleepers(1));
    EXPECT_TRUE(f.sink.Events().empty());
    f.clock.Advance(Seconds(10));
  }
  f.recorder->Flush();
  EXPECT_EQ(f.sink.attempts(), 3);
  EXPECT_EQ(f.sink.Events().size(), 1u);
}

TEST(EventRecorderTest, ApiRejectionsAreNotRetried) {
  Fixture f;
  f.sink.FailNext(1, absl::PermissionDeniedError("events is forbidden"));
  f.recorder->Normal(Node("w1"), "R", "m");
  f.recorder->Flush();
  EXPECT_EQ(f.sink.attempts(), 1);
  EXPECT_TRUE(f.sink.Events().empty());
}

TEST(EventRecorderTest, RetriesStopAfterMaxTries) {
  EventRecorderOptions o;
  o.max_tries = 3;
  Fixture f(o);
  f.sink.FailNext(100, absl::UnavailableError("down"));
  f.recorder->Normal(Node("w1"), "R", "m");
  for (int attempt = 1; attempt <= 2; ++attempt) {
    ASSERT_TRUE(Eventually([&] { return f.sink.attempts() == attempt; }));
    ASSERT_TRUE(f.clock.WaitForSleepers(1));
    f.clock.Advance(Seconds(10));
  }
  f.recorder->Flush();
  EXPECT_EQ(f.sink.attempts(), 3);
}

// The hang a test's shutdown once met: an Event whose API server was down waits for its retry on
// the injected clock; a bounded Flush returns (false) instead of waiting for a clock nobody moves.
TEST(EventRecorderTest, BoundedFlushReturnsWhileARetryWaitsOnTheClock) {
  Fixture f;
  f.sink.FailNext(1, absl::UnavailableError("down"));
  f.recorder->Normal(Node("a"), "R", "m");
  ASSERT_TRUE(f.clock.WaitForSleepers(1));
  EXPECT_FALSE(f.recorder->Flush(absl::Milliseconds(50)));
  f.clock.Advance(Seconds(10));
  EXPECT_TRUE(f.recorder->Flush(Seconds(30)));
  ASSERT_EQ(f.sink.Events().size(), 1u);
}

TEST(EventRecorderTest, RecordNeverBlocksAndDropsWhenTheQueueIsFull) {
  EventRecorderOptions o;
  o.queue_size = 2;
  Fixture f(o);
  f.sink.FailNext(1, absl::UnavailableError("down"));
  f.recorder->Normal(Node("a"), "R", "m");
  // The sender is stuck retrying "a" (waiting on the fake clock); the queue fills up.
  ASSERT_TRUE(Eventually([&] { return f.sink.attempts() == 1; }));
  ASSERT_TRUE(f.clock.WaitForSleepers(1));
  f.recorder->Normal(Node("b"), "R", "m");
  f.recorder->Normal(Node("c"), "R", "m");
  f.recorder->Normal(Node("d"), "R", "m");
  EXPECT_EQ(f.recorder->dropped(), 1);
  EXPECT_EQ(f.Dropped("queue_full"), 1);
  f.clock.Advance(Seconds(10));
  f.recorder->Flush();
  std::vector<std::string> names;
  for (const Event& e : f.sink.Events()) names.push_back(e.involved_object.name);
  EXPECT_EQ(names, (std::vector<std::string>{"a", "b", "c"}));
}

TEST(EventRecorderTest, ShutDownSendsWhatIsQueuedWithoutWaitingForRetries) {
  Fixture f;
  f.sink.FailNext(1, absl::UnavailableError("down"));
  f.recorder->Normal(Node("a"), "R", "m");
  ASSERT_TRUE(Eventually([&] { return f.sink.attempts() == 1; }));
  ASSERT_TRUE(f.clock.WaitForSleepers(1));
  f.recorder->Normal(Node("b"), "R", "m");
  f.recorder->Shutdown();  // cancels the retry of "a"; "b" is still sent once
  ASSERT_EQ(f.sink.Events().size(), 1u);
  EXPECT_EQ(f.sink.Events()[0].involved_object.name, "b");
  f.recorder->Normal(Node("c"), "R", "m");
  EXPECT_EQ(f.recorder->dropped(), 1);
  EXPECT_EQ(f.Dropped("shut_down"), 1);
  EXPECT_EQ(f.Dropped("queue_full"), 0);
}

TEST(EventRecorderTest, ShutDownDropsWhatIsStillQueuedAfterTheDrainTime) {
  Fixture f;
  f.sink.FailNext(1, absl::UnavailableError("down"));
  f.recorder->Normal(Node("a"), "R", "m");
  ASSERT_TRUE(Eventually([&] { return f.sink.attempts() == 1; }));
  ASSERT_TRUE(f.clock.WaitForSleepers(1));  // "a" waits for its retry; "b" and "c" queue behind
  f.recorder->Normal(Node("b"), "R", "m");
  f.recorder->Normal(Node("c"), "R", "m");
  f.recorder->Shutdown(absl::ZeroDuration());
  EXPECT_TRUE(f.sink.Events().empty());
  EXPECT_EQ(f.recorder->dropped(), 2);
  EXPECT_EQ(f.Dropped("shut_down"), 2);
}

}  // namespace
}  // namespace ccm::kube
