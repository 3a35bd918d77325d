// The Controller service's CSI spec rules over the real gRPC socket, on the simulator's CNS:
// CreateVolume, DeleteVolume, ValidateVolumeCapabilities, ListVolumes, ControllerGetCapabilities,
// CreateSnapshot, DeleteSnapshot, ListSnapshots, a restore, and Aborted for a concurrent operation
// on the same volume.
#include <sys/stat.h>

#include <set>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "csi/controller/controller_plugin.h"
#include "csi/core/constants.h"
#include "csi/migration/registrar.h"
#include "csi/server/rpc_metrics.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "integration/csi/controller_fixture.h"
#include "testing/eventually.h"

namespace ccm::csi::testing {
namespace {

using ::testing::HasSubstr;
constexpr int64_t kMiB = 1024 * 1024;

class ControllerConformanceTest : public ControllerFixture<ControllerConformanceTest> {
 protected:
  static grpc::Status Snap(const std::string& name, const std::string& source,
                           ::csi::v1::CreateSnapshotResponse* resp) {
    grpc::ClientContext ctx;
    ::csi::v1::CreateSnapshotRequest req;
    req.set_name(name);
    req.set_source_volume_id(source);
    return c().CreateSnapshot(&ctx, req, resp);
  }

  static grpc::Status Unsnap(const std::string& id) {
    grpc::ClientContext ctx;
    ::csi::v1::DeleteSnapshotRequest req;
    req.set_snapshot_id(id);
    ::csi::v1::DeleteSnapshotResponse resp;
    return c().DeleteSnapshot(&ctx, req, &resp);
  }

