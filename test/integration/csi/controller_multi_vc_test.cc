// One Controller service over two vCenters (two simulator processes), topology-categories
// k8s-zone, k8s-region as the reference requires with several vCenters: vc1 is datacenter dc1 in
// zone-a / region-1, vc2 is datacenter dc2 in zone-b / region-2. Every volume lives in exactly one
// vCenter; its ID is the bare CNS ID and a CnsVolumeInfo names its vCenter, as the reference
// (IDs of our earlier "<cns uuid>@vc2" form still work); node IDs resolve to VMs of the volume's
// vCenter only; one unreachable vCenter is Unavailable for its volumes and does not stop the
// other's.
#include <optional>
#include <set>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/substitute.h"
#include "controller_env.h"
#include "csi/core/volume_id.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "integration/csi/controller_calls.h"
#include "testing/eventually.h"

namespace ccm::csi::testing {
namespace {

using ::testing::HasSubstr;

constexpr size_t kVc1 = 0;  // ControllerEnv::sim() index of vCenter "vc1"
constexpr size_t kVc2 = 1;

// One vCenter: datacenter $0 with cluster $1 (2 hosts) tagged $1 in k8s-zone, the datacenter
// tagged $2 in k8s-region, node VMs $3 and $4 ($4 reports no guest hostname: a node name finds it
// by VM name) and datastore $5 on the cluster (the small default datastore1 is mounted on the
// cluster's last host, so it is in $1 too).
constexpr char kVCenterSpec[] = R"({
  "users": {"csi-user": "csi-pass"},
  "datacenters": [{"name": "$0",
    "clusters": [{"name": "$1", "hosts": 2}],
    "vms": [{"name": "$3"}, {"name": "$4", "hostname": ""}],
    "datastores": [{"name": "datastore1", "capacity_mb": 2048},
                   {"name": "$5", "capacity_mb": 204800, "clusters": ["$1"]}]}],
  "tag_categories": [{"name": "k8s-zone"}, {"name": "k8s-region"}],
  "tags": [{"name": "$1", "category": "k8s-zone", "attach": ["/$0/host/$1"]},
           {"name": "$2", "category": "k8s-region", "attach": ["/$0"]}]
})";

constexpr char kZoneKey[] = "topology.csi.vmware.com/k8s-zone";
constexpr char kRegionKey[] = "topology.csi.vmware.com/k8s-region";

std::string RegionOf(const std::string& zone) { return zone == "zone-a" ? "region-1" : "region-2"; }

::csi::v1::Topology ZoneTopology(const std::string& zone) {
  ::csi::v1::Topology t;
  (*t.mutable_segments())[kZoneKey] = zone;
  (*t.mutable_segments())[kRegionKey] = RegionOf(zone);
  return t;
}

std::string CnsId(const std::string& volume_id) {
  auto ref = ParseVolumeId(volume_id);
  return ref.ok() ? ref->cns_id : "";
}

std::string Formatted(std::string uuid) {
  return absl::AsciiStrToLower(absl::StrReplaceAll(uuid, {{"-", ""}, {" ", ""}}));
}

class ControllerMultiVcTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // CNS pages of 2 volumes: ListVolumes pages within each vCenter as well as across them.
    auto env = ControllerEnv::StartMulti(
        {absl::Substitute(kVCenterSpec, "dc1", "zone-a", "region-1", "node-a1", "node-a2", "ds-a"),
         absl::Substitute(kVCenterSpec, "dc2", "zone-b", "region-2", "node-b1", "node-b2", "ds-b")},
        absl::Milliseconds(200), [](cloud::Config& c) {
          c.global.query_limit = 2;
          c.labels.zone.clear();
          c.labels.region.clear();
          c.labels.topology_categories = {"k8s-zone", "k8s-region"};
        });
    ASSERT_TRUE(env.ok()) << env.status();
    env_ = *std::move(env);
    ASSERT_EQ(env_->config().vcenters.size(), 2u);
    // Both simulators listen on 127.0.0.1: the vCenters differ by port only.
    ASSERT_EQ(env_->config().vcenters[0].server, env_->config().vcenters[1].server);
    ASSERT_NE(env_->config().vcenters[0].port, env_->config().vcenters[1].port);
  }

  ::csi::v1::Controller::Stub& c() { return env_->controller(); }

  grpc::Status Create(const std::string& name, const std::string& zone,
                      ::csi::v1::CreateVolumeResponse* resp, int64_t bytes = kGiB) {
    auto req = CreateReq(name, bytes);
    if (!zone.empty()) {
      *req.mutable_accessibility_requirements()->add_requisite() = ZoneTopology(zone);
      *req.mutable_accessibility_requirements()->add_preferred() = ZoneTopology(zone);
    }
    return CallCreate(c(), req, resp);
  }
  std::string MustCreate(const std::string& name, const std::string& zone) {
    ::csi::v1::CreateVolumeResponse resp;
    grpc::Status s = Create(name, zone, &resp);
    EXPECT_TRUE(s.ok()) << name << ": " << s.error_message();
    return resp.volume().volume_id();
  }
  grpc::Status Delete(const std::string& id) { return CallDelete(c(), id); }
  grpc::Status Publish(const std::string& id, const std::string& node,
                       ::csi::v1::ControllerPublishVolumeResponse* resp = nullptr) {
    return CallPublish(c(), PubReq(id, node), resp);
  }
  grpc::Status Unpublish(const std::string& id, const std::string& node) {
    return CallUnpublish(c(), id, node);
  }
  grpc::Status Expand(const std::string& id, int64_t bytes) {
    grpc::ClientContext ctx;
    ::csi::v1::ControllerExpandVolumeRequest req;
    req.set_volume_id(id);
    req.mutable_capacity_range()->set_required_bytes(bytes);
    *req.mutable_volume_capability() = MountCap();
    ::csi::v1::ControllerExpandVolumeResponse resp;
    return c().ControllerExpandVolume(&ctx, req, &resp);
  }
  grpc::Status Validate(const std::string& id) {
    grpc::ClientContext ctx;
    ::csi::v1::ValidateVolumeCapabilitiesRequest req;
    req.set_volume_id(id);
    *req.add_volume_capabilities() = MountCap();
    ::csi::v1::ValidateVolumeCapabilitiesResponse resp;
    grpc::Status s = c().ValidateVolumeCapabilities(&ctx, req, &resp);
    if (s.ok() && !resp.has_confirmed()) {
      return grpc::Status(grpc::StatusCode::UNKNOWN, "not confirmed: " + resp.message());
    }
    return s;
  }
  grpc::Status List(int32_t max_entries, const std::string& token,
                    ::csi::v1::ListVolumesResponse* resp) {
    return CallList(c(), token, max_entries, resp);
  }

  // The volume as simulator `sim` holds it; nullopt when that simulator has no such volume.
  std::optional<ccm::testing::VcsimCnsVolume> InSim(size_t sim, const std::string& volume_id) {
    auto volumes = env_->sim(sim).CnsVolumes();
    EXPECT_TRUE(volumes.ok()) << volumes.status();
    if (!volumes.ok()) return std::nullopt;
    for (const auto& v : *volumes) {
      if (v.id == CnsId(volume_id)) return v;
    }
    return std::nullopt;
  }

  // The vCenter the volume's CnsVolumeInfo names ("" without one).
  std::string RecordedVCenter(const std::string& volume_id) {
    auto got = env_->api().Get("cnsvolumeinfoes", "vmware-system-csi", volume_id);
    return got.ok() ? got->value("/spec/vCenterServer"_json_pointer, std::string()) : "";
  }
  std::string VCenterOf(const std::string& volume_id) {
    if (InSim(kVc1, volume_id)) return "vc1";
    return InSim(kVc2, volume_id) ? "vc2" : "";
  }

  std::unique_ptr<ControllerEnv> env_;
};

