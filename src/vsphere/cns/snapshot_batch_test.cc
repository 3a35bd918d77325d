#include "vsphere/cns/snapshot_batch.h"

#include <map>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "common/call_deadline.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ccm::vsphere::cns {
namespace {

using ::testing::SizeIs;

// CNS's snapshots by volume, answering CnsQuerySnapshots as the fixture does: each spec's
// snapshots in order, a fault entry for an unknown volume, pages of `page` entries.
class FakeQuery {
 public:
  std::map<std::string, int> snapshots;  // volume -> how many it has
  absl::Status whole;                    // the answer to every query when set
  std::string stray_volume;              // in a batch's answer: an entry of a volume no spec named
  int64_t page = 128;
  absl::Notification* gate = nullptr;  // the first query waits for it

  SnapshotQuery Fn() {
    return [this](const SnapshotQueryFilter& f) { return Answer(f); };
  }
  std::vector<SnapshotQueryFilter> seen() {
    absl::MutexLock l(&mu_);
    return seen_;
  }

 private:
  absl::StatusOr<SnapshotQueryResult> Answer(const SnapshotQueryFilter& f) {
    absl::Notification* wait = nullptr;
    {
      absl::MutexLock l(&mu_);
      seen_.push_back(f);
      if (seen_.size() == 1) wait = gate;
    }
    if (wait != nullptr) wait->WaitForNotification();
    if (!whole.ok()) return whole;
    std::vector<SnapshotQueryEntry> all;
    for (const SnapshotQuerySpec& s : f.specs) {
      auto it = snapshots.find(s.volume_id);
      if (it == snapshots.end()) {
        // A fault entry names no volume: which spec it answers is not said.
        all.push_back({{}, "CnsVolumeNotFoundFault", absl::StrCat("volume ", s.volume_id)});
        continue;
      }
      for (int i = 0; i < it->second; ++i) {
        all.push_back({{absl::StrCat("s", i), s.volume_id, "", absl::UnixEpoch()}, "", ""});
      }
    }
    if (!stray_volume.empty() && f.specs.size() > 1)
      all.push_back({{"x", stray_volume, "", absl::UnixEpoch()}, "", ""});
    const int64_t offset = f.cursor ? f.cursor->offset : 0;
    const int64_t total = static_cast<int64_t>(all.size());
    const int64_t end = std::min(total, offset + page);
    SnapshotQueryResult r{{}, Cursor{end, page, total}};
    for (int64_t i = offset; i < end; ++i) r.entries.push_back(all[static_cast<size_t>(i)]);
    return r;
  }

