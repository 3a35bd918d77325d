// Topology-aware placement over the real socket (WaitForFirstConsumer and allowedTopologies as
// the external-provisioner sends them), and a vCenter outage: Unavailable, nothing wrongly
// reported gone, service back when vCenter is.
#include "absl/strings/str_cat.h"
#include "controller_env.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "integration/csi/controller_calls.h"
#include "testing/eventually.h"

namespace ccm::csi::testing {
namespace {

::csi::v1::Topology ZoneTopology(const std::string& zone) {
  ::csi::v1::Topology t;
  (*t.mutable_segments())[kZoneKey] = zone;
  (*t.mutable_segments())[kRegionKey] = "region-1";
  return t;
}

class ControllerZonesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto env = ControllerEnv::Start(ZonesSpec());
    ASSERT_TRUE(env.ok()) << env.status();
    env_ = *std::move(env);
  }
  grpc::Status Create(const ::csi::v1::CreateVolumeRequest& req,
                      ::csi::v1::CreateVolumeResponse* resp) {
    return CallCreate(env_->controller(), req, resp);
  }
  std::unique_ptr<ControllerEnv> env_;
};

TEST_F(ControllerZonesTest, WaitForFirstConsumerInZoneBGetsADatastoreOfZoneBOnly) {
  // --strict-topology with the selected node in zone-b: requisite = preferred = zone-b.
  auto req = CreateReq("pvc-zone-b", 5 * kGiB);
  *req.mutable_accessibility_requirements()->add_requisite() = ZoneTopology("zone-b");
  *req.mutable_accessibility_requirements()->add_preferred() = ZoneTopology("zone-b");
  ::csi::v1::CreateVolumeResponse resp;
  grpc::Status s = Create(req, &resp);
  ASSERT_TRUE(s.ok()) << s.error_message();
  auto cns = env_->CnsVolume(resp.volume().volume_id());
  ASSERT_TRUE(cns.ok());
  EXPECT_EQ(cns->datastore, env_->DatastoreMoid("ds-b"));  // mounted in zone-b only
  ASSERT_EQ(resp.volume().accessible_topology_size(), 1);
  EXPECT_EQ(resp.volume().accessible_topology(0).segments().at(kZoneKey), "zone-b");
  EXPECT_EQ(resp.volume().accessible_topology(0).segments().at(kRegionKey), "region-1");
}

TEST_F(ControllerZonesTest, PreferredZoneFirstWithinTheRequisiteOnes) {
  // Immediate binding with allowedTopologies zone-a and zone-b, zone-a preferred.
  auto req = CreateReq("pvc-zone-pref", kGiB);
  *req.mutable_accessibility_requirements()->add_requisite() = ZoneTopology("zone-b");
  *req.mutable_accessibility_requirements()->add_requisite() = ZoneTopology("zone-a");
  *req.mutable_accessibility_requirements()->add_preferred() = ZoneTopology("zone-a");
  ::csi::v1::CreateVolumeResponse resp;
  ASSERT_TRUE(Create(req, &resp).ok());
  EXPECT_EQ(env_->CnsVolume(resp.volume().volume_id())->datastore, env_->DatastoreMoid("ds-a"));
  ASSERT_EQ(resp.volume().accessible_topology_size(), 1);
  EXPECT_EQ(resp.volume().accessible_topology(0).segments().at(kZoneKey), "zone-a");
}