TEST_F(ControllerMultiVcTest, CreateVolumeLandsInTheVCenterOfTheRequestedZone) {
  ::csi::v1::CreateVolumeResponse b;
  grpc::Status s = Create("pvc-zone-b", "zone-b", &b, 5 * kGiB);
  ASSERT_TRUE(s.ok()) << s.error_message();
  const std::string id_b = b.volume().volume_id();
  EXPECT_EQ(id_b, CnsId(id_b)) << "a bare CNS ID, as the reference";
  EXPECT_EQ(RecordedVCenter(id_b), "vc2");
  auto held = InSim(kVc2, id_b);
  ASSERT_TRUE(held.has_value()) << "vc2's simulator does not hold " << id_b;
  EXPECT_EQ(held->name, "pvc-zone-b");
  EXPECT_EQ(held->datastore, env_->DatastoreMoid("ds-b"));  // datastore1 is too small for 5 GiB
  EXPECT_FALSE(InSim(kVc1, id_b).has_value()) << "vc1's simulator holds " << id_b;
  ASSERT_EQ(b.volume().accessible_topology_size(), 1);
  EXPECT_EQ(b.volume().accessible_topology(0).segments().at(kZoneKey), "zone-b");
  EXPECT_EQ(b.volume().accessible_topology(0).segments().at(kRegionKey), "region-2");

  ::csi::v1::CreateVolumeResponse a;
  s = Create("pvc-zone-a", "zone-a", &a, 5 * kGiB);
  ASSERT_TRUE(s.ok()) << s.error_message();
  const std::string id_a = a.volume().volume_id();
  EXPECT_EQ(id_a, CnsId(id_a));
  EXPECT_EQ(RecordedVCenter(id_a), "vc1");
  held = InSim(kVc1, id_a);
  ASSERT_TRUE(held.has_value()) << "vc1's simulator does not hold " << id_a;
  EXPECT_EQ(held->datastore, env_->DatastoreMoid("ds-a"));
  EXPECT_FALSE(InSim(kVc2, id_a).has_value()) << "vc2's simulator holds " << id_a;
  ASSERT_EQ(a.volume().accessible_topology_size(), 1);
  EXPECT_EQ(a.volume().accessible_topology(0).segments().at(kZoneKey), "zone-a");
  EXPECT_EQ(a.volume().accessible_topology(0).segments().at(kRegionKey), "region-1");
}

TEST_F(ControllerMultiVcTest, CreateVolumeRetryFindsTheVolumeInWhicheverVCenterHoldsIt) {
  // The name is the idempotency key in every vCenter: a retry (here without topology, which would
  // place it in either vCenter) returns the vc2 volume instead of making a second one.
  const std::string id = MustCreate("pvc-retry", "zone-b");
  ::csi::v1::CreateVolumeResponse again;
  grpc::Status s = Create("pvc-retry", "", &again);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(again.volume().volume_id(), id);
  ASSERT_EQ(again.volume().accessible_topology_size(), 1);
  EXPECT_EQ(again.volume().accessible_topology(0).segments().at(kZoneKey), "zone-b");
  auto vc1 = env_->sim(kVc1).CnsVolumes();
  auto vc2 = env_->sim(kVc2).CnsVolumes();
  ASSERT_TRUE(vc1.ok() && vc2.ok());
  EXPECT_EQ(vc1->size(), 0u);
  EXPECT_EQ(vc2->size(), 1u);
}

