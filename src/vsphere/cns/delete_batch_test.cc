#include "vsphere/cns/delete_batch.h"

#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "common/call_deadline.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ccm::vsphere::cns {
namespace {

using ::testing::SizeIs;

// Records the calls; the first one waits for `gate`; each call's task is "task-<n>", or `refuse`
// for calls naming several volumes.
class FakeStart {
 public:
  absl::Notification* gate = nullptr;
  absl::Status refuse_batches;

  DeleteBatch::StartFn Fn() {
    return [this](const Operation& op) { return Call(op); };
  }
  std::vector<Operation> calls() {
    absl::MutexLock l(&mu_);
    return calls_;
  }

 private:
  absl::StatusOr<Moref> Call(const Operation& op) {
    absl::Notification* wait = nullptr;
    size_t n = 0;
    {
      absl::MutexLock l(&mu_);
      calls_.push_back(op);
      n = calls_.size();
      if (n == 1) wait = gate;
    }
    if (wait != nullptr) wait->WaitForNotification();
    if (!refuse_batches.ok() && op.volume_id.empty()) return refuse_batches;
    return Moref{"Task", absl::StrCat("task-", n)};
  }
  absl::Mutex mu_;
  std::vector<Operation> calls_ ABSL_GUARDED_BY(mu_);
};

struct Deletes {
  std::vector<std::thread> threads;
  std::vector<absl::StatusOr<Moref>> tasks;
  explicit Deletes(size_t n) : tasks(n) {}
  void Run(size_t i, DeleteBatch& batch, const DeleteBatch::StartFn& fn, const std::string& id,
           bool disk = true) {
    threads.emplace_back([&, i, id, disk] { tasks[i] = batch.Start(DeleteOp(id, disk), fn); });
  }
  void Join() {
    for (std::thread& t : threads) t.join();
  }
};

// While one call is out, the deletes that arrive wait and go together in the next one (the same
// deleteDisk flag only); a delete alone is sent as its own operation.
TEST(DeleteBatchTest, DeletesThatWaitShareTheNextCall) {
  FakeStart cns;
  absl::Notification gate;
  cns.gate = &gate;
  DeleteBatch batch;
  DeleteBatch::StartFn fn = cns.Fn();
  Deletes d(4);
  d.Run(0, batch, fn, "a");
  while (cns.calls().empty()) std::this_thread::yield();
  // One after the other, so that they queue in this order.
  d.Run(1, batch, fn, "b");
  batch.AwaitQueuedForTest(1);
  d.Run(2, batch, fn, "c");
  batch.AwaitQueuedForTest(2);
  d.Run(3, batch, fn, "d", /*disk=*/false);
  batch.AwaitQueuedForTest(3);
  gate.Notify();
  d.Join();
  const std::vector<Operation> calls = cns.calls();
  ASSERT_THAT(calls, SizeIs(3));
  EXPECT_EQ(calls[0].args_xml, DeleteOp("a", true).args_xml);
  EXPECT_EQ(calls[0].volume_id, "a");
  EXPECT_EQ(calls[1].args_xml, DeleteOp(std::vector<std::string>{"b", "c"}, true).args_xml);
  EXPECT_EQ(calls[2].args_xml, DeleteOp("d", false).args_xml);
  ASSERT_TRUE(d.tasks[1].ok() && d.tasks[2].ok() && d.tasks[3].ok());
  EXPECT_EQ(d.tasks[1]->value, d.tasks[2]->value);
  EXPECT_NE(d.tasks[1]->value, d.tasks[3]->value);
  EXPECT_EQ(batch.stats().calls, 3u);
  EXPECT_EQ(batch.stats().asks, 4u);
}

// A call CNS refuses as a whole is sent again for each of its volumes alone.
TEST(DeleteBatchTest, ACallRefusedAsAWholeIsSentVolumeByVolume) {
  FakeStart cns;
  absl::Notification gate;
  cns.gate = &gate;
  cns.refuse_batches = absl::InvalidArgumentError("InvalidArgument: volumeIds");
  DeleteBatch batch;
  DeleteBatch::StartFn fn = cns.Fn();
  Deletes d(3);
  d.Run(0, batch, fn, "a");
  while (cns.calls().empty()) std::this_thread::yield();
  d.Run(1, batch, fn, "b");
  d.Run(2, batch, fn, "c");
  batch.AwaitQueuedForTest(2);
  gate.Notify();
  d.Join();
  for (const auto& t : d.tasks) EXPECT_TRUE(t.ok()) << t.status();
  EXPECT_NE(d.tasks[1]->value, d.tasks[2]->value);
  EXPECT_THAT(cns.calls(), SizeIs(4));  // a; b and c together (refused); b alone; c alone
}

// A delete whose call deadline passes while it waits to be sent leaves; the call under way goes on.
TEST(DeleteBatchTest, ADeleteLeavesByItsDeadline) {
  FakeStart cns;
  absl::Notification gate;
  cns.gate = &gate;
  DeleteBatch batch;
  DeleteBatch::StartFn fn = cns.Fn();
  Deletes d(1);
  d.Run(0, batch, fn, "a");
  while (cns.calls().empty()) std::this_thread::yield();
  {
    ScopedCallDeadline past(absl::Now() - absl::Seconds(1));
    absl::StatusOr<Moref> late = batch.Start(DeleteOp("b", true), fn);
    EXPECT_TRUE(absl::IsDeadlineExceeded(late.status())) << late.status();
  }
  gate.Notify();
  d.Join();
  EXPECT_TRUE(d.tasks[0].ok());
  EXPECT_THAT(cns.calls(), SizeIs(1));
}

// The results of a task, as WaitOwn reads them for one delete.
class ResultsOnly final : public VolumeManager {
 public:
  std::vector<VolumeOperationResult> results;
  absl::StatusOr<QueryResult> QueryVolume(const QueryFilter&) override { return QueryResult{}; }
  absl::StatusOr<SnapshotQueryResult> QuerySnapshots(const SnapshotQueryFilter&) override {
    return SnapshotQueryResult{};
  }
  absl::StatusOr<Moref> Start(const Operation&) override { return Moref{"Task", "task-1"}; }
  absl::StatusOr<VolumeOperationResult> Wait(const Moref&, absl::string_view) override {
    return results.front();
  }
  absl::StatusOr<std::vector<VolumeOperationResult>> WaitAll(const Moref&,
                                                             absl::string_view) override {
    return results;
  }
  absl::StatusOr<std::string> AttachedDiskUuid(const Moref&, const std::string&) override {
    return std::string();
  }
  absl::Status KeepAfterVmDeletion(const std::string&, const Moref&) override {
    return absl::OkStatus();
  }
};

TEST(WaitOwnTest, ADeleteReadsItsOwnVolumesResult) {
  VolumeOperationResult a, b, unnamed;
  a.volume_id = "a";
  b.volume_id = "b";
  b.fault_name = "ResourceInUse";
  b.fault_message = "The resource 'volume' is in use";
  struct Case {
    std::string name;
    std::vector<VolumeOperationResult> results;
    std::string volume;
    absl::StatusCode want;
  };
  const std::vector<Case> cases = {
      {"its result in a batch", {a, b}, "a", absl::StatusCode::kOk},
      {"its fault, not another's", {a, b}, "b", absl::StatusCode::kFailedPrecondition},
      {"none names it", {a, b}, "c", absl::StatusCode::kUnknown},
      {"one result naming no volume", {unnamed}, "c", absl::StatusCode::kOk},
      {"one result naming another", {a}, "c", absl::StatusCode::kUnknown},
  };
  const Moref task{"Task", "task-1"};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    ResultsOnly cns;
    cns.results = c.results;
    absl::StatusOr<VolumeOperationResult> got = cns.WaitOwn(task, DeleteOp(c.volume, true));
    if (c.want == absl::StatusCode::kUnknown) {
      EXPECT_TRUE(IsNoVolumeResult(got.status())) << got.status();
    } else {
      EXPECT_EQ(got.status().code(), c.want) << got.status();
    }
  }
}

}  // namespace
}  // namespace ccm::vsphere::cns
