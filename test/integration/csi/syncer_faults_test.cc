// The CNS metadata syncer under faults: the API server restarting or losing its watches, and
// vCenter refusing or failing calls. Nothing may be lost: once the fault clears, CNS says what
// Kubernetes says, through the work queue's retries (on the FakeClock) or the next full sync.
#include "gtest/gtest.h"
#include "integration/csi/syncer_env.h"
#include "testing/eventually.h"

namespace ccm::csi::syncer::testing {
namespace {

using ::ccm::testing::Eventually;

class SyncerFaultsTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(env_.Start().ok()); }
  void TearDown() override {
    EXPECT_TRUE(env_.vcsim().SetFault("none").ok());
    EXPECT_TRUE(env_.vcsim().ClearCnsFaults().ok());
  }

  absl::Status Objects(const std::string& id, const std::string& name) {
    if (absl::Status s = env_.PutPv("pv-" + name, id, "ns1", name); !s.ok()) return s;
    if (absl::Status s = env_.PutPvc("ns1", name, "pv-" + name); !s.ok()) return s;
    return env_.PutPod("ns1", name + "-pod", name);
  }
  bool Complete(const std::string& id, const std::string& name) {
    return env_.HasEntity(id, kEntityPv, "pv-" + name) &&
           env_.HasEntity(id, kEntityPvc, name, "ns1") &&
           env_.HasEntity(id, kEntityPod, name + "-pod", "ns1");
  }
  // Moves the FakeClock a second at a time (the retry backoff is 1 s doubling to 8 s) until
  // `cond` holds.
  bool EventuallyWithRetries(const std::function<bool()>& cond) {
    return Eventually(
        [&] {
          if (cond()) return true;
          env_.clock().Advance(absl::Seconds(1));
          return false;
        },
        absl::Seconds(30), absl::Milliseconds(20));
  }
  int Calls(const std::string& method) {
    auto c = env_.vcsim().CnsCounters();
    return c.ok() ? (*c)[method] : -1;
  }

  SyncerEnv env_;
};

TEST_F(SyncerFaultsTest, ApiServerRestartLosesNothing) {
  auto id = env_.CreateVolume("pvc-restart");
  ASSERT_TRUE(id.ok());
  env_.emu().StopServing();
  // Written while the API server is down (as etcd would keep them).
  ASSERT_TRUE(Objects(*id, "restart").ok());
  ASSERT_FALSE(Complete(*id, "restart"));
  ASSERT_TRUE(env_.emu().StartServing().ok());
  ASSERT_TRUE(Eventually([&] { return Complete(*id, "restart"); }));
}

TEST_F(SyncerFaultsTest, DroppedWatchesAndCompactedHistoryLoseNothing) {
  auto a = env_.CreateVolume("pvc-a");
  auto b = env_.CreateVolume("pvc-b");
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_TRUE(Objects(*a, "a").ok());
  env_.emu().DropWatches();
  ASSERT_TRUE(Objects(*b, "b").ok());
  env_.emu().CompactHistory();  // the informers must relist
  env_.emu().DropWatches();
  ASSERT_TRUE(env_.emu().Delete("pods", "ns1", "a-pod").ok());
  ASSERT_TRUE(Eventually([&] {
    return Complete(*b, "b") && env_.HasEntity(*a, kEntityPvc, "a", "ns1") &&
           !env_.HasEntity(*a, kEntityPod, "a-pod", "ns1");
  }));
}

TEST_F(SyncerFaultsTest, FailedMetadataUpdatesAreRetried) {
  auto id = env_.CreateVolume("pvc-retry");
  ASSERT_TRUE(id.ok());
  // Every update task fails (its info.error), changing nothing.
  ASSERT_TRUE(
      env_.vcsim().SetCnsFault("CnsUpdateVolumeMetadata", "CnsFault", "injected", -1, "task").ok());
  ASSERT_TRUE(Objects(*id, "retry").ok());
  ASSERT_TRUE(Eventually([&] { return Calls("CnsUpdateVolumeMetadata") >= 1; }));
  EXPECT_TRUE(env_.Entities(*id).empty());
  ASSERT_TRUE(env_.vcsim().ClearCnsFaults().ok());
  ASSERT_TRUE(EventuallyWithRetries([&] { return Complete(*id, "retry"); }));
  EXPECT_GE(env_.registry().Find("vsphere_syncer_metadata_updates_total")->Value({"failure"}), 1);
}

TEST_F(SyncerFaultsTest, UnreachableVCenterIsRetried) {
  auto id = env_.CreateVolume("pvc-down");
  ASSERT_TRUE(id.ok());
  ASSERT_TRUE(env_.vcsim().SetFault("503").ok());  // every vCenter call answers 503
  ASSERT_TRUE(Objects(*id, "down").ok());
  // The full sync cannot ask CNS: counted as failed, nothing reported or written.
  ASSERT_TRUE(env_.RunFullSync());
  EXPECT_EQ(env_.syncer().stats().full_sync_failures, 1);
  EXPECT_TRUE(Eventually([&] {
    return env_.registry().Find("vsphere_full_sync_ops_histogram")->Count({"fail"}) == 1u;
  }));
  ASSERT_TRUE(env_.vcsim().SetFault("none").ok());
  ASSERT_TRUE(EventuallyWithRetries([&] { return Complete(*id, "down"); }));
  ASSERT_TRUE(env_.RunFullSync());
  EXPECT_TRUE(env_.syncer().stats().orphans.empty());
}

TEST_F(SyncerFaultsTest, DriftDuringAnOutageIsRepairedByTheNextFullSync) {
  auto id = env_.CreateVolume("pvc-outage");
  ASSERT_TRUE(id.ok());
  ASSERT_TRUE(Objects(*id, "outage").ok());
  ASSERT_TRUE(Eventually([&] { return Complete(*id, "outage"); }));
  // CNS loses the PVC entity, and the first full sync after that cannot query.
  vsphere::cns::VolumeMetadata m;
  m.container_cluster.cluster_id = kClusterId;
  m.entity_metadata = {{kEntityPvc, "outage", "ns1", {}, true, kClusterId, {}}};
  ASSERT_TRUE(env_.cns().UpdateVolumeMetadata(*id, m).ok());
  ASSERT_TRUE(env_.vcsim().SetCnsFault("CnsQueryVolume", "CnsFault", "injected", -1, "soap").ok());
  ASSERT_TRUE(env_.RunFullSync());
  EXPECT_EQ(env_.syncer().stats().full_sync_failures, 1);
  ASSERT_TRUE(env_.vcsim().ClearCnsFaults().ok());
  EXPECT_FALSE(env_.HasEntity(*id, kEntityPvc, "outage", "ns1"));
  ASSERT_TRUE(env_.RunFullSync());
  ASSERT_TRUE(Eventually([&] { return Complete(*id, "outage"); }));
}

}  // namespace
}  // namespace ccm::csi::syncer::testing