TEST_F(ControllerMultiVcTest, PublishAttachesOnlyToNodeVmsOfTheVolumesVCenter) {
  const std::string id_b = MustCreate("pvc-pub-b", "zone-b");
  ::csi::v1::ControllerPublishVolumeResponse resp;
  grpc::Status s = Publish(id_b, env_->VmUuid("node-b1"), &resp);
  ASSERT_TRUE(s.ok()) << s.error_message();
  auto held = InSim(kVc2, id_b);
  ASSERT_TRUE(held.has_value());
  EXPECT_EQ(held->attached_vm, env_->VmMoid("node-b1"));
  ASSERT_TRUE(resp.publish_context().contains("diskUUID"));
  EXPECT_EQ(resp.publish_context().at("diskUUID"), Formatted(held->disk_uuid));

  // A vc2 volume cannot be attached to a VM of vc1: the node is looked up in the volume's vCenter
  // only, where it does not exist (NotFound naming the node and that vCenter); nothing attached.
  const std::string other_b = MustCreate("pvc-pub-b-cross", "zone-b");
  const std::string node_a1 = env_->VmUuid("node-a1");
  s = Publish(other_b, node_a1);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::NOT_FOUND) << s.error_message();
  EXPECT_THAT(s.error_message(), HasSubstr(absl::StrCat("node ", node_a1, " in vCenter vc2")));
  held = InSim(kVc2, other_b);
  ASSERT_TRUE(held.has_value());
  EXPECT_EQ(held->attached_vm, "");
  // The same the other way round.
  const std::string id_a = MustCreate("pvc-pub-a-cross", "zone-a");
  s = Publish(id_a, env_->VmUuid("node-b1"));
  EXPECT_EQ(s.error_code(), grpc::StatusCode::NOT_FOUND) << s.error_message();
  EXPECT_THAT(s.error_message(), HasSubstr("in vCenter vc1"));

  // Unpublishing a vc2 volume from a vc1 node is a no-op: it stays attached to node-b1.
  s = Unpublish(id_b, node_a1);
  EXPECT_TRUE(s.ok()) << s.error_message();
  held = InSim(kVc2, id_b);
  ASSERT_TRUE(held.has_value());
  EXPECT_EQ(held->attached_vm, env_->VmMoid("node-b1"));
}

TEST_F(ControllerMultiVcTest, NodeNamesResolveInTheVolumesVCenterOnly) {
  // A node name (no use-csinode-id) is a VM of the volume's vCenter with that guest hostname, else
  // with that VM name: node-b2 reports no guest hostname.
  const std::string id_b = MustCreate("pvc-name-b", "zone-b");
  grpc::Status s = Publish(id_b, "node-b2");
  ASSERT_TRUE(s.ok()) << s.error_message();
  auto held = InSim(kVc2, id_b);
  ASSERT_TRUE(held.has_value());
  EXPECT_EQ(held->attached_vm, env_->VmMoid("node-b2"));
  ASSERT_TRUE(Unpublish(id_b, "node-b2").ok());
  held = InSim(kVc2, id_b);
  ASSERT_TRUE(held.has_value());
  EXPECT_EQ(held->attached_vm, "");

  // vc1 has no VM of either name: NotFound naming the node and vc1.
  const std::string id_a = MustCreate("pvc-name-a", "zone-a");
  for (const char* node : {"node-b1", "node-b2"}) {
    s = Publish(id_a, node);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::NOT_FOUND) << node << ": " << s.error_message();
    EXPECT_THAT(s.error_message(), HasSubstr(absl::StrCat("node ", node)));
    EXPECT_THAT(s.error_message(), HasSubstr("vCenter vc1"));
  }
}

TEST_F(ControllerMultiVcTest, DeleteVolumeGoesToTheVCenterOfTheVolume) {
  const std::string id_a = MustCreate("pvc-del-a", "zone-a");
  const std::string id_b = MustCreate("pvc-del-b", "zone-b");
  ASSERT_TRUE(InSim(kVc1, id_a).has_value());
  ASSERT_TRUE(InSim(kVc2, id_b).has_value());

  grpc::Status s = Delete(id_b);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_FALSE(InSim(kVc2, id_b).has_value());
  EXPECT_TRUE(InSim(kVc1, id_a).has_value());  // vc1 untouched

  s = Delete(id_a);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_FALSE(InSim(kVc1, id_a).has_value());

  // Gone already: success (the spec's idempotent delete).
  EXPECT_TRUE(Delete(id_a).ok());
  EXPECT_TRUE(Delete(id_b).ok());
}

