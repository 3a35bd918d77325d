// vCenter versions. Issue 42 item 6: a vCenter before 7.0U3 (the simulator as vCenter 7.0.2, whose
// CNS refuses the snapshot calls as methods it does not know). Every volume operation the driver
// had before snapshots works there; no snapshot capability is announced; the snapshot RPCs answer
// as for volumes that cannot have snapshots; nothing asks CNS for snapshots.
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

// Issue 54 item 2: before 7.0U2 vCenter grows no attached disk: refused up front, naming the
// node and the version (as the reference); detached, the same expansion works.
class ControllerVcenter701Test : public ControllerFixture<ControllerVcenter701Test> {
 public:
  static std::string Spec() {
    return absl::StrReplaceAll(ZonesSpec(), {{R"("users":)", R"("vcenter_version": "7.0.1",
  "users":)"}});
  }
};

TEST_F(ControllerVcenter701Test, OnlineExpansionIsRefusedOfflineWorks) {
  const std::string id = MustCreate("pvc-701");
  ASSERT_FALSE(id.empty());
  const std::string node = env().VmUuid("node-a1");
  ASSERT_TRUE(Publish(PubReq(id, node)).ok());
  ::csi::v1::ControllerExpandVolumeRequest grow;
  grow.set_volume_id(id);
  grow.mutable_capacity_range()->set_required_bytes(2 * kGiB);
  ::csi::v1::ControllerExpandVolumeResponse grown;
  grpc::ClientContext online_ctx;
  grpc::Status online = c().ControllerExpandVolume(&online_ctx, grow, &grown);
  EXPECT_EQ(online.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_THAT(online.error_message(), HasSubstr("attached to node " + node));
  EXPECT_THAT(online.error_message(), HasSubstr("API 7.0.1"));
  EXPECT_THAT(online.error_message(), HasSubstr("7.0 Update 2"));
  EXPECT_EQ(env().CnsVolume(id)->capacity_mb, 1024);  // nothing sent to CNS

  ASSERT_TRUE(Unpublish(id, node).ok());
  grpc::ClientContext offline_ctx;
  grpc::Status offline = c().ControllerExpandVolume(&offline_ctx, grow, &grown);
  ASSERT_TRUE(offline.ok()) << offline.error_message();
  EXPECT_EQ(grown.capacity_bytes(), 2 * kGiB);
  ASSERT_TRUE(Delete(id).ok());
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

// Issue 54 item 7: a vCenter before 9.1 refuses a create spec's volumeId (the simulator as it
// does): every create of the suites above proves none is sent there.
TEST_F(ControllerVcenter701Test, CnsRefusesATransactionsVolumeId) {
  vsphere::cns::CreateSpec spec;
  spec.name = "pvc-with-an-id";
  spec.capacity_mb = 1024;
  spec.volume_id = "00000000-0000-4000-8000-0000000000b1";
  absl::StatusOr<vsphere::cns::CreateResult> r =
      env().backend().vcenters().front().cns->CreateVolume(spec);
  EXPECT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("volumeId"));
  EXPECT_FALSE(env().CnsVolume(spec.volume_id).ok());
}

// CNS transactions from vCenter 9.1: the volume ID is the UID of the PV name; a create CNS has
// under that ID already is answered from it, and a foreign volume of the ID is ALREADY_EXISTS.
class ControllerVcenter91Test : public ControllerFixture<ControllerVcenter91Test> {
 public:
  static std::string Spec() {
    return absl::StrReplaceAll(ZonesSpec(), {{R"("users":)", R"("vcenter_version": "9.1.0",
  "users":)"}});
  }
};

TEST_F(ControllerVcenter91Test, TheVolumeIdIsTheUidOfTheName) {
  const std::string uid = "7d2f6d43-5a0c-4f3e-9c55-0d3c2a9b1e11";
  const std::string id = MustCreate("pvc-" + uid);
  EXPECT_EQ(id, uid);
  EXPECT_EQ(MustCreate("pvc-" + uid), uid);  // the same name again: the same volume

  // CNS refuses the ID a second time (CnsVolumeAlreadyExistsFault): another volume's name
  // carrying it is ALREADY_EXISTS naming the volume that has it; nothing is deleted.
  vsphere::cns::CreateSpec spec;
  spec.name = "not-a-pv-name";
  spec.capacity_mb = 1024;
  spec.volume_id = "00000000-0000-4000-8000-0000000000c1";
  ASSERT_TRUE(env().backend().vcenters().front().cns->CreateVolume(spec).ok());
  ::csi::v1::CreateVolumeResponse resp;
  grpc::Status s = Create(CreateReq("pvc-" + spec.volume_id, kGiB), &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::ALREADY_EXISTS) << s.error_message();
  EXPECT_THAT(s.error_message(), HasSubstr("named \"not-a-pv-name\""));
  EXPECT_TRUE(env().CnsVolume(spec.volume_id).ok());
  EXPECT_TRUE(Delete(id).ok());
}

}  // namespace
}  // namespace ccm::csi::testing
