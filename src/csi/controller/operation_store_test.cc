#include "csi/controller/operation_store.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <regex>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"

namespace ccm::csi {
namespace {

using ::testing::ElementsAre;

OperationRecord Rec(const std::string& name, const std::string& status, absl::Time at,
                    const std::string& task = "task-1") {
  OperationRecord r;
  r.name = name;
  r.task_id = task;
  r.vcenter = "vc1";
  r.status = status;
  r.invoked = at;
  return r;
}

bool IsDns1123Subdomain(const std::string& s) {
  static const std::regex kName("[a-z0-9]([-a-z0-9.]*[a-z0-9])?");
  return !s.empty() && s.size() <= 253 && std::regex_match(s, kName);
}

// Issue 42 item 8: names that are valid object names are kept (the reference's records are
// found); any other gets a hash of the whole name, so names that differ only in case, '_' against
// '-', or past the cut never share a record, and the result is always a valid name.
TEST(OperationStoreTest, ObjectNamesAreValidAndCollisionFree) {
  EXPECT_EQ(SafeObjectName("pvc-1a2b"), "pvc-1a2b");
  EXPECT_EQ(SafeObjectName("delete-5f3a.vc2"), "delete-5f3a.vc2");
  EXPECT_THAT(SafeObjectName("delete-5F3A@vc2"), ::testing::StartsWith("delete-5f3a-vc2-"));
  const std::vector<std::pair<std::string, std::string>> pairs = {
      {"attach-[ds1] kubevols/disk_a.vmdk-4230", "attach-[ds1] kubevols/disk-a.vmdk-4230"},
      {"attach-[ds1] kubevols/Disk.vmdk-4230", "attach-[ds1] kubevols/disk.vmdk-4230"},
      {"delete-5F3A@vc2", "delete-5f3a@vc2"},
      {"pvc-1", "PVC-1"},
      {std::string(260, 'a') + "-x", std::string(260, 'a') + "-y"},
  };
  for (const auto& [a, b] : pairs) {
    EXPECT_NE(SafeObjectName(a), SafeObjectName(b)) << a << " / " << b;
    EXPECT_EQ(SafeObjectName(a), SafeObjectName(a));  // stable
  }
  for (const std::string& name :
       {std::string("file:abc_def"), std::string("attach-[ds1] kubevols/x.vmdk-"),
        std::string("-leading"), std::string("@@@"), std::string(300, 'a'),
        std::string(252, 'a') + "_", std::string(240, 'a') + "@" + std::string(20, '-')}) {
    const std::string got = SafeObjectName(name);
    EXPECT_TRUE(IsDns1123Subdomain(got)) << name << " -> " << got;
  }
}

TEST(OperationStoreTest, RecordsRoundTripAsTheReferencesObject) {
  const absl::Time t = absl::FromUnixSeconds(1'800'000'000);
  OperationRecord r = Rec("pvc-1", kTaskInProgress, t, "task-42");
  kube::Json obj = RecordToObject(r, nullptr, "vmware-system-csi");
  EXPECT_EQ(obj["apiVersion"], "cns.vmware.com/v1alpha1");
  EXPECT_EQ(obj["kind"], "CnsVolumeOperationRequest");
  EXPECT_EQ(obj["metadata"]["namespace"], "vmware-system-csi");
  EXPECT_EQ(obj["spec"]["name"], "pvc-1");
  EXPECT_EQ(obj["status"]["firstOperationDetails"]["taskId"], "task-42");
  EXPECT_EQ(obj["status"]["firstOperationDetails"]["taskStatus"], "InProgress");
  EXPECT_EQ(obj["status"]["firstOperationDetails"]["taskInvocationTimestamp"],
            "2027-01-15T08:00:00Z");

  // The same attempt ends: updated in place; the first operation follows it while alone.
  r.status = kTaskSuccess;
  r.volume_id = "vol-7";
  obj = RecordToObject(r, &obj, "vmware-system-csi");
  ASSERT_EQ(obj["status"]["latestOperationDetails"].size(), 1u);
  EXPECT_EQ(obj["status"]["volumeID"], "vol-7");
  EXPECT_EQ(obj["status"]["firstOperationDetails"]["taskStatus"], "Success");
  auto back = RecordFromObject(obj);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->name, "pvc-1");
  EXPECT_EQ(back->volume_id, "vol-7");
  EXPECT_EQ(back->task_id, "task-42");
  EXPECT_EQ(back->vcenter, "vc1");
  EXPECT_EQ(back->status, kTaskSuccess);
  EXPECT_EQ(back->invoked, t);

  // Later attempts are appended, ten kept; the first one is never overwritten.
  for (int i = 1; i <= 12; ++i) {
    OperationRecord again = Rec("pvc-1", kTaskError, t + absl::Minutes(i), absl::StrCat("t", i));
    obj = RecordToObject(again, &obj, "vmware-system-csi");
  }
  EXPECT_EQ(obj["status"]["latestOperationDetails"].size(), 10u);
  EXPECT_EQ(obj["status"]["firstOperationDetails"]["taskId"], "task-42");
  EXPECT_EQ(RecordFromObject(obj)->task_id, "t12");
}

TEST(OperationStoreTest, ObjectsOfTheReferenceAreRead) {
  // As the reference writes them (a create that succeeded).
  kube::Json obj = kube::Json::parse(R"({
    "apiVersion": "cns.vmware.com/v1alpha1", "kind": "CnsVolumeOperationRequest",
    "metadata": {"name": "pvc-abc", "namespace": "vmware-system-csi"},
    "spec": {"name": "pvc-abc"},
    "status": {"volumeID": "4f2e", "capacity": 1024,
      "firstOperationDetails": {"taskInvocationTimestamp": "2026-11-25T10:00:00Z",
                                "taskId": "task-7", "opId": "x", "taskStatus": "InProgress"},
      "latestOperationDetails": [{"taskInvocationTimestamp": "2026-11-25T10:00:00Z",
                                  "taskId": "task-7", "taskStatus": "Success"}]}})");
  auto r = RecordFromObject(obj);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->volume_id, "4f2e");
  EXPECT_EQ(r->capacity_mb, 1024);
  EXPECT_EQ(r->status, "Success");
  EXPECT_FALSE(RecordFromObject(kube::Json::parse(R"({"spec": {}})")).ok());
  EXPECT_FALSE(RecordFromObject(kube::Json::parse(R"([1, 2])")).ok());
}