TEST_F(ControllerMultiVcTest, ABareIdWithoutItsRecordIsFoundInWhicheverVCenterHoldsIt) {
  // A bare CNS ID without a CnsVolumeInfo (a volume made before a second vCenter was added):
  // every vCenter is asked and the one holding it serves it.
  const std::string id_b = MustCreate("pvc-bare-b", "zone-b");
  const std::string bare = CnsId(id_b);
  ASSERT_TRUE(env_->api().Delete("cnsvolumeinfoes", "vmware-system-csi", bare).ok());
  grpc::Status s = Validate(bare);
  EXPECT_TRUE(s.ok()) << s.error_message();
  s = Publish(bare, env_->VmUuid("node-b2"));
  ASSERT_TRUE(s.ok()) << s.error_message();
  auto held = InSim(kVc2, id_b);
  ASSERT_TRUE(held.has_value());
  EXPECT_EQ(held->attached_vm, env_->VmMoid("node-b2"));
  ASSERT_TRUE(Unpublish(bare, env_->VmUuid("node-b2")).ok());
  s = Delete(bare);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_FALSE(InSim(kVc2, id_b).has_value());
}

TEST_F(ControllerMultiVcTest, ListVolumesReturnsTheVolumesOfBothVCentersAcrossPages) {
  std::set<std::string> made;
  for (int i = 0; i < 3; ++i) {
    made.insert(MustCreate(absl::StrCat("pvc-list-a", i), "zone-a"));
    made.insert(MustCreate(absl::StrCat("pvc-list-b", i), "zone-b"));
  }
  ASSERT_EQ(made.size(), 6u);
  std::string published;
  for (const std::string& id : made) {
    if (VCenterOf(id) == "vc2") published = id;
  }
  ASSERT_TRUE(Publish(published, env_->VmUuid("node-b2")).ok());

  // Everything at once (max_entries 0 would be query-limit, 2 here, as in the reference): sorted
  // by ID, with the node a vc2 volume is published to.
  ::csi::v1::ListVolumesResponse all;
  grpc::Status s = List(100, "", &all);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(all.next_token(), "");
  std::vector<std::string> ids;
  for (const auto& e : all.entries()) {
    ids.push_back(e.volume().volume_id());
    EXPECT_EQ(e.volume().capacity_bytes(), kGiB);
    if (e.volume().volume_id() == published) {
      EXPECT_THAT(e.status().published_node_ids(),
                  ::testing::ElementsAre(absl::AsciiStrToLower(env_->VmUuid("node-b2"))));
    } else {
      EXPECT_EQ(e.status().published_node_ids_size(), 0) << e.volume().volume_id();
    }
  }
  EXPECT_EQ(ids, std::vector<std::string>(made.begin(), made.end()));

  // Pages of 4: the first one necessarily mixes both vCenters (3 volumes each).
  ::csi::v1::ListVolumesResponse first, second;
  s = List(4, "", &first);
  ASSERT_TRUE(s.ok()) << s.error_message();
  ASSERT_EQ(first.entries_size(), 4);
  ASSERT_NE(first.next_token(), "");
  std::set<std::string> vcenters;
  for (const auto& e : first.entries()) {
    vcenters.insert(VCenterOf(e.volume().volume_id()));
  }
  EXPECT_EQ(vcenters, (std::set<std::string>{"vc1", "vc2"}));
  s = List(4, first.next_token(), &second);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(second.next_token(), "");
  std::vector<std::string> paged;
  for (const auto* page : {&first, &second}) {
    for (const auto& e : page->entries()) paged.push_back(e.volume().volume_id());
  }
  EXPECT_EQ(paged, ids);
}

