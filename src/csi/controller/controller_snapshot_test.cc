// Snapshot RPCs and restores, on the in-memory seams (testing/fake_controller.h): the spec's
// rules (required fields, idempotency, NotFound, AlreadyExists, paging) and the reference's
// decisions (IDs, limits, sizes, volumes with snapshots). Against the simulator and real data:
// test/integration/csi/controller_snapshot_test.cc.
#include <string>
#include <vector>

#include "csi/controller/controller_service.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/fake_controller.h"

namespace ccm::csi::snapshot_test {
namespace {

using testing::FakeControllerCloud;
using ::testing::HasSubstr;
using Code = grpc::StatusCode;
constexpr int64_t kGiB = int64_t{1} << 30;

struct Rig {
  Rig() : cloud(std::make_shared<FakeControllerCloud>()), service(cloud) {
    volume = cloud->cns.Add("pvc-src", 1024, "datastore-1", FakeControllerCloud::kClusterId);
  }
  grpc::Status Snap(const std::string& name, const std::string& source,
                    ::csi::v1::CreateSnapshotResponse* resp = nullptr) {
    ::csi::v1::CreateSnapshotRequest req;
    req.set_name(name);
    req.set_source_volume_id(source);
    ::csi::v1::CreateSnapshotResponse local;
    grpc::ServerContext ctx;
    return service.CreateSnapshot(&ctx, &req, resp != nullptr ? resp : &local);
  }
  grpc::Status Unsnap(const std::string& id) {
    ::csi::v1::DeleteSnapshotRequest req;
    req.set_snapshot_id(id);
    ::csi::v1::DeleteSnapshotResponse resp;
    grpc::ServerContext ctx;
    return service.DeleteSnapshot(&ctx, &req, &resp);
  }
  grpc::Status List(const ::csi::v1::ListSnapshotsRequest& req,
                    ::csi::v1::ListSnapshotsResponse* resp) {
    grpc::ServerContext ctx;
    return service.ListSnapshots(&ctx, &req, resp);
  }
  grpc::Status Restore(const std::string& name, const std::string& snapshot_id, int64_t bytes,
                       ::csi::v1::CreateVolumeResponse* resp,
                       const std::function<void(::csi::v1::CreateVolumeRequest&)>& edit = {}) {
    ::csi::v1::CreateVolumeRequest req;
    req.set_name(name);
    req.mutable_capacity_range()->set_required_bytes(bytes);
    auto* cap = req.add_volume_capabilities();
    cap->mutable_mount()->set_fs_type("ext4");
    cap->mutable_access_mode()->set_mode(
        ::csi::v1::VolumeCapability::AccessMode::SINGLE_NODE_WRITER);
    req.mutable_volume_content_source()->mutable_snapshot()->set_snapshot_id(snapshot_id);
    if (edit) edit(req);
    grpc::ServerContext ctx;
    return service.CreateVolume(&ctx, &req, resp);
  }
  std::shared_ptr<FakeControllerCloud> cloud;
  ControllerService service;
  std::string volume;
};

TEST(ControllerSnapshotTest, CreateIsIdempotentOnTheNameAndFormsTheReferenceId) {
  Rig rig;
  ::csi::v1::CreateSnapshotResponse resp;
  ASSERT_TRUE(rig.Snap("snapshot-1", rig.volume, &resp).ok());
  const ::csi::v1::Snapshot& s = resp.snapshot();
  const std::vector<vsphere::cns::Snapshot> made = rig.cloud->cns.SnapshotsOfVolume(rig.volume);
  ASSERT_EQ(made.size(), 1u);
  EXPECT_EQ(s.snapshot_id(), rig.volume + "+" + made[0].snapshot_id);
  EXPECT_EQ(made[0].description, "snapshot-1-" + rig.volume);  // as the reference names it
  EXPECT_EQ(s.source_volume_id(), rig.volume);
  EXPECT_EQ(s.size_bytes(), kGiB);
  EXPECT_TRUE(s.ready_to_use());
  EXPECT_EQ(s.creation_time().seconds(), absl::ToUnixSeconds(made[0].create_time));

  ::csi::v1::CreateSnapshotResponse again;
  ASSERT_TRUE(rig.Snap("snapshot-1", rig.volume, &again).ok());
  EXPECT_EQ(again.snapshot().snapshot_id(), s.snapshot_id());
  EXPECT_EQ(again.snapshot().creation_time().seconds(), s.creation_time().seconds());
  EXPECT_EQ(rig.cloud->cns.Calls("CnsCreateSnapshots"), 1);

  const std::string other =
      rig.cloud->cns.Add("pvc-other", 1024, "datastore-1", FakeControllerCloud::kClusterId);
  grpc::Status reused = rig.Snap("snapshot-1", other);
  EXPECT_EQ(reused.error_code(), Code::ALREADY_EXISTS);
  EXPECT_THAT(reused.error_message(), HasSubstr(rig.volume));
  // Once that snapshot is gone, its name is free again; a failed create does not take a name.
  ASSERT_TRUE(rig.Unsnap(s.snapshot_id()).ok());
  EXPECT_TRUE(rig.Snap("snapshot-1", other).ok());
  rig.cloud->cns.Fail("CnsCreateSnapshots", absl::InternalError("refused"), true);
  EXPECT_FALSE(rig.Snap("snapshot-2", rig.volume).ok());
  EXPECT_TRUE(rig.Snap("snapshot-2", other).ok());
}

TEST(ControllerSnapshotTest, CreateRefusesWhatTheSpecAndTheReferenceRefuse) {
  Rig rig;
  EXPECT_EQ(rig.Snap("", rig.volume).error_code(), Code::INVALID_ARGUMENT);
  EXPECT_EQ(rig.Snap("s", "").error_code(), Code::INVALID_ARGUMENT);
  EXPECT_EQ(rig.Snap("s", "5e0c3d7a-0000-4000-8000-0000000000ff").error_code(), Code::NOT_FOUND);
  EXPECT_EQ(rig.Snap("s", "[ds1] kubevols/pvc-1.vmdk").error_code(), Code::UNIMPLEMENTED);
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(rig.Snap("s" + std::to_string(i), rig.volume).ok());
  grpc::Status full = rig.Snap("s3", rig.volume);
  EXPECT_EQ(full.error_code(), Code::FAILED_PRECONDITION);
  EXPECT_THAT(full.error_message(), HasSubstr("configured maximum (3, csi-vsphere.conf [Snapshot] "
                                              "global-max-snapshots-per-block-volume)"));
  EXPECT_EQ(rig.cloud->cns.Calls("CnsCreateSnapshots"), 3);
  rig.cloud->cfg.snapshot.global_max_per_block_volume = 4;
  EXPECT_TRUE(rig.Snap("s3", rig.volume).ok());

  // The granular limit applies on vSAN datastores only.
  rig.cloud->cfg.snapshot.vsan_max_per_block_volume = 1;
  rig.cloud->cns.SetDatastoreUrl("datastore-3", "ds:///vmfs/volumes/vsan:52f7/");
  const std::string on_vsan =
      rig.cloud->cns.Add("pvc-vsan", 1024, "datastore-3", FakeControllerCloud::kClusterId);
  ASSERT_TRUE(rig.Snap("v0", on_vsan).ok());
  EXPECT_THAT(
      rig.Snap("v1", on_vsan).error_message(),
      HasSubstr("(1, csi-vsphere.conf [Snapshot] granular-max-snapshots-per-block-volume-vsan)"));
  // A CNS failure keeps its code; nothing is made.
  rig.cloud->cfg.snapshot.global_max_per_block_volume = 5;
  rig.cloud->cns.Fail("CnsCreateSnapshots", absl::UnavailableError("vCenter restarting"), true);
  EXPECT_EQ(rig.Snap("s9", rig.volume).error_code(), Code::UNAVAILABLE);
  EXPECT_EQ(rig.cloud->cns.SnapshotsOfVolume(rig.volume).size(), 4u);
}

TEST(ControllerSnapshotTest, DeleteSucceedsForAnythingThatDoesNotExist) {
  Rig rig;
  ::csi::v1::CreateSnapshotResponse resp;
  ASSERT_TRUE(rig.Snap("snapshot-1", rig.volume, &resp).ok());
  ASSERT_TRUE(rig.Unsnap(resp.snapshot().snapshot_id()).ok());
  EXPECT_TRUE(rig.cloud->cns.SnapshotsOfVolume(rig.volume).empty());
  EXPECT_TRUE(rig.Unsnap(resp.snapshot().snapshot_id()).ok());             // gone already
  EXPECT_TRUE(rig.Unsnap("reallyfakesnapshotid").ok());                    // no such ID can exist
  EXPECT_TRUE(rig.Unsnap("5e0c3d7a-0000-4000-8000-0000000000ff+x").ok());  // nor its volume
  EXPECT_EQ(rig.Unsnap("").error_code(), Code::INVALID_ARGUMENT);
  ASSERT_TRUE(rig.Snap("snapshot-2", rig.volume, &resp).ok());
  rig.cloud->cns.Fail("CnsDeleteSnapshots", absl::UnavailableError("timeout"), true);
  EXPECT_EQ(rig.Unsnap(resp.snapshot().snapshot_id()).error_code(), Code::UNAVAILABLE);
  EXPECT_EQ(rig.cloud->cns.SnapshotsOfVolume(rig.volume).size(), 1u);
}

TEST(ControllerSnapshotTest, ListsByIdBySourceAndAllWithPaging) {
  Rig rig;
  rig.cloud->cfg.snapshot.global_max_per_block_volume = 10;
  const std::string second =
      rig.cloud->cns.Add("pvc-b", 2048, "datastore-1", FakeControllerCloud::kClusterId);
  const std::string foreign = rig.cloud->cns.Add("pvc-f", 1024, "datastore-1", "other-cluster");
  std::vector<std::string> ids;
  for (const auto& [name, volume] : std::vector<std::pair<std::string, std::string>>{
           {"a", rig.volume}, {"b", rig.volume}, {"c", second}, {"f", foreign}}) {
    ::csi::v1::CreateSnapshotResponse resp;
    ASSERT_TRUE(rig.Snap(name, volume, &resp).ok()) << name;
    ids.push_back(resp.snapshot().snapshot_id());
  }
  ::csi::v1::ListSnapshotsRequest req;
  ::csi::v1::ListSnapshotsResponse resp;
  req.set_snapshot_id(ids[2]);
  ASSERT_TRUE(rig.List(req, &resp).ok());
  ASSERT_EQ(resp.entries_size(), 1);
  EXPECT_EQ(resp.entries(0).snapshot().snapshot_id(), ids[2]);
  EXPECT_EQ(resp.entries(0).snapshot().size_bytes(), 2 * kGiB);

  for (const std::string& none : {std::string("reallyfakesnapshotid"), rig.volume + "+nope",
                                  std::string("5e0c3d7a-0000-4000-8000-0000000000ff+x")}) {
    resp.Clear();
    req.set_snapshot_id(none);
    ASSERT_TRUE(rig.List(req, &resp).ok()) << none;
    EXPECT_EQ(resp.entries_size(), 0) << none;
  }
  req.Clear();
  resp.Clear();
  req.set_source_volume_id(rig.volume);
  ASSERT_TRUE(rig.List(req, &resp).ok());
  EXPECT_EQ(resp.entries_size(), 2);

  // Every snapshot of this cluster's volumes, two per page, the token an offset.
  req.Clear();
  req.set_max_entries(2);
  std::vector<std::string> seen;
  for (int page = 0; page < 5; ++page) {
    resp.Clear();
    ASSERT_TRUE(rig.List(req, &resp).ok());
    for (const auto& e : resp.entries()) seen.push_back(e.snapshot().snapshot_id());
    if (resp.next_token().empty()) break;
    req.set_starting_token(resp.next_token());
  }
  EXPECT_THAT(seen, ::testing::UnorderedElementsAre(ids[0], ids[1], ids[2]));

  req.set_starting_token("not-a-number");
  EXPECT_EQ(rig.List(req, &resp).error_code(), Code::ABORTED);  // the spec's code
  req.Clear();
  req.set_max_entries(-1);
  EXPECT_EQ(rig.List(req, &resp).error_code(), Code::INVALID_ARGUMENT);
}

TEST(ControllerSnapshotTest, AVolumeWithSnapshotsIsNeitherDeletedNorExpanded) {
  Rig rig;
  ::csi::v1::CreateSnapshotResponse snap;
  ASSERT_TRUE(rig.Snap("snapshot-1", rig.volume, &snap).ok());
  ::csi::v1::DeleteVolumeRequest del;
  del.set_volume_id(rig.volume);
  ::csi::v1::DeleteVolumeResponse del_resp;
  grpc::ServerContext ctx;
  grpc::Status d = rig.service.DeleteVolume(&ctx, &del, &del_resp);
  EXPECT_EQ(d.error_code(), Code::FAILED_PRECONDITION);
  EXPECT_THAT(d.error_message(), HasSubstr(snap.snapshot().snapshot_id()));
  EXPECT_EQ(rig.cloud->cns.Calls("CnsDeleteVolume"), 0);

  ::csi::v1::ControllerExpandVolumeRequest grow;
  grow.set_volume_id(rig.volume);
  grow.mutable_capacity_range()->set_required_bytes(2 * kGiB);
  ::csi::v1::ControllerExpandVolumeResponse grow_resp;
  grpc::ServerContext ctx2;
  grpc::Status e = rig.service.ControllerExpandVolume(&ctx2, &grow, &grow_resp);
  EXPECT_EQ(e.error_code(), Code::FAILED_PRECONDITION);
  EXPECT_THAT(e.error_message(), HasSubstr("before you expand it"));
  EXPECT_EQ(rig.cloud->cns.Calls("CnsExtendVolume"), 0);

  ASSERT_TRUE(rig.Unsnap(snap.snapshot().snapshot_id()).ok());
  grpc::ServerContext ctx3;
  EXPECT_TRUE(rig.service.DeleteVolume(&ctx3, &del, &del_resp).ok());
  EXPECT_FALSE(rig.cloud->cns.Get(rig.volume).has_value());
}

TEST(ControllerSnapshotTest, RestoreMakesTheVolumeWhereTheSnapshotIs) {
  Rig rig;
  ::csi::v1::CreateSnapshotResponse snap;
  ASSERT_TRUE(rig.Snap("snapshot-1", rig.volume, &snap).ok());
  const std::string id = snap.snapshot().snapshot_id();
  ::csi::v1::CreateVolumeResponse resp;
  ASSERT_TRUE(rig.Restore("pvc-restored", id, kGiB, &resp).ok());
  EXPECT_EQ(resp.volume().capacity_bytes(), kGiB);
  EXPECT_EQ(resp.volume().content_source().snapshot().snapshot_id(), id);
  auto made = rig.cloud->cns.Get(resp.volume().volume_id());
  ASSERT_TRUE(made.has_value());
  EXPECT_EQ(made->datastore, "datastore-1");
  // Idempotent on the name; the answer names its source again.
  ::csi::v1::CreateVolumeResponse again;
  ASSERT_TRUE(rig.Restore("pvc-restored", id, kGiB, &again).ok());
  EXPECT_EQ(again.volume().volume_id(), resp.volume().volume_id());
  EXPECT_EQ(again.volume().content_source().snapshot().snapshot_id(), id);
  EXPECT_EQ(rig.cloud->cns.Calls("CnsCreateVolume"), 1);
}

TEST(ControllerSnapshotTest, RestoreRefusals) {
  Rig rig;
  ::csi::v1::CreateSnapshotResponse snap;
  ASSERT_TRUE(rig.Snap("snapshot-1", rig.volume, &snap).ok());
  const std::string id = snap.snapshot().snapshot_id();
  struct Case {
    std::string name, snapshot;
    int64_t bytes;
    std::function<void(::csi::v1::CreateVolumeRequest&)> edit;
    Code code;
    std::string message;
  };
  auto zone_b = [](::csi::v1::CreateVolumeRequest& r) {
    auto* t = r.mutable_accessibility_requirements()->add_requisite();
    (*t->mutable_segments())["failure-domain.beta.kubernetes.io/zone"] = "zone-b";
  };
  const std::vector<Case> cases = {
      {"smaller", id, kGiB / 2, {}, Code::OUT_OF_RANGE, "snapshot size mismatch"},
      {"larger", id, 2 * kGiB, {}, Code::INVALID_ARGUMENT, "snapshot size mismatch"},
      {"unknown snapshot", rig.volume + "+nope", kGiB, {}, Code::NOT_FOUND, "does not exist"},
      {"unknown volume",
       "5e0c3d7a-0000-4000-8000-0000000000ff+x",
       kGiB,
       {},
       Code::NOT_FOUND,
       "its volume does not exist"},
      {"not this driver's", "reallyfakesnapshotid", kGiB, {}, Code::NOT_FOUND, "<volume ID>+"},
      {"empty", "", kGiB, {}, Code::INVALID_ARGUMENT, "snapshot_id is required"},
      {"another datastoreurl", id, kGiB,
       [](::csi::v1::CreateVolumeRequest& r) {
         (*r.mutable_parameters())["datastoreurl"] = "ds:///vmfs/volumes/shared-all/";
       },
       Code::INVALID_ARGUMENT, "is not the snapshot's datastore"},
      {"unreachable from the requested zone", id, kGiB, zone_b, Code::RESOURCE_EXHAUSTED,
       "not accessible from the requested topology"},
      {"a volume clone", "", kGiB,
       [&](::csi::v1::CreateVolumeRequest& r) {
         r.mutable_volume_content_source()->mutable_volume()->set_volume_id(rig.volume);
       },
       Code::INVALID_ARGUMENT, "volume clones are not"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    ::csi::v1::CreateVolumeResponse resp;
    grpc::Status s = rig.Restore("pvc-" + c.name, c.snapshot, c.bytes, &resp, c.edit);
    EXPECT_EQ(s.error_code(), c.code) << s.error_message();
    EXPECT_THAT(s.error_message(), HasSubstr(c.message));
  }
  EXPECT_EQ(rig.cloud->cns.Calls("CnsCreateVolume"), 0);
}

TEST(ControllerSnapshotTest, SnapshotCapabilitiesAreAnnounced) {
  Rig rig;
  ::csi::v1::ControllerGetCapabilitiesRequest req;
  ::csi::v1::ControllerGetCapabilitiesResponse resp;
  grpc::ServerContext ctx;
  ASSERT_TRUE(rig.service.ControllerGetCapabilities(&ctx, &req, &resp).ok());
  std::vector<int> types;
  for (const auto& c : resp.capabilities()) types.push_back(c.rpc().type());
  using Cap = ::csi::v1::ControllerServiceCapability::RPC;
  EXPECT_THAT(types, ::testing::IsSupersetOf({Cap::CREATE_DELETE_SNAPSHOT, Cap::LIST_SNAPSHOTS}));
  EXPECT_THAT(types, ::testing::Not(::testing::Contains(Cap::CLONE_VOLUME)));
}

std::vector<int> CapabilityTypes(ControllerService& service) {
  ::csi::v1::ControllerGetCapabilitiesRequest req;
  ::csi::v1::ControllerGetCapabilitiesResponse resp;
  grpc::ServerContext ctx;
  EXPECT_TRUE(service.ControllerGetCapabilities(&ctx, &req, &resp).ok());
  std::vector<int> types;
  for (const auto& c : resp.capabilities()) types.push_back(c.rpc().type());
  return types;
}

// Issue 42 item 6: a vCenter before 7.0U3 has no CNS snapshot calls. Its volumes are deleted
// and expanded without asking for snapshots, no snapshot capability is announced, and the
// snapshot RPCs answer as for a volume that cannot have any.
TEST(ControllerSnapshotTest, AVcenterWithoutTheSnapshotApiStillDeletesAndExpands) {
  Rig rig;
  rig.cloud->cns.SetSnapshotApi(false);
  using Cap = ::csi::v1::ControllerServiceCapability::RPC;
  std::vector<int> types = CapabilityTypes(rig.service);
  EXPECT_THAT(types, ::testing::Not(::testing::Contains(Cap::CREATE_DELETE_SNAPSHOT)));
  EXPECT_THAT(types, ::testing::Not(::testing::Contains(Cap::LIST_SNAPSHOTS)));
  EXPECT_THAT(types, ::testing::Contains(Cap::EXPAND_VOLUME));

  grpc::Status snap = rig.Snap("snapshot-1", rig.volume);
  EXPECT_EQ(snap.error_code(), Code::FAILED_PRECONDITION);
  EXPECT_THAT(snap.error_message(), HasSubstr("has no CNS snapshot API (vCenter 7.0U3"));
  EXPECT_TRUE(rig.Unsnap(rig.volume + "+0d8f6f3e-no-such-snapshot").ok());
  ::csi::v1::ListSnapshotsRequest list;
  ::csi::v1::ListSnapshotsResponse listed;
  EXPECT_TRUE(rig.List(list, &listed).ok());
  EXPECT_EQ(listed.entries_size(), 0);
  list.set_source_volume_id(rig.volume);
  EXPECT_TRUE(rig.List(list, &listed).ok());
  EXPECT_EQ(listed.entries_size(), 0);
  ::csi::v1::CreateVolumeResponse restored;
  EXPECT_EQ(rig.Restore("pvc-restore", rig.volume + "+snap-1", kGiB, &restored).error_code(),
            Code::NOT_FOUND);

  ::csi::v1::ControllerExpandVolumeRequest grow;
  grow.set_volume_id(rig.volume);
  grow.mutable_capacity_range()->set_required_bytes(2 * kGiB);
  ::csi::v1::ControllerExpandVolumeResponse grow_resp;
  grpc::ServerContext ctx;
  grpc::Status e = rig.service.ControllerExpandVolume(&ctx, &grow, &grow_resp);
  EXPECT_TRUE(e.ok()) << e.error_message();
  ::csi::v1::DeleteVolumeRequest del;
  del.set_volume_id(rig.volume);
  ::csi::v1::DeleteVolumeResponse del_resp;
  grpc::ServerContext ctx2;
  grpc::Status d = rig.service.DeleteVolume(&ctx2, &del, &del_resp);
  EXPECT_TRUE(d.ok()) << d.error_message();
  EXPECT_FALSE(rig.cloud->cns.Get(rig.volume).has_value());
  EXPECT_EQ(rig.cloud->cns.Calls("CnsQuerySnapshots"), 0);  // decided by the API version
}

// One a vCenter refuses though its version says it has the API: the delete goes on.
TEST(ControllerSnapshotTest, ASnapshotQueryRefusedAsUnknownDoesNotBlockTheDelete) {
  Rig rig;
  rig.cloud->cns.Fail("CnsQuerySnapshots",
                      absl::UnimplementedError("this vCenter has no CNS snapshot API"));
  ::csi::v1::DeleteVolumeRequest del;
  del.set_volume_id(rig.volume);
  ::csi::v1::DeleteVolumeResponse del_resp;
  grpc::ServerContext ctx;
  grpc::Status d = rig.service.DeleteVolume(&ctx, &del, &del_resp);
  EXPECT_TRUE(d.ok()) << d.error_message();
  EXPECT_FALSE(rig.cloud->cns.Get(rig.volume).has_value());
}

}  // namespace
}  // namespace ccm::csi::snapshot_test