TEST(OperationStoreTest, SnapshotRecordsKeepTheSnapshotId) {
  // A CreateSnapshot's record as the reference names and fills it.
  OperationRecord r =
      Rec("snapshot-1-4f2e", kTaskSuccess, absl::FromUnixSeconds(1'800'000'000), "task-9");
  r.volume_id = "4f2e";
  r.snapshot_id = "s-77";
  kube::Json obj = RecordToObject(r, nullptr, "vmware-system-csi");
  EXPECT_EQ(obj["status"]["volumeID"], "4f2e");
  EXPECT_EQ(obj["status"]["snapshotID"], "s-77");
  auto back = RecordFromObject(obj);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->snapshot_id, "s-77");
  EXPECT_EQ(back->volume_id, "4f2e");
}

TEST(OperationStoreTest, StaleRecordsAreEndedAndOld) {
  const absl::Time now = absl::FromUnixSeconds(1'800'000'000);
  std::vector<OperationRecord> all = {
      Rec("old-done", kTaskSuccess, now - absl::Minutes(20)),
      Rec("old-failed", kTaskError, now - absl::Minutes(16)),
      Rec("old-running", kTaskInProgress, now - absl::Hours(2)),
      Rec("recent", kTaskSuccess, now - absl::Minutes(5)),
  };
  std::vector<std::string> names;
  for (const OperationRecord& r : StaleRecords(all, now, absl::Minutes(15)))
    names.push_back(r.name);
  EXPECT_THAT(names, ElementsAre("old-done", "old-failed"));
}

TEST(OperationStoreTest, MemoryStore) {
  auto store = NewMemoryOperationStore();
  EXPECT_FALSE(store->Get("x")->has_value());
  ASSERT_TRUE(store->Put(Rec("x", kTaskInProgress, absl::Now())).ok());
  EXPECT_EQ((*store->Get("x"))->task_id, "task-1");
  EXPECT_EQ(store->List()->size(), 1u);
  ASSERT_TRUE(store->Delete("x").ok());
  EXPECT_FALSE(store->Get("x")->has_value());
}

}  // namespace
}  // namespace ccm::csi