TEST_F(ControllerMultiVcTest, UnreachableVCenterIsUnavailableForItsVolumesOnly) {
  const std::string a = MustCreate("pvc-outage-a", "zone-a");
  const std::string b = MustCreate("pvc-outage-b", "zone-b");
  const std::string b_attached = MustCreate("pvc-outage-b-attached", "zone-b");
  ASSERT_TRUE(Publish(b_attached, env_->VmUuid("node-b1")).ok());
  env_->sim(kVc2).Stop();

  // Every operation on a vc2 volume: Unavailable, never NotFound (which Delete and Unpublish would
  // turn into a success, leaking the disk or the attachment), by qualified or bare ID.
  auto expect_unavailable = [](const grpc::Status& s, const std::string& what) {
    EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAVAILABLE) << what << ": " << s.error_message();
  };
  expect_unavailable(Delete(b), "delete");
  expect_unavailable(Delete(CnsId(b)), "delete by bare ID");
  expect_unavailable(Publish(b, env_->VmUuid("node-b2")), "publish");
  expect_unavailable(Publish(CnsId(b), env_->VmUuid("node-b2")), "publish by bare ID");
  expect_unavailable(Unpublish(b_attached, env_->VmUuid("node-b1")), "unpublish");
  expect_unavailable(Unpublish(b_attached, ""), "unpublish from every node");
  expect_unavailable(Expand(b, 2 * kGiB), "expand");
  expect_unavailable(Validate(b), "validate");
  // ListVolumes cannot list vc2: Unavailable, not a partial list the CO would take as complete.
  ::csi::v1::ListVolumesResponse list;
  expect_unavailable(List(0, "", &list), "list");
  // CreateVolume asks every vCenter for the name first (idempotency). One that cannot be asked
  // is left out unless the operation records say the name was made there: a new volume in zone-a
  // is created in vc1, a retry of a vc2 volume's create and a volume in zone-b are Unavailable.
  ::csi::v1::CreateVolumeResponse created;
  grpc::Status made = Create("pvc-during-outage", "zone-a", &created);
  ASSERT_TRUE(made.ok()) << made.error_message();
  EXPECT_TRUE(InSim(kVc1, created.volume().volume_id()).has_value());
  expect_unavailable(Create("pvc-outage-b", "zone-b", &created), "create again, made in vc2");
  expect_unavailable(Create("pvc-outage-b", "zone-a", &created), "the same name in zone-a");
  expect_unavailable(Create("pvc-new-in-b", "zone-b", &created), "create in vc2's zone");

  // vc1's volumes keep working, by qualified and by bare ID.
  grpc::Status s = Validate(a);
  EXPECT_TRUE(s.ok()) << s.error_message();
  ::csi::v1::ControllerPublishVolumeResponse pub;
  s = Publish(a, env_->VmUuid("node-a1"), &pub);
  ASSERT_TRUE(s.ok()) << s.error_message();
  auto held = InSim(kVc1, a);
  ASSERT_TRUE(held.has_value());
  EXPECT_EQ(held->attached_vm, env_->VmMoid("node-a1"));
  EXPECT_EQ(pub.publish_context().at("diskUUID"), Formatted(held->disk_uuid));
  s = Publish(CnsId(a), env_->VmUuid("node-a1"));  // found in vc1; vc2's silence does not matter
  EXPECT_TRUE(s.ok()) << s.error_message();
  s = Expand(a, 2 * kGiB);
  EXPECT_TRUE(s.ok()) << s.error_message();
  s = Unpublish(a, env_->VmUuid("node-a1"));
  EXPECT_TRUE(s.ok()) << s.error_message();
  s = Delete(a);
  EXPECT_TRUE(s.ok()) << s.error_message();
  EXPECT_FALSE(InSim(kVc1, a).has_value());
}

}  // namespace
}  // namespace ccm::csi::testing