TEST_F(ControllerZonesTest, AZoneWithoutDatastoresIsResourceExhausted) {
  auto req = CreateReq("pvc-zone-c", kGiB);
  *req.mutable_accessibility_requirements()->add_requisite() = ZoneTopology("zone-c");
  ::csi::v1::CreateVolumeResponse resp;
  EXPECT_EQ(Create(req, &resp).error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
}

TEST_F(ControllerZonesTest, FullZoneDatastoreFallsBackToTheNextReachableOne) {
  // ds-b refuses (CNS fault on the first create): the next zone-b choice, ds-shared (mounted by
  // every host of both zones), takes it.
  ASSERT_TRUE(
      env_->sim()
          .SetCnsFault("CnsCreateVolume", "CnsFault", "insufficient disk space", 1, "volume")
          .ok());
  auto req = CreateReq("pvc-zone-b-fallback", kGiB);
  *req.mutable_accessibility_requirements()->add_requisite() = ZoneTopology("zone-b");
  ::csi::v1::CreateVolumeResponse resp;
  grpc::Status s = Create(req, &resp);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(env_->CnsVolume(resp.volume().volume_id())->datastore,
            env_->DatastoreMoid("ds-shared"));
  ASSERT_EQ(resp.volume().accessible_topology_size(), 2);
  EXPECT_EQ(resp.volume().accessible_topology(0).segments().at(kZoneKey), "zone-a");
  EXPECT_EQ(resp.volume().accessible_topology(1).segments().at(kZoneKey), "zone-b");
}

TEST_F(ControllerZonesTest, VCenterDownIsUnavailableAndNothingIsLost) {
  ::csi::v1::CreateVolumeResponse made;
  ASSERT_TRUE(Create(CreateReq("pvc-before-outage", kGiB), &made).ok());
  const std::string id = made.volume().volume_id();
  env_->sim().Stop();

  ::csi::v1::CreateVolumeResponse resp;
  EXPECT_EQ(Create(CreateReq("pvc-during-outage", kGiB), &resp).error_code(),
            grpc::StatusCode::UNAVAILABLE);
  {  // Delete must not report success for a volume it could not delete.
    grpc::ClientContext ctx;
    ::csi::v1::DeleteVolumeRequest req;
    req.set_volume_id(id);
    ::csi::v1::DeleteVolumeResponse r;
    EXPECT_EQ(env_->controller().DeleteVolume(&ctx, req, &r).error_code(),
              grpc::StatusCode::UNAVAILABLE);
  }
  {  // Publish must not say the volume or the node is gone.
    grpc::ClientContext ctx;
    ::csi::v1::ControllerPublishVolumeRequest req;
    req.set_volume_id(id);
    req.set_node_id(env_->VmUuid("node-a1"));
    *req.mutable_volume_capability() = MountCap();
    ::csi::v1::ControllerPublishVolumeResponse r;
    EXPECT_EQ(env_->controller().ControllerPublishVolume(&ctx, req, &r).error_code(),
              grpc::StatusCode::UNAVAILABLE);
  }
  {  // ListVolumes cannot list: Unavailable, not an empty list.
    grpc::ClientContext ctx;
    ::csi::v1::ListVolumesResponse r;
    EXPECT_EQ(env_->controller().ListVolumes(&ctx, {}, &r).error_code(),
              grpc::StatusCode::UNAVAILABLE);
  }
  // GetCapacity is served from the inventory kept in memory.
  {
    grpc::ClientContext ctx;
    ::csi::v1::GetCapacityResponse r;
    ASSERT_TRUE(env_->controller().GetCapacity(&ctx, {}, &r).ok());
    EXPECT_GT(r.available_capacity(), 0);
  }
  // Probe reports the process's own health: ready (the livenessprobe sidecar must not restart
  // the controller for an outage); the vCenter's state says what is wrong.
  ASSERT_TRUE(ccm::testing::Eventually([&] { return !env_->backend().Ready(); }));
  EXPECT_FALSE(env_->backend().VCenterHealth().at("vc1").ok());
  {
    grpc::ClientContext ctx;
    ::csi::v1::ProbeResponse r;
    ASSERT_TRUE(env_->identity().Probe(&ctx, {}, &r).ok());
    EXPECT_TRUE(r.ready().value());
  }

  // vCenter back (a restarted simulator: same inventory, CNS volumes of the old process gone).
  ASSERT_TRUE(env_->sim().Restart().ok());
  ASSERT_TRUE(ccm::testing::Eventually([&] { return env_->backend().Ready(); }, absl::Seconds(60)));
  // The restarted simulator registered its datastores anew (other MOIDs): the first attempt
  // may meet the old ones, answered Unavailable while the inventory is read again.
  grpc::Status s;
  EXPECT_TRUE(ccm::testing::Eventually([&] {
    s = Create(CreateReq("pvc-during-outage", kGiB), &resp);
    EXPECT_TRUE(s.ok() || s.error_code() == grpc::StatusCode::UNAVAILABLE) << s.error_message();
    return s.ok();
  }));
  auto cns = env_->CnsVolume(resp.volume().volume_id());
  EXPECT_TRUE(cns.ok()) << cns.status();
}

}  // namespace
}  // namespace ccm::csi::testing
