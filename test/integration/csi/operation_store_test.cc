// The CnsVolumeOperationRequest store against the API emulator (issue 42 item 8): a record is
// used only for the operation it names, colliding names of the old naming get records of their
// own, and the clean-up removes a record by the name its object has.
#include "csi/controller/operation_store.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "fixtures/kube_emulator/kube_emulator.h"
#include "kube/config.h"
#include "testing/csi_socket.h"
#include "testing/eventually.h"

namespace ccm::csi {
namespace {

constexpr char kNs[] = "vmware-system-csi";

class OperationStoreEmulatorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(api_.Start().ok());
    const std::string kubeconfig = dir_.File("kubeconfig");
    ASSERT_TRUE(api_.WriteKubeconfig(kubeconfig).ok());
    absl::StatusOr<kube::Config> kc = kube::LoadKubeconfig(kubeconfig);
    ASSERT_TRUE(kc.ok()) << kc.status();
    auto rest = kube::RestClient::New(*kc);
    ASSERT_TRUE(rest.ok()) << rest.status();
    client_ = *std::move(rest);
    store_ = NewKubeOperationStore(*client_, kNs);
    ASSERT_TRUE(
        api_.Create("namespaces",
                    {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", kNs}}}})
            .ok());
  }
  static OperationRecord Rec(const std::string& name, const std::string& task) {
    OperationRecord r;
    r.name = name;
    r.task_id = task;
    r.vcenter = "vc1";
    r.invoked = absl::Now();
    return r;
  }

  ccm::csi::testing::TempDir dir_;
  ccm::testing::KubeEmulator api_;
  std::unique_ptr<kube::RestClient> client_;
  std::unique_ptr<OperationStore> store_;
};

// CreateVolume's record before anything is sent (issue 55): one request, true only for the first
// writer; the record is then updated on top of the one created, without reading it.
TEST_F(OperationStoreEmulatorTest, CreateIfAbsentCreatesOnceInOneRequest) {
  EXPECT_TRUE(store_->durable());
  api_.ResetRequestCounts();
  absl::StatusOr<bool> first = store_->CreateIfAbsent(Rec("pvc-1", ""));
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_TRUE(*first);
  EXPECT_EQ(api_.RequestCount("create cnsvolumeoperationrequests"), 1);
  EXPECT_EQ(api_.RequestCount("get cnsvolumeoperationrequests"), 0);
  ASSERT_TRUE(store_->Put(Rec("pvc-1", "task-7")).ok());
  EXPECT_EQ(api_.RequestCount("get cnsvolumeoperationrequests"), 0);
  absl::StatusOr<bool> again = store_->CreateIfAbsent(Rec("pvc-1", ""));
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_FALSE(*again);
  auto got = store_->Get("pvc-1");
  ASSERT_TRUE(got.ok() && got->has_value());
  EXPECT_EQ((*got)->task_id, "task-7") << "the earlier record is kept";
  EXPECT_FALSE(NewMemoryOperationStore()->durable());
}

TEST_F(OperationStoreEmulatorTest, NamesThatDifferOnlyInCaseOrUnderscoreKeepTheirOwnRecords) {
  const std::string a = "attach-[ds1] kubevols/disk_a.vmdk-4230aaaa";
  const std::string b = "attach-[ds1] kubevols/disk-A.vmdk-4230aaaa";
  absl::Status put_a = store_->Put(Rec(a, "task-1"));
  ASSERT_TRUE(put_a.ok()) << put_a;
  absl::Status put_b = store_->Put(Rec(b, "task-2"));
  ASSERT_TRUE(put_b.ok()) << put_b;
  auto got_a = store_->Get(a);
  auto got_b = store_->Get(b);
  ASSERT_TRUE(got_a.ok() && got_a->has_value()) << got_a.status();
  ASSERT_TRUE(got_b.ok() && got_b->has_value()) << got_b.status();
  EXPECT_EQ((*got_a)->task_id, "task-1");
  EXPECT_EQ((*got_b)->task_id, "task-2");
  EXPECT_EQ(store_->List()->size(), 2u);
}

TEST_F(OperationStoreEmulatorTest, ARecordHoldingAnotherOperationIsNeverUsedAndIsCleanedUp) {
  // As an earlier version wrote "attach-A_b": its object name is the lossy "attach-a-b", which is
  // also the object name of the (valid) operation name "attach-a-b".
  OperationRecord legacy = Rec("attach-A_b", "task-9");
  legacy.status = kTaskSuccess;
  legacy.invoked = absl::Now() - absl::Hours(1);
  kube::Json obj = RecordToObject(legacy, nullptr, kNs);
  obj["metadata"]["name"] = "attach-a-b";
  auto created = api_.Create("cnsvolumeoperationrequests", obj);
  ASSERT_TRUE(created.ok()) << created.status();

  auto got = store_->Get("attach-a-b");
  EXPECT_EQ(got.status().code(), absl::StatusCode::kFailedPrecondition) << got.status();
  EXPECT_THAT(got.status().message(), ::testing::HasSubstr("holds operation \"attach-A_b\""));
  EXPECT_EQ(store_->Put(Rec("attach-a-b", "task-1")).code(), absl::StatusCode::kFailedPrecondition);
  auto kept = api_.Get("cnsvolumeoperationrequests", kNs, "attach-a-b");
  ASSERT_TRUE(kept.ok());
  EXPECT_EQ((*kept)["spec"]["name"], "attach-A_b");  // not overwritten

  // The clean-up deletes the stale record by its object's name.
  auto all = store_->List();
  ASSERT_TRUE(all.ok()) << all.status();
  auto stale = StaleRecords(*all, absl::Now(), absl::Minutes(15));
  ASSERT_EQ(stale.size(), 1u);
  EXPECT_EQ(stale[0].object_name, "attach-a-b");
  ASSERT_TRUE(store_->DeleteListed(stale[0]).ok());
  EXPECT_FALSE(api_.Get("cnsvolumeoperationrequests", kNs, "attach-a-b").ok());
  auto now_free = store_->Get("attach-a-b");
  ASSERT_TRUE(now_free.ok()) << now_free.status();
  EXPECT_FALSE(now_free->has_value());
}

// Issue 55: an attach's, detach's or delete's record comes from the store's watch (no request),
// except one in progress, which is waited for and so read from the API server.
TEST_F(OperationStoreEmulatorTest, GetCachedReadsTheWatchAndAsksForARecordInProgress) {
  store_->Start();
  auto cached = [&](const std::string& name, int* gets) {
    api_.ResetRequestCounts();
    auto r = store_->GetCached(name);
    *gets = api_.RequestCount("get cnsvolumeoperationrequests");
    return r;
  };
  int gets = -1;
  // Before the watch has the records a GET answers; once it has them, none is sent.
  ASSERT_TRUE(::ccm::testing::Eventually([&] {
    auto r = cached("delete-absent", &gets);
    return r.ok() && !r->has_value() && gets == 0;
  }));
  ASSERT_TRUE(store_->Put(Rec("attach-v1-vm-1", "task-1")).ok());  // in progress
  ASSERT_TRUE(::ccm::testing::Eventually([&] {
    auto r = cached("attach-v1-vm-1", &gets);
    return r.ok() && r->has_value() && (*r)->task_id == "task-1";
  }));
  EXPECT_EQ(gets, 1) << "a record in progress is read fresh";
  OperationRecord done = Rec("attach-v1-vm-1", "task-1");
  done.status = kTaskSuccess;
  ASSERT_TRUE(store_->Put(done).ok());
  ASSERT_TRUE(::ccm::testing::Eventually([&] {
    auto r = cached("attach-v1-vm-1", &gets);
    return r.ok() && r->has_value() && (*r)->status == kTaskSuccess && gets == 0;
  }));
  // The record read from the watch is written on top of without a GET.
  api_.ResetRequestCounts();
  ASSERT_TRUE(store_->Put(Rec("attach-v1-vm-1", "task-2")).ok());
  EXPECT_EQ(api_.RequestCount("get cnsvolumeoperationrequests"), 0);
  EXPECT_EQ(api_.RequestCount("update cnsvolumeoperationrequests"), 1);
  store_->Stop();
}

// Without the watch permission (the reference's Role): every read is a GET, and the records are
// listed once, not over and over.
TEST_F(OperationStoreEmulatorTest, WithoutWatchPermissionEveryReadIsAGet) {
  api_.InjectError({.code = 403,
                    .count = -1,
                    .method = "watch",
                    .path_substring = "cnsvolumeoperationrequests"});
  ASSERT_TRUE(store_->Put(Rec("attach-v1-vm-1", "task-1")).ok());
  store_->Start();
  int gets = -1;
  auto cached = [&](const std::string& name) {
    const int before = api_.RequestCount("get cnsvolumeoperationrequests");
    auto r = store_->GetCached(name);
    gets = api_.RequestCount("get cnsvolumeoperationrequests") - before;
    return r;
  };
  // Until the watch is refused the listed records may answer; once it is, GETs.
  ASSERT_TRUE(::ccm::testing::Eventually([&] {
    return api_.RequestCount("watch cnsvolumeoperationrequests") >= 1 &&
           cached("delete-absent").ok() && gets == 1;
  }));
  for (int i = 0; i < 3; ++i) {
    auto r = cached("delete-absent");
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_FALSE(r->has_value());
    EXPECT_EQ(gets, 1);
  }
  EXPECT_EQ(api_.RequestCount("list cnsvolumeoperationrequests"), 1) << "not relisted";
  EXPECT_EQ(api_.RequestCount("watch cnsvolumeoperationrequests"), 1);
  store_->Stop();
}

}  // namespace
}  // namespace ccm::csi