namespace ccm::csi::testing {
namespace {

// Issue 44: a volume the reference made (bare ID, its CnsVolumeInfo) attaches through the vCenter
// the record names, without asking the other; ours read back by a bare-ID reader (the record and
// the ID are the reference's); our earlier "<id>@vc2" IDs still work; the delete removes the
// record.
TEST_F(ControllerMultiVcTest, RecordsAsTheReferenceAndReadsTheEarlierQualifiedForm) {
  const std::string id = MustCreate("pvc-ref", "zone-b");
  ASSERT_EQ(RecordedVCenter(id), "vc2");
  auto raw = env_->api().Get("cnsvolumeinfoes", "vmware-system-csi", id);
  ASSERT_TRUE(raw.ok());
  EXPECT_EQ((*raw)["kind"], "CNSVolumeInfo");
  EXPECT_EQ((*raw)["spec"]["volumeID"], id);

  // Published through the record: vc1 is not asked about the volume.
  ASSERT_TRUE(env_->sim(kVc1).ResetCounters().ok());
  grpc::Status s = Publish(id, env_->VmUuid("node-b1"));
  ASSERT_TRUE(s.ok()) << s.error_message();
  auto vc1 = env_->sim(kVc1).SoapCounters();
  ASSERT_TRUE(vc1.ok());
  EXPECT_EQ(vc1->count("CnsQueryVolume"), 0u);
  ASSERT_TRUE(Unpublish(id, env_->VmUuid("node-b1")).ok());

  // The form our earlier releases wrote names its vCenter and needs no record.
  const std::string qualified = absl::StrCat(id, "@vc2");
  EXPECT_TRUE(Validate(qualified).ok());
  EXPECT_TRUE(Expand(qualified, 2 * kGiB).ok());

  // A record naming a vCenter the config lacks is an error that names it, not a NotFound.
  nlohmann::json stray = {
      {"apiVersion", "cns.vmware.com/v1alpha1"},
      {"kind", "CNSVolumeInfo"},
      {"metadata",
       {{"name", "f0000000-0000-0000-0000-000000000001"}, {"namespace", "vmware-system-csi"}}},
      {"spec",
       {{"volumeID", "f0000000-0000-0000-0000-000000000001"},
        {"vCenterServer", "vc9.example.com"}}}};
  ASSERT_TRUE(env_->api().Create("cnsvolumeinfoes", stray).ok());
  // Waited for with a call that goes by the record and changes nothing when the volume is found
  // nowhere (a DeleteVolume before the informer has the record finds the volume nowhere, which
  // is the spec's success, and is remembered as such).
  grpc::Status seen = grpc::Status::OK;
  EXPECT_TRUE(ccm::testing::Eventually([&] {
    seen = Publish("f0000000-0000-0000-0000-000000000001", env_->VmUuid("node-b1"));
    return seen.error_code() == grpc::StatusCode::FAILED_PRECONDITION;
  })) << seen.error_message();
  EXPECT_THAT(seen.error_message(), HasSubstr("vc9.example.com"));
  grpc::Status gone = Delete("f0000000-0000-0000-0000-000000000001");
  EXPECT_EQ(gone.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_THAT(gone.error_message(), HasSubstr("vc9.example.com"));

  s = Delete(id);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(RecordedVCenter(id), "");
}

}  // namespace
}  // namespace ccm::csi::testing

namespace ccm::csi::testing {
namespace {

// The API server refuses the CnsVolumeInfo: CreateVolume fails with an error that names the
// record (nothing is answered that could not be found again); the retry finds the volume by name
// in its vCenter, writes the record and answers the same volume.
TEST_F(ControllerMultiVcTest, ARecordThatCannotBeWrittenFailsTheCreateAndTheRetryWritesIt) {
  env_->api().InjectError(
      {.code = 500, .count = 1, .method = "POST", .path_substring = "cnsvolumeinfoes"});
  ::csi::v1::CreateVolumeResponse first;
  grpc::Status s = Create("pvc-unrecorded", "zone-b", &first);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.error_message(), HasSubstr("CnsVolumeInfo"));
  auto vc2 = env_->sim(kVc2).CnsVolumes();
  ASSERT_TRUE(vc2.ok());
  ASSERT_EQ(vc2->size(), 1u);  // made in CNS, kept
  const std::string cns_id = vc2->front().id;
  EXPECT_EQ(RecordedVCenter(cns_id), "");

  ::csi::v1::CreateVolumeResponse again;
  s = Create("pvc-unrecorded", "zone-b", &again);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(again.volume().volume_id(), cns_id);
  EXPECT_EQ(RecordedVCenter(cns_id), "vc2");
  EXPECT_EQ(env_->sim(kVc2).CnsVolumes()->size(), 1u);
}

}  // namespace
}  // namespace ccm::csi::testing