  static grpc::Status ListSnaps(const ::csi::v1::ListSnapshotsRequest& req,
                                ::csi::v1::ListSnapshotsResponse* resp) {
    grpc::ClientContext ctx;
    return c().ListSnapshots(&ctx, req, resp);
  }
};

// ---- CreateVolume ----

TEST_F(ControllerConformanceTest, CreateWithoutNameIsInvalidArgument) {
  grpc::Status s = Create(CreateReq("", kGiB));
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("name"));
}

TEST_F(ControllerConformanceTest, CreateWithoutCapabilitiesIsInvalidArgument) {
  auto req = CreateReq("pvc-no-caps", kGiB);
  req.clear_volume_capabilities();
  EXPECT_EQ(Create(req).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
}

// A file volume needs a vSAN datastore with file services: none here (VMFS only).
TEST_F(ControllerConformanceTest, CreateMultiNodeWriterWithoutVsanIsFailedPrecondition) {
  auto req = CreateReq("pvc-rwx", kGiB);
  req.mutable_volume_capabilities(0)->mutable_access_mode()->set_mode(
      ::csi::v1::VolumeCapability::AccessMode::MULTI_NODE_MULTI_WRITER);
  grpc::Status s = Create(req);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_THAT(s.error_message(), HasSubstr("file volumes are vSAN file shares"));
  req.mutable_volume_capabilities(0)->mutable_block();
  EXPECT_EQ(Create(req).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
}

TEST_F(ControllerConformanceTest, CreateWithUnknownParameterIsInvalidArgumentNamingIt) {
  auto req = CreateReq("pvc-bad-param", kGiB);
  (*req.mutable_parameters())["diskspeed"] = "fast";
  grpc::Status s = Create(req);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("diskspeed"));
}

TEST_F(ControllerConformanceTest, CreateWithLimitBelowTheRoundedSizeIsOutOfRange) {
  auto req = CreateReq("pvc-out-of-range", kMiB + 1);
  req.mutable_capacity_range()->set_limit_bytes(kMiB + 1);  // rounds up to 2 MiB > limit
  EXPECT_EQ(Create(req).error_code(), grpc::StatusCode::OUT_OF_RANGE);
}

TEST_F(ControllerConformanceTest, CreateReturnsRoundedSizeContextAndTopology) {
  ::csi::v1::CreateVolumeResponse resp;
  ASSERT_TRUE(Create(CreateReq("pvc-shape", 3 * kMiB / 2), &resp).ok());
  EXPECT_EQ(resp.volume().capacity_bytes(), 2 * kMiB);
  EXPECT_EQ(resp.volume().volume_context().at("type"), kDiskTypeBlockVolume);
  ASSERT_GE(resp.volume().accessible_topology_size(), 1);
  EXPECT_EQ(resp.volume().accessible_topology(0).segments().at(kRegionKey), "region-1");
  auto cns = env().CnsVolume(resp.volume().volume_id());
  ASSERT_TRUE(cns.ok()) << cns.status();
  EXPECT_EQ(cns->name, "pvc-shape");
  EXPECT_EQ(cns->capacity_mb, 2);
  EXPECT_EQ(cns->cluster_id, "test-cluster");  // the container cluster of the config
}

TEST_F(ControllerConformanceTest, CreateSameNameTwiceReturnsTheSameVolume) {
  ::csi::v1::CreateVolumeResponse a, b;
  ASSERT_TRUE(Create(CreateReq("pvc-twice", kGiB), &a).ok());
  ASSERT_TRUE(Create(CreateReq("pvc-twice", kGiB), &b).ok());
  EXPECT_EQ(a.volume().volume_id(), b.volume().volume_id());
  EXPECT_EQ(b.volume().capacity_bytes(), kGiB);
  EXPECT_EQ(a.volume().accessible_topology_size(), b.volume().accessible_topology_size());
  auto volumes = env().sim().CnsVolumes();
  ASSERT_TRUE(volumes.ok());
  EXPECT_EQ(std::count_if(volumes->begin(), volumes->end(),
                          [](const auto& v) { return v.name == "pvc-twice"; }),
            1);
}

TEST_F(ControllerConformanceTest, CreateSameNameWithIncompatibleSizeIsAlreadyExists) {
  MustCreate("pvc-resized", kGiB);
  grpc::Status s = Create(CreateReq("pvc-resized", 2 * kGiB));
  EXPECT_EQ(s.error_code(), grpc::StatusCode::ALREADY_EXISTS);
  // A smaller request with a limit the volume exceeds is incompatible too.
  auto req = CreateReq("pvc-resized", kMiB);
  req.mutable_capacity_range()->set_limit_bytes(10 * kMiB);
  EXPECT_EQ(Create(req).error_code(), grpc::StatusCode::ALREADY_EXISTS);
}

TEST_F(ControllerConformanceTest, CreateLargerThanAnyDatastoreIsResourceExhausted) {
  grpc::Status s = Create(CreateReq("pvc-huge", 1024 * kGiB));
  EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << s.error_message();
}

TEST_F(ControllerConformanceTest, CreateWithDatastoreUrlPlacesThere) {
  const std::string url = env().DatastoreUrl("ds-shared");
  ASSERT_FALSE(url.empty());
  auto req = CreateReq("pvc-on-ds-shared", kGiB);
  (*req.mutable_parameters())["DatastoreURL"] = url;  // keys are case-insensitive
  ::csi::v1::CreateVolumeResponse resp;
  ASSERT_TRUE(Create(req, &resp).ok());
  auto cns = env().CnsVolume(resp.volume().volume_id());
  ASSERT_TRUE(cns.ok());
  EXPECT_EQ(cns->datastore, env().DatastoreMoid("ds-shared"));
}

TEST_F(ControllerConformanceTest, CreateOnADatastoreUrlSomeNodesCannotReachIsRefused) {
  // ds-b is mounted by zone-b's host only: a volume there would not attach to node-a1/node-a2.
  auto req = CreateReq("pvc-on-ds-b", kGiB);
  (*req.mutable_parameters())["datastoreurl"] = env().DatastoreUrl("ds-b");
  grpc::Status s = Create(req);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION) << s.error_message();
  EXPECT_THAT(s.error_message(), ::testing::AllOf(::testing::HasSubstr("ds-b"),
                                                  ::testing::HasSubstr("zone-a-host-0")));
}

TEST_F(ControllerConformanceTest, UnconstrainedVolumesGoWhereEveryNodeVmsHostMountsThem) {
  // ds-a has the most free space, datastore1 is mounted by one host: neither is shared by every
  // node VM's host, ds-shared is.
  ::csi::v1::CreateVolumeResponse resp;
  ASSERT_TRUE(Create(CreateReq("pvc-unconstrained", kGiB), &resp).ok());
  auto cns = env().CnsVolume(resp.volume().volume_id());
  ASSERT_TRUE(cns.ok());
  EXPECT_EQ(cns->datastore, env().DatastoreMoid("ds-shared"));
}

TEST_F(ControllerConformanceTest, VolumeOperationsAreInTheReferencesHistograms) {
  MustCreate("pvc-metrics");
  ASSERT_FALSE(Create(CreateReq("", kGiB)).ok());
  auto* csi_ops = env().registry().Find("vsphere_csi_volume_ops_histogram");
  ASSERT_NE(csi_ops, nullptr);
  EXPECT_GE(csi_ops->Count({"block", "create-volume", "pass", ""}), 1u);
  EXPECT_GE(csi_ops->Count({"block", "create-volume", "fail", "csi.fault.InvalidArgument"}), 1u);
  auto* cns_ops = env().registry().Find("vsphere_cns_volume_ops_histogram");
  ASSERT_NE(cns_ops, nullptr);
  EXPECT_GE(cns_ops->Count({"create-volume", "pass"}), 1u);
  EXPECT_GE(cns_ops->Count({"query-volume", "pass"}), 1u);
  // Issue 42 item 9: a fault vCenter reported is labelled with its type, as the reference does,
  // and the label's way to the metrics (trailing metadata) never reaches the client.
  ASSERT_TRUE(env().sim().SetCnsFault("CnsCreateVolume", "CnsFault", "injected", -1, "task").ok());
  grpc::ClientContext ctx;
  ::csi::v1::CreateVolumeResponse failed;
  const bool created = c().CreateVolume(&ctx, CreateReq("pvc-metrics-fault", kGiB), &failed).ok();
  ASSERT_TRUE(env().sim().ClearCnsFaults().ok());
  ASSERT_FALSE(created);
  EXPECT_EQ(ctx.GetServerTrailingMetadata().count("x-ccm-csi-faulttype"), 0u);
  EXPECT_GE(csi_ops->Count({"block", "create-volume", "fail", "vim.fault.CnsFault"}), 1u);
  // Issue 42 item 9: every vCenter request in the reference's vsphere_request_ops_seconds.
  auto* requests = env().registry().Find("vsphere_request_ops_seconds");
  ASSERT_NE(requests, nullptr);
  EXPECT_GE(requests->Count({"CnsCreateVolume", "cns", "success"}), 1u);
  EXPECT_GE(requests->Count({"CnsQueryVolume", "cns", "success"}), 1u);
  EXPECT_GE(requests->Count({"RetrievePropertiesEx", "soap", "success"}), 1u);
}

// ---- DeleteVolume ----

TEST_F(ControllerConformanceTest, DeleteWithoutIdIsInvalidArgument) {
  EXPECT_EQ(Delete("").error_code(), grpc::StatusCode::INVALID_ARGUMENT);
}

TEST_F(ControllerConformanceTest, DeleteTwiceSucceedsBothTimes) {
  const std::string id = MustCreate("pvc-delete-twice");
  ASSERT_TRUE(Delete(id).ok());
  EXPECT_EQ(env().CnsVolume(id).status().code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(Delete(id).ok());
}

TEST_F(ControllerConformanceTest, DeleteOfAnUnknownIdSucceeds) {
  EXPECT_TRUE(Delete("0f2e8c8a-1111-4a4a-9b9b-123456789abc").ok());
}

TEST_F(ControllerConformanceTest, DeleteOfAnAttachedVolumeIsFailedPreconditionAndKeepsIt) {
  const std::string id = MustCreate("pvc-delete-attached");
  ::csi::v1::ControllerPublishVolumeResponse pub;
  ASSERT_TRUE(Publish(PubReq(id, env().VmUuid("node-a1")), &pub).ok());
  grpc::Status s = Delete(id);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION) << s.error_message();
  auto cns = env().CnsVolume(id);
  ASSERT_TRUE(cns.ok());
  EXPECT_EQ(cns->attached_vm, env().VmMoid("node-a1"));  // never a silent detach
}

// ---- ValidateVolumeCapabilities ----

TEST_F(ControllerConformanceTest, ValidateRequiresIdAndCapabilities) {
  grpc::ClientContext c1, c2;
  ::csi::v1::ValidateVolumeCapabilitiesRequest req;
  ::csi::v1::ValidateVolumeCapabilitiesResponse resp;
  *req.add_volume_capabilities() = MountCap();
  EXPECT_EQ(c().ValidateVolumeCapabilities(&c1, req, &resp).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
  req.set_volume_id("0f2e8c8a-1111-4a4a-9b9b-123456789abc");
  req.clear_volume_capabilities();
  EXPECT_EQ(c().ValidateVolumeCapabilities(&c2, req, &resp).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
}

TEST_F(ControllerConformanceTest, ValidateOfAnUnknownVolumeIsNotFound) {
  grpc::ClientContext ctx;
  ::csi::v1::ValidateVolumeCapabilitiesRequest req;
  ::csi::v1::ValidateVolumeCapabilitiesResponse resp;
  req.set_volume_id("0f2e8c8a-2222-4a4a-9b9b-123456789abc");
  *req.add_volume_capabilities() = MountCap();
  EXPECT_EQ(c().ValidateVolumeCapabilities(&ctx, req, &resp).error_code(),
            grpc::StatusCode::NOT_FOUND);
}

TEST_F(ControllerConformanceTest, ValidateConfirmsSupportedAndExplainsUnsupported) {
  const std::string id = MustCreate("pvc-validate");
  grpc::ClientContext c1, c2;
  ::csi::v1::ValidateVolumeCapabilitiesRequest req;
  req.set_volume_id(id);
  *req.add_volume_capabilities() = BlockCap();
  ::csi::v1::ValidateVolumeCapabilitiesResponse ok, no;
  ASSERT_TRUE(c().ValidateVolumeCapabilities(&c1, req, &ok).ok());
  EXPECT_TRUE(ok.has_confirmed());
  EXPECT_EQ(ok.confirmed().volume_capabilities_size(), 1);
  req.mutable_volume_capabilities(0)->mutable_access_mode()->set_mode(
      ::csi::v1::VolumeCapability::AccessMode::MULTI_NODE_MULTI_WRITER);
  ASSERT_TRUE(c().ValidateVolumeCapabilities(&c2, req, &no).ok());  // not an error
  EXPECT_FALSE(no.has_confirmed());
  EXPECT_FALSE(no.message().empty());
}

// ---- ListVolumes ----

TEST_F(ControllerConformanceTest, ListPagesThroughEveryVolumeWithPublishedNodes) {
  std::set<std::string> created;
  for (int i = 0; i < 5; ++i) created.insert(MustCreate(absl::StrCat("pvc-list-", i)));
  const std::string attached = *created.begin();
  ::csi::v1::ControllerPublishVolumeResponse pub;
  ASSERT_TRUE(Publish(PubReq(attached, env().VmUuid("node-b1")), &pub).ok());

  std::set<std::string> seen;
  std::string token;
  int pages = 0;
  bool found_published = false;
  do {
    ::csi::v1::ListVolumesResponse resp;
    ASSERT_TRUE(List(token, 2, &resp).ok());
    EXPECT_LE(resp.entries_size(), 2);
    for (const auto& e : resp.entries()) {
      EXPECT_TRUE(seen.insert(e.volume().volume_id()).second) << "listed twice";
      if (e.volume().volume_id() == attached) {
        ASSERT_EQ(e.status().published_node_ids_size(), 1);
        EXPECT_EQ(e.status().published_node_ids(0), env().VmUuid("node-b1"));
        found_published = true;
      }
    }
    token = resp.next_token();
    ++pages;
  } while (!token.empty() && pages < 100);
  EXPECT_GE(pages, 3);
  EXPECT_TRUE(found_published);
  for (const std::string& id : created) EXPECT_TRUE(seen.contains(id)) << id;
}

// Issue 42 item 7: the CSI spec's code for a starting_token the plugin did not give is ABORTED
// (csi-sanity's "should fail when an invalid starting_token is passed"), for ListVolumes and
// ListSnapshots alike; the reference answers InvalidArgument for ListVolumes.
TEST_F(ControllerConformanceTest, ListWithABadTokenIsAborted) {
  ::csi::v1::ListVolumesResponse resp;
  grpc::Status s = List("invalid-token", 0, &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::ABORTED);
  EXPECT_THAT(s.error_message(), ::testing::HasSubstr("not one this driver gave"));
  grpc::ClientContext ctx;
  ::csi::v1::ListSnapshotsRequest snaps;
  snaps.set_starting_token("invalid-token");
  ::csi::v1::ListSnapshotsResponse listed;
  EXPECT_EQ(c().ListSnapshots(&ctx, snaps, &listed).error_code(), grpc::StatusCode::ABORTED);
}

TEST_F(ControllerConformanceTest, ListPagesComeFromOneSnapshot) {
  std::vector<std::string> made;
  for (int i = 0; i < 4; ++i) made.push_back(MustCreate(absl::StrCat("pvc-snap-", i)));
  ::csi::v1::ListVolumesResponse first;
  ASSERT_TRUE(List("", 3, &first).ok());
  std::vector<std::string> listed;
  for (const auto& e : first.entries()) listed.push_back(e.volume().volume_id());
  // Between pages: a volume of this test is deleted (one of the suite's others may be attached)
  // and another made. The pages still walk the listing as it was when it began, each entry once,
  // without asking vCenter again.
  grpc::Status deleted = Delete(made.front());
  ASSERT_TRUE(deleted.ok()) << deleted.error_message();
  const std::string late = MustCreate("pvc-snap-late");
  auto before = env().sim().CnsCounters();
  ASSERT_TRUE(before.ok());
  std::string token = first.next_token();
  while (!token.empty()) {
    ::csi::v1::ListVolumesResponse page;
    ASSERT_TRUE(List(token, 3, &page).ok());
    for (const auto& e : page.entries()) listed.push_back(e.volume().volume_id());
    token = page.next_token();
  }
  auto after = env().sim().CnsCounters();
  ASSERT_TRUE(after.ok());
  EXPECT_EQ((*after)["CnsQueryVolume"], (*before)["CnsQueryVolume"]) << "pages re-read CNS";
  std::set<std::string> unique(listed.begin(), listed.end());
  EXPECT_EQ(unique.size(), listed.size()) << "an entry was listed twice";
  EXPECT_FALSE(unique.contains(late)) << "made after the listing began";
  for (const std::string& id : made) EXPECT_TRUE(unique.contains(id)) << id;
  // A new listing sees the changes.
  ::csi::v1::ListVolumesResponse fresh;
  ASSERT_TRUE(List("", 0, &fresh).ok());
  std::set<std::string> now;
  for (const auto& e : fresh.entries()) now.insert(e.volume().volume_id());
  EXPECT_TRUE(now.contains(late));
  EXPECT_FALSE(now.contains(made.front()));
}

TEST_F(ControllerConformanceTest, ListRefusesWhenKubernetesHasFarMorePvsThanCns) {
  // list-volume-threshold (50): PVs of this driver that CNS does not know, more than 50 beyond
  // the volumes the other tests of the suite made.
  ::csi::v1::ListVolumesResponse all;
  ASSERT_TRUE(List("", 0, &all).ok());
  const int missing = all.entries_size() + 60;
  for (int i = 0; i < missing; ++i) {
    nlohmann::json pv = {
        {"metadata", {{"name", absl::StrCat("pv-missing-", i)}}},
        {"spec",
         {{"csi",
           {{"driver", "csi.vsphere.vmware.com"}, {"volumeHandle", absl::StrCat("v", i)}}}}}};
    ASSERT_TRUE(env().api().Put("persistentvolumes", pv).ok());
  }
  grpc::Status s;
  EXPECT_TRUE(ccm::testing::Eventually([&] {
    ::csi::v1::ListVolumesResponse resp;
    s = List("", 0, &resp);
    return s.error_code() == grpc::StatusCode::FAILED_PRECONDITION;
  })) << s.error_message();
  EXPECT_THAT(s.error_message(), ::testing::HasSubstr("list-volume-threshold"));
  for (int i = 0; i < missing; ++i) {
    ASSERT_TRUE(env().api().Delete("persistentvolumes", "", absl::StrCat("pv-missing-", i)).ok());
  }
  EXPECT_TRUE(ccm::testing::Eventually([&] {
    ::csi::v1::ListVolumesResponse resp;
    return List("", 0, &resp).ok();
  }));
}

TEST_F(ControllerConformanceTest, ListWithNegativeMaxEntriesIsInvalidArgument) {
  ::csi::v1::ListVolumesResponse resp;
  EXPECT_EQ(List("", -1, &resp).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
}

// ---- Capabilities ----

TEST_F(ControllerConformanceTest, CapabilitiesAreTheReferencesPlusCapacity) {
  grpc::ClientContext ctx;
  ::csi::v1::ControllerGetCapabilitiesResponse resp;
  ASSERT_TRUE(c().ControllerGetCapabilities(&ctx, {}, &resp).ok());
  std::set<int> types;
  for (const auto& cap : resp.capabilities()) types.insert(cap.rpc().type());
  using R = ::csi::v1::ControllerServiceCapability::RPC;
  EXPECT_EQ(types,
            (std::set<int>{R::CREATE_DELETE_VOLUME, R::PUBLISH_UNPUBLISH_VOLUME, R::LIST_VOLUMES,
                           R::LIST_VOLUMES_PUBLISHED_NODES, R::EXPAND_VOLUME, R::GET_CAPACITY,
                           R::CREATE_DELETE_SNAPSHOT, R::LIST_SNAPSHOTS}));
}

// ---- Snapshots ----

TEST_F(ControllerConformanceTest, SnapshotRequiredFieldsAndUnknownSource) {
  ::csi::v1::CreateSnapshotResponse resp;
  EXPECT_EQ(Snap("", "0f2e8c8a-1111-4a4a-9b9b-123456789abc", &resp).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(Snap("snap", "", &resp).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(Snap("snap", "0f2e8c8a-1111-4a4a-9b9b-123456789abc", &resp).error_code(),
            grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(Unsnap("").error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_TRUE(Unsnap("reallyfakesnapshotid").ok());
}

TEST_F(ControllerConformanceTest, SnapshotLifecycleOverTheSocket) {
  const std::string volume = MustCreate("pvc-snap-conf", kGiB);
  ::csi::v1::CreateSnapshotResponse first, again;
  ASSERT_TRUE(Snap("snap-conf-1", volume, &first).ok());
  ASSERT_TRUE(Snap("snap-conf-1", volume, &again).ok());  // idempotent on the name
  EXPECT_EQ(again.snapshot().snapshot_id(), first.snapshot().snapshot_id());
  EXPECT_TRUE(absl::StartsWith(first.snapshot().snapshot_id(), volume + "+"));
  EXPECT_EQ(first.snapshot().size_bytes(), kGiB);
  EXPECT_TRUE(first.snapshot().ready_to_use());
  EXPECT_GT(first.snapshot().creation_time().seconds(), 0);
  ::csi::v1::CreateSnapshotResponse second;
  ASSERT_TRUE(Snap("snap-conf-2", volume, &second).ok());
  const std::string other = MustCreate("pvc-snap-conf-other", kGiB);
  ::csi::v1::CreateSnapshotResponse reused;
  EXPECT_EQ(Snap("snap-conf-1", other, &reused).error_code(), grpc::StatusCode::ALREADY_EXISTS);

  // By ID, by source, and every one, one entry per page.
  ::csi::v1::ListSnapshotsRequest req;
  ::csi::v1::ListSnapshotsResponse resp;
  req.set_snapshot_id(second.snapshot().snapshot_id());
  ASSERT_TRUE(ListSnaps(req, &resp).ok());
  ASSERT_EQ(resp.entries_size(), 1);
  EXPECT_EQ(resp.entries(0).snapshot().source_volume_id(), volume);
  req.Clear();
  req.set_source_volume_id(volume);
  req.set_max_entries(1);
  std::set<std::string> seen;
  for (int page = 0; page < 4; ++page) {
    resp.Clear();
    ASSERT_TRUE(ListSnaps(req, &resp).ok());
    for (const auto& e : resp.entries()) seen.insert(e.snapshot().snapshot_id());
    if (resp.next_token().empty()) break;
    req.set_starting_token(resp.next_token());
  }
  EXPECT_EQ(seen, (std::set<std::string>{first.snapshot().snapshot_id(),
                                         second.snapshot().snapshot_id()}));

  // A volume with snapshots stays; the snapshots go, twice without error; then the volume.
  EXPECT_EQ(Delete(volume).error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  for (const auto* s : {&first, &second}) {
    EXPECT_TRUE(Unsnap(s->snapshot().snapshot_id()).ok());
    EXPECT_TRUE(Unsnap(s->snapshot().snapshot_id()).ok());
  }
  req.Clear();
  req.set_snapshot_id(first.snapshot().snapshot_id());
  resp.Clear();
  ASSERT_TRUE(ListSnaps(req, &resp).ok());
  EXPECT_EQ(resp.entries_size(), 0);
  EXPECT_TRUE(Delete(volume).ok());
  EXPECT_TRUE(Delete(other).ok());

  // In the reference's histograms, RPCs and CNS operations alike.
  auto* csi_ops = env().registry().Find("vsphere_csi_volume_ops_histogram");
  ASSERT_NE(csi_ops, nullptr);
  EXPECT_GE(csi_ops->Count({"block", "create-snapshot", "pass", ""}), 2u);
  // AlreadyExists is no fault type of the reference's: csi.fault.Internal, as it labels it.
  EXPECT_GE(csi_ops->Count({"block", "create-snapshot", "fail", "csi.fault.Internal"}), 1u);
  EXPECT_GE(csi_ops->Count({"block", "delete-snapshot", "pass", ""}), 4u);
  EXPECT_GE(csi_ops->Count({"block", "list-snapshot", "pass", ""}), 3u);
  auto* cns_ops = env().registry().Find("vsphere_cns_volume_ops_histogram");
  ASSERT_NE(cns_ops, nullptr);
  EXPECT_GE(cns_ops->Count({"create-snapshot", "pass"}), 2u);
  EXPECT_GE(cns_ops->Count({"delete-snapshot", "pass"}), 2u);
  EXPECT_GE(cns_ops->Count({"query-snapshots", "pass"}), 3u);
}

TEST_F(ControllerConformanceTest, RestoreFromASnapshotOverTheSocket) {
  const std::string volume = MustCreate("pvc-restore-src", kGiB);
  ::csi::v1::CreateSnapshotResponse snap;
  ASSERT_TRUE(Snap("snap-restore", volume, &snap).ok());
  auto req = CreateReq("pvc-restored", kGiB);
  req.mutable_volume_content_source()->mutable_snapshot()->set_snapshot_id(
      snap.snapshot().snapshot_id());
  ::csi::v1::CreateVolumeResponse resp;
  ASSERT_TRUE(Create(req, &resp).ok());
  EXPECT_EQ(resp.volume().content_source().snapshot().snapshot_id(), snap.snapshot().snapshot_id());
  auto src = env().CnsVolume(volume);
  auto restored = env().CnsVolume(resp.volume().volume_id());
  ASSERT_TRUE(src.ok() && restored.ok());
  EXPECT_EQ(restored->datastore, src->datastore);  // where the snapshot is
  auto bigger = CreateReq("pvc-restored-bigger", 2 * kGiB);
  *bigger.mutable_volume_content_source() = req.volume_content_source();
  EXPECT_EQ(Create(bigger).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_TRUE(Delete(resp.volume().volume_id()).ok());
  EXPECT_TRUE(Unsnap(snap.snapshot().snapshot_id()).ok());
  EXPECT_TRUE(Delete(volume).ok());
}

// ---- In-tree volumes under CSI migration (VMDK paths as handles) ----

// An in-tree VMDK (made as the in-tree plugin makes it), registered with CNS by its URL path as
// the syncer does, goes through the RPCs CSI migration sends with the VMDK path as the handle.
TEST_F(ControllerConformanceTest, InTreeVmdkPathResolvesThroughItsCnsVSphereVolumeMigration) {
  const std::string file = "kubevols/kubernetes-dynamic-pvc-7f1c.vmdk";
  const std::string path = "[ds-shared] " + file;
  // Not registered yet: refused, never "deleted".
  grpc::Status early = Delete(path);
  EXPECT_EQ(early.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_THAT(early.error_message(), HasSubstr("not registered with CNS yet"));

  absl::StatusOr<ccm::testing::VcsimInTreeDisk> disk =
      env().sim().CreateInTreeDisk("dc1", "ds-shared", file, 1024);
  ASSERT_TRUE(disk.ok()) << disk.status();
  ASSERT_EQ(disk->path, path);
  InTreeRegistrarOptions ro;
  ro.vcenter_host = "127.0.0.1";
  ro.datacenters = []() -> absl::StatusOr<std::vector<std::string>> {
    return std::vector<std::string>{"/dc1"};
  };
  ro.cluster.cluster_id = env().config().global.cluster_id;
  InTreeRegistrar registrar(*env().backend().vcenters().front().cns, *env().backend().migrations(),
                            std::move(ro));
  absl::StatusOr<std::string> volume = registrar.Register(path, "pv-in-tree");
  ASSERT_TRUE(volume.ok()) << volume.status();

  const std::string node = env().VmUuid("node-a1");
  ASSERT_TRUE(Publish(PubReq(path, node)).ok());
  auto attached = env().CnsVolume(*volume);
  ASSERT_TRUE(attached.ok()) << attached.status();
  EXPECT_EQ(attached->attached_vm, env().VmMoid("node-a1"));
  EXPECT_EQ(attached->file, disk->file);
  // Its disk outlives a deleted node VM, as under the in-tree plugin, and that is recorded.
  EXPECT_THAT(attached->control_flags, ::testing::ElementsAre("keepAfterDeleteVm"));
  auto cr = env().api().Get("cnsvspherevolumemigrations", "", *volume);
  ASSERT_TRUE(cr.ok()) << cr.status();
  EXPECT_EQ(cr->at("spec").at("protectvolumefromvmdelete"), true);

  ::csi::v1::ControllerExpandVolumeRequest grow;
  grow.set_volume_id(path);
  grow.mutable_capacity_range()->set_required_bytes(2 * kGiB);
  grpc::ClientContext ctx;
  ::csi::v1::ControllerExpandVolumeResponse grown;
  ASSERT_TRUE(c().ControllerExpandVolume(&ctx, grow, &grown).ok());
  EXPECT_EQ(env().CnsVolume(*volume)->capacity_mb, 2048);
  struct stat st;
  ASSERT_EQ(stat(disk->file.c_str(), &st), 0);
  EXPECT_EQ(st.st_size, 2 * kGiB);  // the VMDK's own extent grew

  ASSERT_TRUE(Unpublish(path, node).ok());
  // CNS loses the volume (unregistered as an admin would; the disk stays): the next publish
  // registers the disk again and replaces the record (issue 54 item 9).
  ASSERT_TRUE(env().backend().vcenters().front().cns->DeleteVolume(*volume, false).ok());
  grpc::Status again = Publish(PubReq(path, node));
  ASSERT_TRUE(again.ok()) << again.error_message();
  absl::StatusOr<std::string> now = env().backend().migrations()->VolumeIdOf(path);
  ASSERT_TRUE(now.ok()) << now.status();
  EXPECT_NE(*now, *volume);
  EXPECT_EQ(env().CnsVolume(*now)->attached_vm, env().VmMoid("node-a1"));
  EXPECT_EQ(env().CnsVolume(*now)->file, disk->file);
  EXPECT_TRUE(env().api().Get("cnsvspherevolumemigrations", "", *now).ok());
  EXPECT_FALSE(env().api().Get("cnsvspherevolumemigrations", "", *volume).ok());

  ASSERT_TRUE(Unpublish(path, node).ok());
  grpc::Status deleted = Delete(path);
  ASSERT_TRUE(deleted.ok()) << deleted.error_message();
  EXPECT_FALSE(env().CnsVolume(*now).ok());
  EXPECT_NE(stat(disk->file.c_str(), &st), 0);  // the disk is deleted
  EXPECT_FALSE(env().api().Get("cnsvspherevolumemigrations", "", *now).ok());  // gone too
  EXPECT_TRUE(Delete(path).ok());  // a retry of the delete succeeds
}

// CreateVolume of a migrated in-tree StorageClass: the datastore by name, and the VMDK path the
// external-provisioner puts in the in-tree PV, from CnsQueryVolumeInfo.
TEST_F(ControllerConformanceTest, CreateForAnInTreeStorageClassGivesTheVmdkPath) {
  ::csi::v1::CreateVolumeRequest req = CreateReq("pvc-in-tree-sc", kGiB);
  (*req.mutable_parameters())["csimigration"] = "true";
  (*req.mutable_parameters())["datastore-migrationparam"] = "ds-shared";
  (*req.mutable_parameters())["diskformat-migrationparam"] = "thin";
  ::csi::v1::CreateVolumeResponse resp;
  grpc::Status s = Create(req, &resp);
  ASSERT_TRUE(s.ok()) << s.error_message();
  auto v = env().CnsVolume(resp.volume().volume_id());
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(v->datastore_name, "ds-shared");
  const std::string path = resp.volume().volume_context().at("initialvolumefilepath");
  EXPECT_EQ(path, v->path);
  EXPECT_TRUE(absl::StartsWith(path, "[ds-shared] ")) << path;
  auto cr = env().api().Get("cnsvspherevolumemigrations", "", resp.volume().volume_id());
  ASSERT_TRUE(cr.ok()) << cr.status();
  EXPECT_EQ(cr->at("spec").at("volumepath"), path);
  // CSI migration then hands that path back as the handle.
  ASSERT_TRUE(ccm::testing::Eventually([&] { return Delete(path).ok(); }));
  EXPECT_FALSE(env().CnsVolume(resp.volume().volume_id()).ok());
}

TEST_F(ControllerConformanceTest, ProbeIsReadyWithSessionsAndCachesUp) {
  grpc::ClientContext ctx;
  ::csi::v1::ProbeResponse resp;
  ASSERT_TRUE(env().identity().Probe(&ctx, {}, &resp).ok());
  EXPECT_TRUE(resp.ready().value());
}

// ---- Concurrency ----

TEST_F(ControllerConformanceTest, ConcurrentCreateOfTheSameNameIsAbortedOthersRun) {
  ASSERT_TRUE(env().sim().SetCnsDelay("CnsCreateVolume", 1500).ok());
  auto counters = env().sim().CnsCounters();
  ASSERT_TRUE(counters.ok());
  const int before = (*counters)["CnsCreateVolume"];
  grpc::Status first;
  std::thread slow([&] { first = Create(CreateReq("pvc-slow", kGiB)); });
  // The first call holds the volume once its CnsCreateVolume reached the simulator.
  ASSERT_TRUE(ccm::testing::Eventually([&] {
    auto c = env().sim().CnsCounters();
    return c.ok() && (*c)["CnsCreateVolume"] > before;
  }));
  grpc::Status second = Create(CreateReq("pvc-slow", kGiB));
  EXPECT_EQ(second.error_code(), grpc::StatusCode::ABORTED);
  EXPECT_THAT(second.error_message(), HasSubstr("already in progress"));
  // Another volume is not held up by the lock (it waits only for its own CNS task).
  EXPECT_TRUE(Create(CreateReq("pvc-parallel", kGiB)).ok());
  slow.join();
  ASSERT_TRUE(env().sim().SetCnsDelay("CnsCreateVolume", 0).ok());
  EXPECT_TRUE(first.ok()) << first.error_message();
  // The retry after Aborted finds the volume the first call made.
  ::csi::v1::CreateVolumeResponse again;
  ASSERT_TRUE(Create(CreateReq("pvc-slow", kGiB), &again).ok());
  auto volumes = env().sim().CnsVolumes();
  ASSERT_TRUE(volumes.ok());
  EXPECT_EQ(std::count_if(volumes->begin(), volumes->end(),
                          [](const auto& v) { return v.name == "pvc-slow"; }),
            1);
}

// Issue 43: a CreateVolume's gRPC deadline (the provisioner's --timeout) bounds its wait for the
// CNS task. The handler ends at the deadline, so the provisioner's retry is not refused as
// "already in progress" until the task ends; it waits for the task the first attempt started.
TEST_F(ControllerConformanceTest, ACreatePastItsDeadlineEndsAndItsRetryWaitsForItsTask) {
  ASSERT_TRUE(env().sim().SetCnsDelay("CnsCreateVolume", 8000).ok());
  auto counters = env().sim().CnsCounters();
  ASSERT_TRUE(counters.ok());
  const int creates = (*counters)["CnsCreateVolume"];
  metrics::Family* answered = env().registry().Find(kOperationsTotal);
  ASSERT_NE(answered, nullptr);
  const double timed_out = answered->Value({"CreateVolume", "DeadlineExceeded"});
  const absl::Time start = absl::Now();
  grpc::ClientContext ctx;
  ctx.set_deadline(absl::ToChronoTime(start + absl::Milliseconds(1500)));
  ::csi::v1::CreateVolumeResponse ignored;
  grpc::Status first = c().CreateVolume(&ctx, CreateReq("pvc-deadline", kGiB), &ignored);
  EXPECT_EQ(first.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED) << first.error_message();
  // The handler answered DeadlineExceeded itself, long before the task's 8 s.
  ASSERT_TRUE(ccm::testing::Eventually([&] {
    return answered->Value({"CreateVolume", "DeadlineExceeded"}) > timed_out;
  }));
  EXPECT_LT(absl::Now() - start, absl::Milliseconds(3000));
  ::csi::v1::CreateVolumeResponse resp;
  grpc::Status retry = Create(CreateReq("pvc-deadline", kGiB), &resp);
  ASSERT_TRUE(env().sim().SetCnsDelay("CnsCreateVolume", 0).ok());
  ASSERT_TRUE(retry.ok()) << retry.error_message();
  counters = env().sim().CnsCounters();
  ASSERT_TRUE(counters.ok());
  EXPECT_EQ((*counters)["CnsCreateVolume"], creates + 1) << "the retry started a second task";
  auto volumes = env().sim().CnsVolumes();
  ASSERT_TRUE(volumes.ok());
  EXPECT_EQ(std::count_if(volumes->begin(), volumes->end(),
                          [](const auto& v) { return v.name == "pvc-deadline"; }),
            1);
  EXPECT_TRUE(Delete(resp.volume().volume_id()).ok());
}

// ---- Wiring ----

TEST(ControllerPluginTest, KubernetesSecretCredentialsAreAClearStartUpError) {
  cloud::Config config;
  cloud::VirtualCenterConfig vc;
  vc.label = vc.server = "vc.example.com";
  vc.credential_source = cloud::CredentialSourceKind::kGlobalSecret;
  vc.secret_name = "vsphere-config-secret";
  vc.secret_namespace = "vmware-system-csi";
  config.vcenters = {vc};
  config.global.cluster_id = "cluster-1";
  auto plugin = StartControllerPlugin(config);
  ASSERT_EQ(plugin.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(std::string(plugin.status().message()),
              HasSubstr("vmware-system-csi/vsphere-config-secret"));
  EXPECT_THAT(std::string(plugin.status().message()), HasSubstr("secrets-directory"));
}

TEST(ControllerPluginTest, ClusterIdIsRequired) {
  cloud::Config config;
  cloud::VirtualCenterConfig vc;
  vc.label = vc.server = "vc.example.com";
  vc.user = "u";
  vc.password = Secret("p");
  config.vcenters = {vc};
  auto plugin = StartControllerPlugin(config);
  ASSERT_EQ(plugin.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(plugin.status().message()), HasSubstr("cluster-id is required"));
}

}  // namespace
}  // namespace ccm::csi::testing