  absl::Mutex mu_;
  std::vector<SnapshotQueryFilter> seen_ ABSL_GUARDED_BY(mu_);
};

size_t Count(const absl::StatusOr<std::vector<Snapshot>>& r) { return r.ok() ? r->size() : 999; }

TEST(QuerySnapshotsOfManyTest, OneQueryAnswersEveryVolume) {
  FakeQuery cns;
  cns.snapshots = {{"a", 2}, {"b", 0}, {"c", 1}};
  auto got = QuerySnapshotsOfMany({"a", "b", "c"}, cns.Fn());
  ASSERT_THAT(got, SizeIs(3));
  EXPECT_EQ(Count(got[0]), 2u);
  EXPECT_EQ(Count(got[1]), 0u);
  EXPECT_EQ(Count(got[2]), 1u);
  EXPECT_EQ(got[2]->front().volume_id, "c");
  ASSERT_THAT(cns.seen(), SizeIs(1));
  EXPECT_THAT(cns.seen()[0].specs, SizeIs(3));
}

TEST(QuerySnapshotsOfManyTest, PagesThroughABatch) {
  FakeQuery cns;
  cns.snapshots = {{"a", 100}, {"b", 100}, {"c", 100}};
  auto got = QuerySnapshotsOfMany({"a", "b", "c"}, cns.Fn());
  for (const auto& g : got) EXPECT_EQ(Count(g), 100u);
  ASSERT_THAT(cns.seen(), SizeIs(3));  // 300 entries in pages of 128
  EXPECT_EQ(cns.seen()[2].cursor->offset, 256);
}

// What cannot be told apart by volume is asked again one volume at a time; a volume that has
// snapshots in the batch's answer is not asked again.
TEST(QuerySnapshotsOfManyTest, UnclearAnswersAreAskedVolumeByVolume) {
  struct Case {
    std::string name;
    absl::Status whole;
    std::string stray;
    std::vector<size_t> want_counts;  // a, gone, empty (999: an error)
    absl::StatusCode gone_code;
    size_t want_queries;
  };
  const std::vector<Case> cases = {
      {"fault entry", absl::OkStatus(), "", {1, 999, 0}, absl::StatusCode::kNotFound, 3},
      {"stray entry", absl::OkStatus(), "zzz", {1, 999, 0}, absl::StatusCode::kNotFound, 3},
      {"refused whole",
       absl::InvalidArgumentError("bad spec"),
       "",
       {999, 999, 999},
       absl::StatusCode::kInvalidArgument,
       4},
      {"unreachable",
       absl::UnavailableError("down"),
       "",
       {999, 999, 999},
       absl::StatusCode::kUnavailable,
       1},
      {"no snapshot API",
       absl::UnimplementedError("no"),
       "",
       {999, 999, 999},
       absl::StatusCode::kUnimplemented,
       1},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    FakeQuery cns;
    cns.snapshots = {{"a", 1}, {"empty", 0}};
    cns.whole = c.whole;
    cns.stray_volume = c.stray;
    auto got = QuerySnapshotsOfMany({"a", "gone", "empty"}, cns.Fn());
    ASSERT_THAT(got, SizeIs(3));
    for (size_t i = 0; i < 3; ++i) EXPECT_EQ(Count(got[i]), c.want_counts[i]) << i;
    EXPECT_EQ(got[1].status().code(), c.gone_code);
    EXPECT_EQ(cns.seen().size(), c.want_queries);
  }
}

TEST(QuerySnapshotsOfTest, AFaultEntryIsTheVolumesStatus) {
  FakeQuery cns;
  auto got = QuerySnapshotsOf("gone", cns.Fn());
  EXPECT_TRUE(absl::IsNotFound(got.status())) << got.status();
  EXPECT_THAT(got.status().message(), ::testing::HasSubstr("volume gone"));
}

// Look-ups that arrive while a query is out go together in the next one; each gets its own
// volume's answer, and a volume asked twice is named once.
TEST(SnapshotBatchTest, LookUpsThatWaitShareTheNextQuery) {
  FakeQuery cns;
  cns.snapshots = {{"a", 1}, {"b", 2}, {"c", 0}};
  absl::Notification gate;
  cns.gate = &gate;
  SnapshotBatch batch;
  SnapshotQuery q = cns.Fn();
  absl::StatusOr<std::vector<Snapshot>> first, b1, b2, c;
  std::thread leader([&] { first = batch.Of("a", q); });
  while (cns.seen().empty()) std::this_thread::yield();  // the first query is out
  // One after the other, so that they queue in this order.
  std::thread t1([&] { b1 = batch.Of("b", q); });
  batch.AwaitQueuedForTest(1);
  std::thread t2([&] { b2 = batch.Of("b", q); });
  batch.AwaitQueuedForTest(2);
  std::thread t3([&] { c = batch.Of("c", q); });
  batch.AwaitQueuedForTest(3);
  gate.Notify();
  for (std::thread* t : {&leader, &t1, &t2, &t3}) t->join();
  EXPECT_EQ(Count(first), 1u);
  EXPECT_EQ(Count(b1), 2u);
  EXPECT_EQ(Count(b2), 2u);
  EXPECT_EQ(Count(c), 0u);
  const auto seen = cns.seen();
  ASSERT_THAT(seen, SizeIs(2));
  ASSERT_THAT(seen[1].specs, SizeIs(2));
  EXPECT_EQ(seen[1].specs[0].volume_id, "b");
  EXPECT_EQ(seen[1].specs[1].volume_id, "c");
  EXPECT_EQ(batch.stats().calls, 2u);
  EXPECT_EQ(batch.stats().asks, 4u);
}

TEST(SnapshotBatchTest, ABatchNamesAtMostMaxVolumes) {
  FakeQuery cns;
  cns.snapshots = {{"a", 0}, {"b", 0}, {"c", 0}, {"d", 0}};
  absl::Notification gate;
  cns.gate = &gate;
  SnapshotBatch batch(/*max_volumes=*/2);
  SnapshotQuery q = cns.Fn();
  std::vector<std::thread> threads;
  threads.emplace_back([&] { EXPECT_TRUE(batch.Of("a", q).ok()); });
  while (cns.seen().empty()) std::this_thread::yield();
  for (const char* v : {"b", "c", "d"}) {
    threads.emplace_back([&, v] { EXPECT_TRUE(batch.Of(v, q).ok()); });
  }
  batch.AwaitQueuedForTest(3);
  gate.Notify();
  for (std::thread& t : threads) t.join();
  const auto seen = cns.seen();
  ASSERT_THAT(seen, SizeIs(3));
  EXPECT_THAT(seen[1].specs, SizeIs(2));
  EXPECT_THAT(seen[2].specs, SizeIs(1));
}

// A look-up whose call deadline passes while it waits leaves, and the query under way answers
// the others.
TEST(SnapshotBatchTest, ALookUpLeavesByItsDeadline) {
  FakeQuery cns;
  cns.snapshots = {{"a", 1}, {"b", 1}};
  absl::Notification gate;
  cns.gate = &gate;
  SnapshotBatch batch;
  SnapshotQuery q = cns.Fn();
  absl::StatusOr<std::vector<Snapshot>> first;
  std::thread leader([&] { first = batch.Of("a", q); });
  while (cns.seen().empty()) std::this_thread::yield();
  {
    ScopedCallDeadline past(absl::Now() - absl::Seconds(1));
    absl::StatusOr<std::vector<Snapshot>> late = batch.Of("b", q);
    EXPECT_TRUE(absl::IsDeadlineExceeded(late.status())) << late.status();
  }
  gate.Notify();
  leader.join();
  EXPECT_EQ(Count(first), 1u);
  EXPECT_THAT(cns.seen(), SizeIs(1));  // the one that left is not asked for
  EXPECT_EQ(batch.stats().asks, 1u);
}

}  // namespace
}  // namespace ccm::vsphere::cns
