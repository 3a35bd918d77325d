// Issue 42 item 6: a vCenter before 7.0U3 (the simulator as vCenter 7.0.2, whose CNS refuses the
// snapshot calls as methods it does not know). Every volume operation the driver had before
// snapshots works there; no snapshot capability is announced; the snapshot RPCs answer as for
// volumes that cannot have snapshots; nothing asks CNS for snapshots.
#include "absl/strings/str_replace.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "integration/csi/controller_fixture.h"

namespace ccm::csi::testing {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::Not;
using Cap = ::csi::v1::ControllerServiceCapability::RPC;

class ControllerOldVcenterTest : public ControllerFixture<ControllerOldVcenterTest> {
 public:
  static std::string Spec() {
    return absl::StrReplaceAll(ZonesSpec(), {{R"("users":)", R"("vcenter_version": "7.0.2",
  "users":)"}});
  }
};

TEST_F(ControllerOldVcenterTest, NoSnapshotCapabilityIsAnnounced) {
  grpc::ClientContext ctx;
  ::csi::v1::ControllerGetCapabilitiesRequest req;
  ::csi::v1::ControllerGetCapabilitiesResponse resp;
  ASSERT_TRUE(c().ControllerGetCapabilities(&ctx, req, &resp).ok());
  std::vector<int> types;
  for (const auto& cap : resp.capabilities()) types.push_back(cap.rpc().type());
  EXPECT_THAT(types, Not(Contains(Cap::CREATE_DELETE_SNAPSHOT)));
  EXPECT_THAT(types, Not(Contains(Cap::LIST_SNAPSHOTS)));
  EXPECT_THAT(types, Contains(Cap::EXPAND_VOLUME));
}

TEST_F(ControllerOldVcenterTest, CreateAttachExpandDetachDeleteWork) {
  ASSERT_TRUE(env().sim().ResetCounters().ok());
  const std::string id = MustCreate("pvc-old-vc");
  ASSERT_FALSE(id.empty());
  const std::string node = env().VmUuid("node-a1");
  ASSERT_TRUE(Publish(PubReq(id, node)).ok());

  ::csi::v1::ControllerExpandVolumeRequest grow;
  grow.set_volume_id(id);
  grow.mutable_capacity_range()->set_required_bytes(2 * kGiB);
  ::csi::v1::ControllerExpandVolumeResponse grown;
  grpc::ClientContext ctx;
  grpc::Status e = c().ControllerExpandVolume(&ctx, grow, &grown);
  ASSERT_TRUE(e.ok()) << e.error_message();  // online: attached
  EXPECT_EQ(grown.capacity_bytes(), 2 * kGiB);

  ASSERT_TRUE(Unpublish(id, node).ok());
  grpc::Status d = Delete(id);
  ASSERT_TRUE(d.ok()) << d.error_message();
  EXPECT_FALSE(env().CnsVolume(id).ok());  // gone from CNS
  auto calls = env().sim().CnsCounters();
  ASSERT_TRUE(calls.ok()) << calls.status();
  EXPECT_EQ((*calls)["CnsQuerySnapshots"], 0);  // decided by the API version, not by asking
  EXPECT_EQ((*calls)["CnsDeleteVolume"], 1);
}

TEST_F(ControllerOldVcenterTest, SnapshotCallsAnswerAsForVolumesWithoutSnapshots) {
  const std::string id = MustCreate("pvc-old-vc-snap");
  ASSERT_FALSE(id.empty());
  grpc::ClientContext ctx;
  ::csi::v1::CreateSnapshotRequest snap;
  snap.set_name("snapshot-1");
  snap.set_source_volume_id(id);
  ::csi::v1::CreateSnapshotResponse snapped;
  grpc::Status s = c().CreateSnapshot(&ctx, snap, &snapped);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_THAT(s.error_message(), HasSubstr("has no CNS snapshot API (vCenter 7.0U3"));

  grpc::ClientContext list_ctx;
  ::csi::v1::ListSnapshotsRequest list;
  ::csi::v1::ListSnapshotsResponse listed;
  ASSERT_TRUE(c().ListSnapshots(&list_ctx, list, &listed).ok());
  EXPECT_EQ(listed.entries_size(), 0);

  ::csi::v1::CreateVolumeRequest restore = CreateReq("pvc-restore", kGiB);
  restore.mutable_volume_content_source()->mutable_snapshot()->set_snapshot_id(id + "+snap-1");
  EXPECT_EQ(Create(restore).error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_TRUE(Delete(id).ok());
}

}  // namespace
}  // namespace ccm::csi::testing
