// The Controller service's decisions, RPC by RPC, on the in-memory seams
// (testing/fake_controller.h): placement, idempotency, the spec's error codes and what is asked
// of CNS (or must not be). The same RPCs against the simulator: test/integration/csi.
#include "csi/controller/controller_service.h"

#include <functional>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/fake_controller.h"
#include "vsphere/cns/wire.h"

namespace ccm::csi {
namespace {

using testing::FakeControllerCloud;
using ::testing::HasSubstr;
using Code = grpc::StatusCode;
constexpr int64_t kGiB = int64_t{1} << 30;
constexpr char kZoneKey[] = "failure-domain.beta.kubernetes.io/zone";

struct Rig {
  Rig() : cloud(std::make_shared<FakeControllerCloud>()), service(cloud) {}
  std::shared_ptr<FakeControllerCloud> cloud;
  ControllerService service;
};

::csi::v1::VolumeCapability MountCap(const std::string& fs = "ext4") {
  ::csi::v1::VolumeCapability c;
  c.mutable_mount()->set_fs_type(fs);
  c.mutable_access_mode()->set_mode(::csi::v1::VolumeCapability::AccessMode::SINGLE_NODE_WRITER);
  return c;
}

::csi::v1::CreateVolumeRequest CreateReq(const std::string& name = "pvc-1", int64_t bytes = kGiB) {
  ::csi::v1::CreateVolumeRequest r;
  r.set_name(name);
  r.mutable_capacity_range()->set_required_bytes(bytes);
  *r.add_volume_capabilities() = MountCap();
  return r;
}

void RequireZone(::csi::v1::CreateVolumeRequest& r, const std::string& zone) {
  auto* t = r.mutable_accessibility_requirements()->add_requisite();
  (*t->mutable_segments())[kZoneKey] = zone;
}

struct CreateCase {
  std::string name;
  std::function<void(FakeControllerCloud&, ::csi::v1::CreateVolumeRequest&)> setup;
  Code code;
  std::string message;    // in the error
  std::string datastore;  // where the volume went (MOID), when OK
  int creates = -1;       // CnsCreateVolume calls, when >= 0
};

TEST(ControllerServiceTest, CreateVolume) {
  using Cloud = FakeControllerCloud;
  using Req = ::csi::v1::CreateVolumeRequest;
  auto param = [](Req& r, const std::string& k, const std::string& v) {
    (*r.mutable_parameters())[k] = v;
  };
  const std::vector<CreateCase> cases = {
      {"shared by every node VM's host, not the bigger host-local one", [](Cloud&, Req&) {},
       Code::OK, "", "datastore-1", 1},
      {"a node VM on another host narrows it",
       [](Cloud& c, Req&) {
         c.vms.Add("node-3", "4237aaaa-0000-0000-0000-000000000003", "host-3");
         c.node_vms.nodes.push_back({"node-3", "4237aaaa-0000-0000-0000-000000000003"});
       },
       Code::OK, "", "datastore-3", 1},
      {"datastoreurl the nodes do not share: FailedPrecondition naming the host",
       [param](Cloud&, Req& r) { param(r, "datastoreurl", "ds:///vmfs/volumes/local-1/"); },
       Code::FAILED_PRECONDITION, "host-2", "", 0},
      {"datastoreurl of a shared one",
       [param](Cloud&, Req& r) { param(r, "datastoreurl", "ds:///vmfs/volumes/shared-all"); },
       Code::OK, "", "datastore-3", 1},
      {"datastoreurl unknown: InvalidArgument",
       [param](Cloud&, Req& r) { param(r, "datastoreurl", "ds:///vmfs/volumes/nowhere/"); },
       Code::INVALID_ARGUMENT, "nowhere", "", 0},
      {"storage policy: its compatible shared datastore",
       [param](Cloud& c, Req& r) {
         c.policies.Add("gold", "policy-gold", {"datastore-2", "datastore-3"});
         param(r, "storagepolicyname", "gold");
       },
       Code::OK, "", "datastore-3", 1},
      {"unknown storage policy: InvalidArgument naming it",
       [param](Cloud&, Req& r) { param(r, "storagepolicyname", "platinum"); },
       Code::INVALID_ARGUMENT, "platinum", "", 0},
      {"policy compatible with no shared datastore: FailedPrecondition",
       [param](Cloud& c, Req& r) {
         c.policies.Add("local", "policy-local", {"datastore-2"});
         param(r, "storagepolicyname", "local");
       },
       Code::FAILED_PRECONDITION, "local", "", 0},
      {"no Kubernetes API: no node VMs to place for", [](Cloud& c, Req&) { c.kube = false; },
       Code::FAILED_PRECONDITION, "node VMs", "", 0},
      {"the same name, compatible: that volume, no create",
       [](Cloud& c, Req&) { c.cns.Add("pvc-1", 1024, "datastore-1", Cloud::kClusterId); }, Code::OK,
       "", "datastore-1", 0},
      {"the same name in another cluster: not ours, a new one",
       [](Cloud& c, Req&) { c.cns.Add("pvc-1", 1024, "datastore-1", "other-cluster"); }, Code::OK,
       "", "datastore-1", 1},
      {"the same name, smaller: AlreadyExists",
       [](Cloud& c, Req&) { c.cns.Add("pvc-1", 512, "datastore-1", Cloud::kClusterId); },
       Code::ALREADY_EXISTS, "capacity", "", 0},
      {"the same name, another policy: AlreadyExists",
       [param](Cloud& c, Req& r) {
         c.policies.Add("gold", "policy-gold", {"datastore-1"});
         c.cns.Add("pvc-1", 1024, "datastore-1", Cloud::kClusterId, "policy-silver");
         param(r, "storagepolicyname", "gold");
       },
       Code::ALREADY_EXISTS, "storage policy", "", 0},
      {"a datastore refused in the task: the next one",
       [](Cloud& c, Req&) { c.cns.Fail("CnsCreateVolume", absl::UnknownError("CnsFault: full")); },
       Code::OK, "", "datastore-3", 2},
      {"CNS not reachable: Unavailable, no other datastore tried",
       [](Cloud& c, Req&) {
         c.cns.Fail("CnsCreateVolume", absl::UnavailableError("connection reset"), true);
       },
       Code::UNAVAILABLE, "connection reset", "", 1},
      {"inventory not loaded: Unavailable",
       [](Cloud& c, Req&) {
         c.placement.SetUnavailable(absl::UnavailableError("datastore inventory not loaded"));
       },
       Code::UNAVAILABLE, "not loaded", "", 0},
      {"too big for any datastore: ResourceExhausted",
       [](Cloud&, Req& r) { r.mutable_capacity_range()->set_required_bytes(200 * kGiB); },
       Code::RESOURCE_EXHAUSTED, "", "", 0},
      {"limit below required: InvalidArgument",
       [](Cloud&, Req& r) { r.mutable_capacity_range()->set_limit_bytes(kGiB / 2); },
       Code::INVALID_ARGUMENT, "limit_bytes", "", 0},
      {"rounded to a MiB, above the limit: OutOfRange",
       [](Cloud&, Req& r) {
         r.mutable_capacity_range()->set_required_bytes(kGiB + 1);
         r.mutable_capacity_range()->set_limit_bytes(kGiB + 1);
       },
       Code::OUT_OF_RANGE, "", "", 0},
      {"no name", [](Cloud&, Req& r) { r.clear_name(); }, Code::INVALID_ARGUMENT, "name", "", 0},
      {"no capabilities", [](Cloud&, Req& r) { r.clear_volume_capabilities(); },
       Code::INVALID_ARGUMENT, "", "", 0},
      {"nfs", [](Cloud&, Req& r) { *r.mutable_volume_capabilities(0) = MountCap("nfs"); },
       Code::INVALID_ARGUMENT, "nfs", "", 0},
      {"unknown parameter", [param](Cloud&, Req& r) { param(r, "diskformat", "thick"); },
       Code::INVALID_ARGUMENT, "diskformat", "", 0},
      {"a migrated in-tree StorageClass: its datastore by name, thin",
       [param](Cloud&, Req& r) {
         param(r, "csimigration", "true");
         param(r, "datastore-migrationparam", "shared-all");
         param(r, "diskformat-migrationparam", "thin");
       },
       Code::OK, "", "datastore-3", 1},
      {"a migrated in-tree StorageClass without datastore: migration-datastore-url",
       [param](Cloud& c, Req& r) {
         c.cfg.vcenters.push_back({});
         c.cfg.vcenters.back().label = Cloud::kVCenter;
         c.cfg.vcenters.back().migration_datastore_url = "ds:///vmfs/volumes/shared-all/";
         param(r, "csimigration", "true");
       },
       Code::OK, "", "datastore-3", 1},
      {"a migrated in-tree StorageClass, a datastore name vCenter does not have",
       [param](Cloud&, Req& r) {
         param(r, "csimigration", "true");
         param(r, "datastore-migrationparam", "datastore1");
       },
       Code::INVALID_ARGUMENT, "no datastore named \"datastore1\"", "", 0},
      {"a migrated in-tree StorageClass, thick: InvalidArgument",
       [param](Cloud&, Req& r) {
         param(r, "csimigration", "true");
         param(r, "diskformat-migrationparam", "eagerzeroedthick");
       },
       Code::INVALID_ARGUMENT, "only thin", "", 0},
      {"a migrated in-tree StorageClass with vSAN capabilities: InvalidArgument",
       [param](Cloud&, Req& r) {
         param(r, "csimigration", "true");
         param(r, "hostfailurestotolerate-migrationparam", "1");
       },
       Code::INVALID_ARGUMENT, "use a storage policy", "", 0},
      {"a migrated in-tree StorageClass without a Kubernetes API: FailedPrecondition",
       [param](Cloud& c, Req& r) {
         c.kube = false;
         param(r, "csimigration", "true");
       },
       Code::FAILED_PRECONDITION, "CnsVSphereVolumeMigration", "", 0},
      {"a content source that is no snapshot ID of ours: NotFound (the spec's code)",
       [](Cloud&, Req& r) {
         r.mutable_volume_content_source()->mutable_snapshot()->set_snapshot_id("s");
       },
       Code::NOT_FOUND, "source snapshot s does not exist", "", 0},
      {"requirements without topology configured: InvalidArgument",
       [](Cloud&, Req& r) { RequireZone(r, "zone-a"); }, Code::INVALID_ARGUMENT, "topology", "", 0},
      {"zone-b: a datastore every host of zone-b mounts",
       [](Cloud& c, Req& r) {
         c.WithZones();
         RequireZone(r, "zone-b");
       },
       Code::OK, "", "datastore-3", 1},
      {"zone-a: shared by both its hosts, not host-1's own",
       [](Cloud& c, Req& r) {
         c.WithZones();
         RequireZone(r, "zone-a");
       },
       Code::OK, "", "datastore-1", 1},
      {"the record says it was made in a vCenter that cannot be asked: Unavailable",
       [](Cloud& c, Req&) {
         c.cns.Fail("CnsQueryVolume", absl::UnavailableError("vCenter down"), false, 1);
         OperationRecord rec;
         rec.name = "pvc-1";
         rec.vcenter = Cloud::kVCenter;
         rec.status = kTaskSuccess;
         ASSERT_TRUE(c.operations().Put(rec).ok());
       },
       Code::UNAVAILABLE, "cannot be asked", "", 0},
  };
  for (const CreateCase& c : cases) {
    Rig rig;
    ::csi::v1::CreateVolumeRequest req = CreateReq();
    c.setup(*rig.cloud, req);
    const int before = rig.cloud->cns.Calls("CnsCreateVolume");
    grpc::ServerContext ctx;
    ::csi::v1::CreateVolumeResponse resp;
    grpc::Status s = rig.service.CreateVolume(&ctx, &req, &resp);
    EXPECT_EQ(s.error_code(), c.code) << c.name << ": " << s.error_message();
    EXPECT_THAT(s.error_message(), HasSubstr(c.message)) << c.name;
    if (c.creates >= 0) {
      EXPECT_EQ(rig.cloud->cns.Calls("CnsCreateVolume") - before, c.creates) << c.name;
    }
    if (!s.ok()) continue;
    std::optional<testing::FakeCns::Stored> made = rig.cloud->cns.Get(resp.volume().volume_id());
    ASSERT_TRUE(made.has_value()) << c.name;
    EXPECT_EQ(made->datastore, c.datastore) << c.name;
    EXPECT_EQ(resp.volume().capacity_bytes(), made->volume.capacity_mb << 20) << c.name;
    EXPECT_EQ(resp.volume().volume_context().at("type"), "vSphere CNS Block Volume") << c.name;
  }
}

// The external-provisioner makes an in-tree PV of a migrated StorageClass's volume: its VMDK path
// is in volume_context "initialvolumefilepath", and the mapping is saved (the disk, made by CNS,
// is protected from VM deletion already). A retried create answers the same.
TEST(ControllerServiceTest, CreateForAnInTreeStorageClassNamesTheVmdk) {
  Rig rig;
  FakeControllerCloud& c = *rig.cloud;
  ::csi::v1::CreateVolumeRequest req = CreateReq("pvc-intree");
  (*req.mutable_parameters())["csimigration"] = "true";
  (*req.mutable_parameters())["datastore-migrationparam"] = "shared-a";
  for (int attempt = 0; attempt < 2; ++attempt) {
    grpc::ServerContext ctx;
    ::csi::v1::CreateVolumeResponse resp;
    grpc::Status s = rig.service.CreateVolume(&ctx, &req, &resp);
    ASSERT_TRUE(s.ok()) << s.error_message();
    const std::string& id = resp.volume().volume_id();
    const std::string path = "[datastore-1] fcd/" + id + ".vmdk";  // FakeCns's file path
    EXPECT_EQ(resp.volume().volume_context().at("initialvolumefilepath"), path);
    ASSERT_EQ(c.volume_migrations.by_path.count(path), 1u);
    EXPECT_EQ(c.volume_migrations.by_path[path].volume_id, id);
    EXPECT_TRUE(c.volume_migrations.by_path[path].protected_from_vm_delete);
  }
  EXPECT_EQ(c.cns.Calls("CnsCreateVolume"), 1);

  // The file path cannot be read: the create fails (the provisioner retries), nothing saved.
  c.cns.Fail("CnsQueryVolumeInfo", absl::UnavailableError("vCenter down"), true);
  c.volume_migrations.by_path.clear();
  grpc::ServerContext ctx;
  ::csi::v1::CreateVolumeResponse resp;
  grpc::Status s = rig.service.CreateVolume(&ctx, &req, &resp);
  EXPECT_EQ(s.error_code(), Code::UNAVAILABLE) << s.error_message();
  EXPECT_TRUE(c.volume_migrations.by_path.empty());
}

TEST(ControllerServiceTest, CreateRecordsThePolicyTheClusterAndTheTopology) {
  Rig rig;
  rig.cloud->WithZones();
  rig.cloud->policies.Add("gold", "policy-gold", {"datastore-3"});
  ::csi::v1::CreateVolumeRequest req = CreateReq();
  (*req.mutable_parameters())["storagepolicyname"] = "gold";
  RequireZone(req, "zone-a");
  grpc::ServerContext ctx;
  ::csi::v1::CreateVolumeResponse resp;
  ASSERT_TRUE(rig.service.CreateVolume(&ctx, &req, &resp).ok());
  auto made = rig.cloud->cns.Get(resp.volume().volume_id());
  ASSERT_TRUE(made.has_value());
  EXPECT_EQ(made->volume.storage_policy_id, "policy-gold");
  EXPECT_EQ(made->volume.metadata.container_cluster.cluster_id, FakeControllerCloud::kClusterId);
  EXPECT_EQ(made->volume.metadata.container_cluster.vsphere_user, "k8s@vsphere.local");
  // shared-all is reachable from both zones.
  EXPECT_EQ(resp.volume().accessible_topology_size(), 2);
  EXPECT_EQ(rig.cloud->placement.noted_bytes(), -kGiB);  // the cached free space, at once
  // Recorded as done, for a retry after a restart.
  auto record = rig.cloud->operations().Get("pvc-1");
  ASSERT_TRUE(record.ok() && record->has_value());
  EXPECT_EQ((*record)->status, kTaskSuccess);
  EXPECT_EQ((*record)->volume_id, resp.volume().volume_id());
}

grpc::Status Publish(Rig& rig, const std::string& volume, const std::string& node,
                     ::csi::v1::ControllerPublishVolumeResponse* resp = nullptr) {
  ::csi::v1::ControllerPublishVolumeRequest req;
  req.set_volume_id(volume);
  req.set_node_id(node);
  *req.mutable_volume_capability() = MountCap();
  grpc::ServerContext ctx;
  ::csi::v1::ControllerPublishVolumeResponse ignored;
  return rig.service.ControllerPublishVolume(&ctx, &req, resp != nullptr ? resp : &ignored);
}

TEST(ControllerServiceTest, Publish) {
  Rig rig;
  FakeControllerCloud& c = *rig.cloud;
  const std::string vol = c.cns.Add("pvc-1", 1024, "datastore-1", FakeControllerCloud::kClusterId);
  ::csi::v1::ControllerPublishVolumeResponse first, again;
  ASSERT_TRUE(Publish(rig, vol, c.node1_uuid, &first).ok());
  const std::string disk = first.publish_context().at("diskUUID");
  EXPECT_EQ(disk.size(), 32u);
  EXPECT_EQ(disk, absl::AsciiStrToLower(disk));
  EXPECT_EQ(c.cns.Get(vol)->attached_vm, c.node1_moid);
  // Again to the same node: the VM stream shows the disk there; the same answer, no CNS call.
  ASSERT_TRUE(Publish(rig, vol, c.node1_uuid, &again).ok());
  EXPECT_EQ(again.publish_context().at("diskUUID"), disk);
  EXPECT_EQ(c.cns.Calls("CnsAttachVolume"), 1);
  // The node's name works too (the reference without use-csinode-id).
  EXPECT_TRUE(Publish(rig, vol, "node-1").ok());
  EXPECT_EQ(Publish(rig, vol, c.node2_uuid).error_code(), Code::FAILED_PRECONDITION);
  EXPECT_EQ(Publish(rig, vol, "4237aaaa-0000-0000-0000-0000000000ff").error_code(),
            Code::NOT_FOUND);
  EXPECT_EQ(Publish(rig, "5e0c3d7a-0000-4000-8000-0000000000ff", c.node1_uuid).error_code(),
            Code::NOT_FOUND);
  EXPECT_EQ(Publish(rig, "", c.node1_uuid).error_code(), Code::INVALID_ARGUMENT);
  EXPECT_EQ(Publish(rig, vol, "").error_code(), Code::INVALID_ARGUMENT);
  // Two VMs answer to one node name: FailedPrecondition, never a guess.
  c.vms.Add("twin", "4237aaaa-0000-0000-0000-0000000000a1", "host-1");
  c.vms.Add("twin", "4237aaaa-0000-0000-0000-0000000000a2", "host-2");
  EXPECT_EQ(Publish(rig, vol, "twin").error_code(), Code::FAILED_PRECONDITION);
  // The VMs cannot be read: Unavailable, never NotFound.
  c.vms.SetUnavailable(absl::UnavailableError("inventory cache not synced"));
  EXPECT_EQ(Publish(rig, vol, c.node2_uuid).error_code(), Code::UNAVAILABLE);
}

// A node VM that holds as many volumes as its CSINode's allocatable count: the next publish is
// RESOURCE_EXHAUSTED (csi-sanity's attach-limit spec), nothing is attached; a volume already
// there is published again; without a known limit nothing is refused.
TEST(ControllerServiceTest, PublishBeyondTheNodesVolumeLimitIsResourceExhausted) {
  Rig rig;
  FakeControllerCloud& c = *rig.cloud;
  c.node_vms.limits[c.node1_uuid] = 2;
  std::vector<std::string> vols;
  for (int i = 0; i < 3; ++i) {
    vols.push_back(
        c.cns.Add(absl::StrCat("pvc-", i), 1024, "datastore-1", FakeControllerCloud::kClusterId));
  }
  ASSERT_TRUE(Publish(rig, vols[0], c.node1_uuid).ok());
  ASSERT_TRUE(Publish(rig, vols[1], c.node1_uuid).ok());
  grpc::Status full = Publish(rig, vols[2], c.node1_uuid);
  EXPECT_EQ(full.error_code(), Code::RESOURCE_EXHAUSTED);
  EXPECT_THAT(full.error_message(), HasSubstr("already has 2 volumes attached"));
  EXPECT_THAT(full.error_message(), HasSubstr("allocatable count 2"));
  EXPECT_TRUE(c.cns.Get(vols[2])->attached_vm.empty());
  EXPECT_TRUE(Publish(rig, vols[1], c.node1_uuid).ok());  // a retried publish
  EXPECT_TRUE(Publish(rig, vols[2], c.node2_uuid).ok());  // node-2 has no known limit
}

TEST(ControllerServiceTest, PublishFaultsTheSidecarsActOn) {
  struct Case {
    absl::Status fault;
    Code code;
  };
  for (const Case& k :
       {Case{vsphere::cns::FaultStatus("TooManyDevices", "no free slot"), Code::RESOURCE_EXHAUSTED},
        Case{vsphere::cns::FaultStatus("TaskInProgress", "busy"), Code::ABORTED},
        Case{vsphere::cns::FaultStatus("InvalidPowerState", "off"), Code::FAILED_PRECONDITION},
        Case{absl::DeadlineExceededError("task still running"), Code::DEADLINE_EXCEEDED}}) {
    Rig rig;
    const std::string vol =
        rig.cloud->cns.Add("pvc-1", 1024, "datastore-1", FakeControllerCloud::kClusterId);
    rig.cloud->cns.Fail("CnsAttachVolume", k.fault);
    grpc::Status s = Publish(rig, vol, rig.cloud->node1_uuid);
    EXPECT_EQ(s.error_code(), k.code) << k.fault;
    EXPECT_THAT(s.error_message(), HasSubstr(std::string(k.fault.message()))) << k.fault;
  }
}

grpc::Status Unpublish(Rig& rig, const std::string& volume, const std::string& node) {
  ::csi::v1::ControllerUnpublishVolumeRequest req;
  req.set_volume_id(volume);
  req.set_node_id(node);
  grpc::ServerContext ctx;
  ::csi::v1::ControllerUnpublishVolumeResponse resp;
  return rig.service.ControllerUnpublishVolume(&ctx, &req, &resp);
}

TEST(ControllerServiceTest, Unpublish) {
  Rig rig;
  FakeControllerCloud& c = *rig.cloud;
  const std::string vol = c.cns.Add("pvc-1", 1024, "datastore-1", FakeControllerCloud::kClusterId);
  c.cns.AttachTo(vol, c.node1_moid);
  // Not attached to node-2: success, the disk stays where it is.
  EXPECT_TRUE(Unpublish(rig, vol, c.node2_uuid).ok());
  EXPECT_EQ(c.cns.Get(vol)->attached_vm, c.node1_moid);
  EXPECT_TRUE(Unpublish(rig, vol, c.node1_uuid).ok());
  EXPECT_EQ(c.cns.Get(vol)->attached_vm, "");
  EXPECT_TRUE(Unpublish(rig, vol, c.node1_uuid).ok());  // again
  // Unknown node or volume: nothing attached there, success.
  EXPECT_TRUE(Unpublish(rig, vol, "4237aaaa-0000-0000-0000-0000000000ff").ok());
  EXPECT_TRUE(Unpublish(rig, "5e0c3d7a-0000-4000-8000-0000000000ff", c.node1_uuid).ok());
  // No node: from wherever it is attached.
  c.cns.AttachTo(vol, c.node2_moid);
  EXPECT_TRUE(Unpublish(rig, vol, "").ok());
  EXPECT_EQ(c.cns.Get(vol)->attached_vm, "");
  // vCenter not reachable: Unavailable (the attacher retries), never a false success.
  c.cns.AttachTo(vol, c.node1_moid);
  c.cns.Fail("CnsDetachVolume", absl::UnavailableError("connection refused"), true);
  EXPECT_EQ(Unpublish(rig, vol, c.node1_uuid).error_code(), Code::UNAVAILABLE);
}

// Our attach ended and the VM stream does not show the disk yet: a publish again (the attacher's
// retry after a conflict) is answered from that attach, with the same disk UUID.
TEST(ControllerServiceTest, PublishAgainBeforeTheStreamShowsOurAttachIsFromMemory) {
  Rig rig;
  FakeControllerCloud& c = *rig.cloud;
  const std::string vol = c.cns.Add("pvc-1", 1024, "datastore-1", FakeControllerCloud::kClusterId);
  c.vms.HoldStream();  // shows no disk on node-1
  ::csi::v1::ControllerPublishVolumeResponse first, again;
  ASSERT_TRUE(Publish(rig, vol, c.node1_uuid, &first).ok());
  ASSERT_TRUE(Publish(rig, vol, c.node1_uuid, &again).ok());
  EXPECT_EQ(c.cns.Calls("CnsAttachVolume"), 1);
  EXPECT_EQ(again.publish_context().at("diskUUID"), first.publish_context().at("diskUUID"));
}

// After a detach of ours, a stream that still shows the disk on the VM is not believed: the next
// publish there attaches it in CNS; once the stream shows it, a publish again is from memory.
TEST(ControllerServiceTest, PublishAfterADetachTheStreamDoesNotShowYetAttachesInCns) {
  Rig rig;
  FakeControllerCloud& c = *rig.cloud;
  const std::string vol = c.cns.Add("pvc-1", 1024, "datastore-1", FakeControllerCloud::kClusterId);
  ASSERT_TRUE(Publish(rig, vol, c.node1_uuid).ok());
  c.vms.HoldStream();  // still shows the disk on node-1
  ASSERT_TRUE(Unpublish(rig, vol, c.node1_uuid).ok());
  EXPECT_TRUE(c.cns.Get(vol)->attached_vm.empty());
  ::csi::v1::ControllerPublishVolumeResponse again;
  ASSERT_TRUE(Publish(rig, vol, c.node1_uuid, &again).ok());
  EXPECT_EQ(c.cns.Calls("CnsAttachVolume"), 2);
  EXPECT_EQ(c.cns.Get(vol)->attached_vm, c.node1_moid);
  c.vms.ResumeStream();
  ASSERT_TRUE(Publish(rig, vol, c.node1_uuid).ok());  // the stream shows it: from memory
  EXPECT_EQ(c.cns.Calls("CnsAttachVolume"), 2);
}

grpc::Status Delete(Rig& rig, const std::string& volume) {
  ::csi::v1::DeleteVolumeRequest req;
  req.set_volume_id(volume);
  grpc::ServerContext ctx;
  ::csi::v1::DeleteVolumeResponse resp;
  return rig.service.DeleteVolume(&ctx, &req, &resp);
}

TEST(ControllerServiceTest, Delete) {
  Rig rig;
  FakeControllerCloud& c = *rig.cloud;
  const std::string vol = c.cns.Add("pvc-1", 1024, "datastore-1", FakeControllerCloud::kClusterId);
  c.cns.AttachTo(vol, c.node1_moid);
  grpc::Status attached = Delete(rig, vol);
  EXPECT_EQ(attached.error_code(), Code::FAILED_PRECONDITION);
  EXPECT_THAT(attached.error_message(), HasSubstr("unpublish it first"));
  EXPECT_TRUE(c.cns.Get(vol).has_value());  // never detached behind the CO's back
  ASSERT_TRUE(Unpublish(rig, vol, c.node1_uuid).ok());
  EXPECT_TRUE(Delete(rig, vol).ok());
  EXPECT_FALSE(c.cns.Get(vol).has_value());
  EXPECT_TRUE(Delete(rig, vol).ok());  // gone: the spec's success
  // The refused one (attached) and the delete; the one sent again is answered from memory.
  EXPECT_EQ(c.cns.Calls("CnsDeleteVolume"), 2);
  EXPECT_EQ(Delete(rig, "").error_code(), Code::INVALID_ARGUMENT);
  // An ID naming a vCenter that is not configured: never "deleted" (the disk would leak).
  EXPECT_EQ(Delete(rig, "5e0c3d7a-0000-4000-8000-000000000001@vc9").error_code(),
            Code::FAILED_PRECONDITION);
  const std::string other =
      c.cns.Add("pvc-2", 1024, "datastore-1", FakeControllerCloud::kClusterId);
  c.cns.Fail("CnsDeleteVolume", absl::UnavailableError("timeout"), true);
  EXPECT_EQ(Delete(rig, other).error_code(), Code::UNAVAILABLE);
  EXPECT_TRUE(c.cns.Get(other).has_value());
}

// CSI migration hands the in-tree plugin's VMDK path as the volume handle: it is resolved
// through the CnsVSphereVolumeMigration objects, and never "deleted" while it is not registered.
TEST(ControllerServiceTest, InTreeVmdkPathsResolveThroughTheirRegistration) {
  Rig rig;
  FakeControllerCloud& c = *rig.cloud;
  const std::string path = "[datastore1] kubevols/kubernetes-dynamic-pvc-" + std::string(120, 'a') +
                           ".vmdk";  // longer than the 128 bytes of a CSI volume ID
  grpc::Status unregistered = Delete(rig, path);
  EXPECT_EQ(unregistered.error_code(), Code::FAILED_PRECONDITION);
  EXPECT_THAT(unregistered.error_message(), HasSubstr("not registered with CNS yet"));
  EXPECT_EQ(c.cns.Calls("CnsDeleteVolume"), 0);
  EXPECT_EQ(Publish(rig, path, c.node1_uuid).error_code(), Code::FAILED_PRECONDITION);

  // The in-tree VMDK, registered with CNS by its URL path as the syncer does.
  const std::string url = "https://vc/folder/kubevols/x.vmdk?dcPath=dc1&dsName=datastore1";
  c.cns.AddDisk(url, path, 1024, "datastore-1");
  vsphere::cns::CreateSpec registration;
  registration.name = "pv-in-tree";
  registration.backing_disk_url_path = url;
  const std::string vol = c.cns.CreateVolume(registration).value().volume_id;
  c.volume_migrations.Add(path, vol);
  ASSERT_TRUE(Publish(rig, path, c.node1_uuid).ok());
  EXPECT_EQ(c.cns.Get(vol)->attached_vm, c.node1_moid);
  // The disk outlives a deleted node VM, as under the in-tree plugin: set once, recorded.
  EXPECT_TRUE(c.cns.Get(vol)->keep_after_delete_vm);
  EXPECT_TRUE(c.volume_migrations.by_path[path].protected_from_vm_delete);
  ASSERT_TRUE(Publish(rig, path, c.node1_uuid).ok());
  EXPECT_EQ(c.cns.Calls("SetVStorageObjectControlFlags"), 1);
  ASSERT_TRUE(Unpublish(rig, path, c.node1_uuid).ok());
  ASSERT_TRUE(Delete(rig, path).ok());
  EXPECT_FALSE(c.cns.Get(vol).has_value());
  EXPECT_EQ(c.volume_migrations.forgotten, std::vector<std::string>{vol});
  // A retried delete succeeds (the controller remembers what it deleted).
  EXPECT_TRUE(Delete(rig, path).ok());
  EXPECT_EQ(c.cns.Calls("CnsDeleteVolume"), 1);

  c.kube = false;  // no Kubernetes API: the objects cannot be read
  EXPECT_THAT(Delete(rig, "[datastore1] kubevols/other.vmdk").error_message(),
              HasSubstr("no Kubernetes API"));
}

// keepAfterDeleteVm cannot be set (vCenter down): the attach does not happen, the object stays
// unprotected, and the next publish tries again.
TEST(ControllerServiceTest, InTreeAttachWaitsForTheDisksProtection) {
  Rig rig;
  FakeControllerCloud& c = *rig.cloud;
  const std::string path = "[datastore1] kubevols/y.vmdk";
  const std::string url = "https://vc/folder/kubevols/y.vmdk?dcPath=dc1&dsName=datastore1";
  c.cns.AddDisk(url, path, 1024, "datastore-1");
  vsphere::cns::CreateSpec registration;
  registration.name = "pv-y";
  registration.backing_disk_url_path = url;
  const std::string vol = c.cns.CreateVolume(registration).value().volume_id;
  c.volume_migrations.Add(path, vol);
  c.cns.Fail("SetVStorageObjectControlFlags", absl::UnavailableError("vCenter down"), true);
  grpc::Status s = Publish(rig, path, c.node1_uuid);
  EXPECT_EQ(s.error_code(), Code::UNAVAILABLE) << s.error_message();
  EXPECT_THAT(s.error_message(), HasSubstr("protect in-tree volume " + path));
  EXPECT_TRUE(c.cns.Get(vol)->attached_vm.empty());
  EXPECT_FALSE(c.volume_migrations.by_path[path].protected_from_vm_delete);
  ASSERT_TRUE(Publish(rig, path, c.node1_uuid).ok());
  EXPECT_TRUE(c.cns.Get(vol)->keep_after_delete_vm);
  EXPECT_TRUE(c.volume_migrations.by_path[path].protected_from_vm_delete);
}

grpc::Status Expand(Rig& rig, const std::string& volume, int64_t bytes, int64_t limit, bool block,
                    ::csi::v1::ControllerExpandVolumeResponse* resp) {
  ::csi::v1::ControllerExpandVolumeRequest req;
  req.set_volume_id(volume);
  if (bytes > 0) req.mutable_capacity_range()->set_required_bytes(bytes);
  if (limit > 0) req.mutable_capacity_range()->set_limit_bytes(limit);
  if (block) {
    req.mutable_volume_capability()->mutable_block();
    req.mutable_volume_capability()->mutable_access_mode()->set_mode(
        ::csi::v1::VolumeCapability::AccessMode::SINGLE_NODE_WRITER);
  }
  grpc::ServerContext ctx;
  return rig.service.ControllerExpandVolume(&ctx, &req, resp);
}

TEST(ControllerServiceTest, Expand) {
  Rig rig;
  FakeControllerCloud& c = *rig.cloud;
  const std::string vol = c.cns.Add("pvc-1", 1024, "datastore-1", FakeControllerCloud::kClusterId);
  ::csi::v1::ControllerExpandVolumeResponse resp;
  ASSERT_TRUE(Expand(rig, vol, 2 * kGiB, 0, false, &resp).ok());
  EXPECT_EQ(resp.capacity_bytes(), 2 * kGiB);
  EXPECT_TRUE(resp.node_expansion_required());
  EXPECT_EQ(c.cns.Get(vol)->volume.capacity_mb, 2048);
  EXPECT_EQ(c.placement.noted_bytes(), -kGiB);
  // Smaller or equal: OK, nothing asked of CNS, never shrunk.
  const int extends = c.cns.Calls("CnsExtendVolume");
  ASSERT_TRUE(Expand(rig, vol, kGiB, 0, false, &resp).ok());
  EXPECT_EQ(c.cns.Calls("CnsExtendVolume"), extends);
  EXPECT_EQ(resp.capacity_bytes(), 2 * kGiB);
  // Raw block: no node expansion.
  ASSERT_TRUE(Expand(rig, vol, 3 * kGiB, 0, true, &resp).ok());
  EXPECT_FALSE(resp.node_expansion_required());
  EXPECT_EQ(Expand(rig, vol, 5 * kGiB + 1, 5 * kGiB + 1, false, &resp).error_code(),
            Code::OUT_OF_RANGE);
  EXPECT_EQ(Expand(rig, vol, 0, 0, false, &resp).error_code(), Code::INVALID_ARGUMENT);
  EXPECT_EQ(Expand(rig, "5e0c3d7a-0000-4000-8000-0000000000ff", kGiB, 0, false, &resp).error_code(),
            Code::NOT_FOUND);
}

// Issue 54 item 2: a vCenter before 7.0U2 cannot grow an attached disk. The expansion is refused
// before CNS is asked, naming the node and the version; detached, it goes through. From 7.0U2 on
// an attached volume grows.
TEST(ControllerServiceTest, OnlineExpansionNeedsVsphere702) {
  Rig rig;
  FakeControllerCloud& c = *rig.cloud;
  c.cns.SetApiVersion("7.0.1.0");
  const std::string vol = c.cns.Add("pvc-1", 1024, "datastore-1", FakeControllerCloud::kClusterId);
  ASSERT_TRUE(Publish(rig, vol, c.node1_uuid).ok());
  ::csi::v1::ControllerExpandVolumeResponse resp;
  grpc::Status online = Expand(rig, vol, 2 * kGiB, 0, false, &resp);
  EXPECT_EQ(online.error_code(), Code::FAILED_PRECONDITION);
  EXPECT_THAT(online.error_message(), HasSubstr("attached to node " + c.node1_uuid));
  EXPECT_THAT(online.error_message(), HasSubstr("API 7.0.1.0"));
  EXPECT_EQ(c.cns.Calls("CnsExtendVolume"), 0);
  ASSERT_TRUE(Unpublish(rig, vol, c.node1_uuid).ok());
  ASSERT_TRUE(Expand(rig, vol, 2 * kGiB, 0, false, &resp).ok());
  EXPECT_EQ(c.cns.Get(vol)->volume.capacity_mb, 2048);

  c.cns.SetApiVersion("7.0.2.0");
  ASSERT_TRUE(Publish(rig, vol, c.node1_uuid).ok());
  ASSERT_TRUE(Expand(rig, vol, 3 * kGiB, 0, false, &resp).ok());
  EXPECT_EQ(c.cns.Get(vol)->volume.capacity_mb, 3072);
  // An unreadable version: not known to have it.
  c.cns.SetApiVersion("x");
  EXPECT_EQ(Expand(rig, vol, 4 * kGiB, 0, false, &resp).error_code(), Code::FAILED_PRECONDITION);
}

TEST(ControllerServiceTest, ListVolumesPagesOneSnapshotWithPublishedNodes) {
  Rig rig;
  FakeControllerCloud& c = *rig.cloud;
  std::vector<std::string> ids;
  for (int i = 0; i < 5; ++i) {
    ids.push_back(
        c.cns.Add(absl::StrCat("pvc-", i), 1024, "datastore-1", FakeControllerCloud::kClusterId));
  }
  c.cns.Add("not-ours", 1024, "datastore-1", "other-cluster");
  c.cns.AttachTo(ids[2], c.node2_moid);
  std::vector<std::string> listed;
  std::string token;
  int pages = 0;
  do {
    ::csi::v1::ListVolumesRequest req;
    req.set_max_entries(2);
    req.set_starting_token(token);
    ::csi::v1::ListVolumesResponse resp;
    grpc::ServerContext ctx;
    ASSERT_TRUE(rig.service.ListVolumes(&ctx, &req, &resp).ok());
    for (const auto& e : resp.entries()) {
      listed.push_back(e.volume().volume_id());
      if (e.volume().volume_id() == ids[2]) {
        ASSERT_EQ(e.status().published_node_ids_size(), 1);
        EXPECT_EQ(e.status().published_node_ids(0), c.node2_uuid);
      }
    }
    token = resp.next_token();
    ++pages;
    if (pages == 1) c.cns.Add("late", 1024, "datastore-1", FakeControllerCloud::kClusterId);
  } while (!token.empty());
  EXPECT_EQ(pages, 3);
  EXPECT_EQ(listed, ids);  // sorted, ours only, the late one not in this listing
  // A token this driver did not give: Aborted, the spec's code (csi-sanity's rule).
  ::csi::v1::ListVolumesRequest bad;
  bad.set_starting_token("x");
  ::csi::v1::ListVolumesResponse resp;
  grpc::ServerContext ctx;
  EXPECT_EQ(rig.service.ListVolumes(&ctx, &bad, &resp).error_code(), Code::ABORTED);
  // Far more PVs than CNS volumes: the listing is refused (list-volume-threshold).
  c.driver_pvs.count = 100;
  ::csi::v1::ListVolumesRequest fresh;
  EXPECT_EQ(rig.service.ListVolumes(&ctx, &fresh, &resp).error_code(), Code::FAILED_PRECONDITION);
}

// Issue 54 item 1 (the reference's issue 2534): an in-tree volume under CSI migration is listed
// by the VMDK path its CnsVSphereVolumeMigration names, with its published nodes, so the
// external-attacher matches it with the VolumeAttachment it made from that path.
TEST(ControllerServiceTest, ListVolumesNamesMigratedVolumesByTheirPath) {
  Rig rig;
  FakeControllerCloud& c = *rig.cloud;
  const std::string migrated =
      c.cns.Add("intree", 1024, "datastore-1", FakeControllerCloud::kClusterId);
  const std::string plain =
      c.cns.Add("pvc-1", 1024, "datastore-1", FakeControllerCloud::kClusterId);
  const std::string path = "[datastore-1] kubevols/intree.vmdk";
  c.volume_migrations.Add(path, migrated);
  c.cns.AttachTo(migrated, c.node1_moid);
  ::csi::v1::ListVolumesRequest req;
  ::csi::v1::ListVolumesResponse resp;
  grpc::ServerContext ctx;
  ASSERT_TRUE(rig.service.ListVolumes(&ctx, &req, &resp).ok());
  std::map<std::string, std::vector<std::string>> listed;
  for (const auto& e : resp.entries()) {
    listed[e.volume().volume_id()] = {e.status().published_node_ids().begin(),
                                      e.status().published_node_ids().end()};
  }
  EXPECT_EQ(listed,
            (std::map<std::string, std::vector<std::string>>{{path, {c.node1_uuid}}, {plain, {}}}));
}

TEST(ControllerServiceTest, CapacityAndValidation) {
  Rig rig;
  FakeControllerCloud& c = *rig.cloud;
  grpc::ServerContext ctx;
  ::csi::v1::GetCapacityRequest all;
  ::csi::v1::GetCapacityResponse cap;
  ASSERT_TRUE(rig.service.GetCapacity(&ctx, &all, &cap).ok());
  EXPECT_EQ(cap.available_capacity(), 650 * kGiB);
  EXPECT_EQ(cap.maximum_volume_size().value(), 500 * kGiB);
  c.policies.Add("gold", "policy-gold", {"datastore-3"});
  ::csi::v1::GetCapacityRequest gold;
  (*gold.mutable_parameters())["storagepolicyname"] = "gold";
  ASSERT_TRUE(rig.service.GetCapacity(&ctx, &gold, &cap).ok());
  EXPECT_EQ(cap.available_capacity(), 50 * kGiB);
  ::csi::v1::GetCapacityRequest nfs;
  *nfs.add_volume_capabilities() = MountCap("nfs");
  ASSERT_TRUE(rig.service.GetCapacity(&ctx, &nfs, &cap).ok());
  EXPECT_EQ(cap.available_capacity(), 0);

  const std::string vol = c.cns.Add("pvc-1", 1024, "datastore-1", FakeControllerCloud::kClusterId);
  ::csi::v1::ValidateVolumeCapabilitiesRequest v;
  v.set_volume_id(vol);
  *v.add_volume_capabilities() = MountCap();
  ::csi::v1::ValidateVolumeCapabilitiesResponse vr;
  ASSERT_TRUE(rig.service.ValidateVolumeCapabilities(&ctx, &v, &vr).ok());
  EXPECT_TRUE(vr.has_confirmed());
  v.mutable_volume_capabilities(0)->mutable_access_mode()->set_mode(
      ::csi::v1::VolumeCapability::AccessMode::MULTI_NODE_MULTI_WRITER);
  ::csi::v1::ValidateVolumeCapabilitiesResponse refused;
  ASSERT_TRUE(rig.service.ValidateVolumeCapabilities(&ctx, &v, &refused).ok());
  EXPECT_FALSE(refused.has_confirmed());
  EXPECT_THAT(refused.message(), HasSubstr("is a block volume"));
  v.set_volume_id("5e0c3d7a-0000-4000-8000-0000000000ff");
  EXPECT_EQ(rig.service.ValidateVolumeCapabilities(&ctx, &v, &vr).error_code(), Code::NOT_FOUND);
}

}  // namespace
}  // namespace ccm::csi
