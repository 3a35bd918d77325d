// End to end with the Controller service on the vCenter simulator's CNS and the node plugin on
// real loop devices. A CNS volume is a real (sparse) file in the simulator's datastore directory;
// ControllerPublishVolume's attach shows on the node as that file on a fresh loop device, linked
// under wwn-0x<disk UUID> as udev would. So the data seen through the node plugin is the data
// of the CNS volume, and a snapshot (a copy of that file) and a restore can be checked byte for
// byte:
//  - VolumeFromCreateToDelete: create, publish, stage, write, unstage, stage again (the data is
//    there), unpublish, delete;
//  - SnapshotRestoresTheDataOfItsMoment: write a file, snapshot, write another, restore the
//    snapshot into a new volume and stage it: the first file is there, the later one is not;
//  - MigratedInTreeVolumeKeepsItsData: a VMDK the in-tree plugin made and filled, registered
//    with CNS as the syncer does, is published, staged and expanded through its VMDK path (the
//    handle CSI migration gives), its file intact, then unpublished and deleted.
#include <linux/capability.h>
#include <sys/statvfs.h>

#include <cstdio>
#include <cstdlib>
#include <memory>

#include "absl/strings/str_cat.h"
#include "csi/core/constants.h"
#include "csi/migration/registrar.h"
#include "fixtures/kube_emulator/kube_emulator.h"
#include "gtest/gtest.h"
#include "integration/csi/controller_env.h"
#include "integration/csi/node_env.h"
#include "kube/client.h"
#include "kube/config.h"

namespace ccm::csi::testing {
namespace {

// The controller on the simulator and the node plugin of node-a1, whose Node object carries
// the providerID our CCM writes.
class E2e {
 public:
  static std::unique_ptr<E2e> Start() {
    auto e = std::unique_ptr<E2e>(new E2e());
    auto controller = ControllerEnv::Start(ZonesSpec());
    EXPECT_TRUE(controller.ok()) << controller.status();
    if (!controller.ok()) return nullptr;
    e->controller_ = *std::move(controller);
    if (!e->StartNode()) return nullptr;
    return e;
  }

  ::csi::v1::Controller::Stub& c() { return controller_->controller(); }
  ::csi::v1::Node::Stub& node() { return node_->node(); }
  NodeEnv& node_env() { return *node_; }
  ControllerEnv& controller_env() { return *controller_; }
  const ::csi::v1::NodeGetInfoResponse& info() const { return info_; }

  // CreateVolume in the node's zone (from `snapshot` when set); the volume, or "" on failure.
  std::string Create(const std::string& name, const std::string& snapshot = "") {
    ::csi::v1::CreateVolumeRequest req = CreateReq(name, kDiskSize);
    *req.mutable_accessibility_requirements()->add_requisite() = info_.accessible_topology();
    if (!snapshot.empty()) {
      req.mutable_volume_content_source()->mutable_snapshot()->set_snapshot_id(snapshot);
    }
    ::csi::v1::CreateVolumeResponse resp;
    grpc::ClientContext ctx;
    grpc::Status s = c().CreateVolume(&ctx, req, &resp);
    EXPECT_TRUE(s.ok()) << s.error_message();
    if (!snapshot.empty()) {
      EXPECT_EQ(resp.volume().content_source().snapshot().snapshot_id(), snapshot);
    }
    return resp.volume().volume_id();
  }

  // ControllerPublishVolume to the node, then the disk appears on it: the CNS volume's file on a
  // loop device, linked as wwn-0x<disk UUID>. The publish context.
  // `cns_id`: the CNS volume when `volume` is an in-tree VMDK path.
  google::protobuf::Map<std::string, std::string> Attach(const std::string& volume,
                                                         const std::string& cns_id = "") {
    ::csi::v1::ControllerPublishVolumeRequest pub;
    pub.set_volume_id(volume);
    pub.set_node_id(info_.node_id());
    *pub.mutable_volume_capability() = NodeMountCap("ext4");
    ::csi::v1::ControllerPublishVolumeResponse published;
    grpc::ClientContext ctx;
    grpc::Status s = c().ControllerPublishVolume(&ctx, pub, &published);
    EXPECT_TRUE(s.ok()) << s.error_message();
    const std::string disk_uuid = published.publish_context().at(std::string(kPublishDiskUuid));
    EXPECT_EQ(disk_uuid.size(), 32u) << disk_uuid;
    auto cns = controller_->CnsVolume(cns_id.empty() ? volume : cns_id);
    EXPECT_TRUE(cns.ok()) << cns.status();
    if (!cns.ok()) return {};
    auto loop = LoopDevice::Attach(cns->file);
    EXPECT_TRUE(loop.ok()) << loop.status();
    if (!loop.ok()) return {};
    EXPECT_TRUE(node_->Link(disk_uuid, (*loop)->path()).ok());
    disks_[volume] = *std::move(loop);
    return published.publish_context();
  }

  // NodeStage + NodePublish at a new target; the target, "" on failure.
  std::string Mount(const std::string& volume,
                    const google::protobuf::Map<std::string, std::string>& context) {
    const auto cap = NodeMountCap("ext4");
    staging_[volume] = node_->NewStagingDir();
    ::csi::v1::NodeStageVolumeRequest stage;
    stage.set_volume_id(volume);
    *stage.mutable_publish_context() = context;
    stage.set_staging_target_path(staging_[volume]);
    *stage.mutable_volume_capability() = cap;
    grpc::ClientContext c1;
    ::csi::v1::NodeStageVolumeResponse r1;
    grpc::Status s = node().NodeStageVolume(&c1, stage, &r1);
    EXPECT_TRUE(s.ok()) << s.error_message();
    const std::string target = node_->NewTargetPath();
    ::csi::v1::NodePublishVolumeRequest pub;
    pub.set_volume_id(volume);
    *pub.mutable_publish_context() = context;
    pub.set_staging_target_path(staging_[volume]);
    pub.set_target_path(target);
    *pub.mutable_volume_capability() = cap;
    grpc::ClientContext c2;
    ::csi::v1::NodePublishVolumeResponse r2;
    s = node().NodePublishVolume(&c2, pub, &r2);
    EXPECT_TRUE(s.ok()) << s.error_message();
    return s.ok() ? target : "";
  }

  void Unmount(const std::string& volume, const std::string& target) {
    grpc::ClientContext c1, c2;
    ::csi::v1::NodeUnpublishVolumeResponse r1;
    ::csi::v1::NodeUnstageVolumeResponse r2;
    EXPECT_TRUE(node().NodeUnpublishVolume(&c1, UnpublishReq(volume, target), &r1).ok());
    EXPECT_TRUE(node().NodeUnstageVolume(&c2, UnstageReq(volume, staging_[volume]), &r2).ok());
  }

  // ControllerUnpublishVolume; the disk leaves the node.
  void Detach(const std::string& volume) {
    ::csi::v1::ControllerUnpublishVolumeRequest r;
    r.set_volume_id(volume);
    r.set_node_id(info_.node_id());
    grpc::ClientContext ctx;
    ::csi::v1::ControllerUnpublishVolumeResponse resp;
    grpc::Status s = c().ControllerUnpublishVolume(&ctx, r, &resp);
    EXPECT_TRUE(s.ok()) << s.error_message();
    disks_.erase(volume);
  }

  LoopDevice* disk(const std::string& volume) { return disks_.at(volume).get(); }

  grpc::Status Delete(const std::string& volume) {
    ::csi::v1::DeleteVolumeRequest r;
    r.set_volume_id(volume);
    grpc::ClientContext ctx;
    ::csi::v1::DeleteVolumeResponse resp;
    return c().DeleteVolume(&ctx, r, &resp);
  }

 private:
  E2e() = default;
  bool StartNode() {
    EXPECT_TRUE(emu_.Start().ok());
    const std::string vm_uuid = controller_->VmUuid("node-a1");
    EXPECT_FALSE(vm_uuid.empty());
    EXPECT_TRUE(emu_.Create("nodes", {{"apiVersion", "v1"},
                                      {"kind", "Node"},
                                      {"metadata",
                                       {{"name", "node-a1"},
                                        {"labels",
                                         {{"topology.kubernetes.io/zone", "zone-a"},
                                          {"topology.kubernetes.io/region", "region-1"}}}}},
                                      {"spec", {{"providerID", "vsphere://" + vm_uuid}}}})
                    .ok());
    node::NodeInfoOptions info;
    info.node_name = "node-a1";
    info.topology.zone_category = "k8s-zone";
    info.topology.region_category = "k8s-region";
    const std::string kubeconfig = absl::StrCat(TestDirPrefix(), "e2e-kubeconfig");
    EXPECT_TRUE(emu_.WriteKubeconfig(kubeconfig).ok());
    auto cfg = kube::LoadKubeconfig(kubeconfig);
    std::remove(kubeconfig.c_str());
    EXPECT_TRUE(cfg.ok()) << cfg.status();
    if (!cfg.ok()) return false;
    auto client = kube::RestClient::New(*cfg);
    EXPECT_TRUE(client.ok()) << client.status();
    if (!client.ok()) return false;
    info.client = std::shared_ptr<kube::Client>(std::move(*client));
    auto env = NodeEnv::Start(absl::Seconds(20), info);
    EXPECT_TRUE(env.ok()) << env.status();
    if (!env.ok()) return false;
    node_ = *std::move(env);
    grpc::ClientContext ctx;
    grpc::Status s = node().NodeGetInfo(&ctx, {}, &info_);
    EXPECT_TRUE(s.ok()) << s.error_message();
    EXPECT_EQ(info_.accessible_topology().segments().at(kZoneKey), "zone-a");
    return s.ok();
  }

  std::unique_ptr<ControllerEnv> controller_;
  ccm::testing::KubeEmulator emu_;
  std::unique_ptr<NodeEnv> node_;
  ::csi::v1::NodeGetInfoResponse info_;
  std::map<std::string, std::unique_ptr<LoopDevice>> disks_;
  std::map<std::string, std::string> staging_;
};

TEST(NodeControllerE2eTest, VolumeFromCreateToDelete) {
  auto e = E2e::Start();
  ASSERT_NE(e, nullptr);
  const std::string volume = e->Create("pvc-node-e2e");
  ASSERT_FALSE(volume.empty());
  const auto context = e->Attach(volume);
  ASSERT_FALSE(context.empty());

  const std::string target = e->Mount(volume, context);
  ASSERT_FALSE(target.empty());
  ASSERT_TRUE(WriteFile(target + "/app.db", "rows").ok());
  e->Unmount(volume, target);
  EXPECT_TRUE(MountsUnder(e->node_env().dir()).empty());

  // The pod moves back: the same volume stages again with its data.
  const std::string target2 = e->Mount(volume, context);
  auto text = ReadFile(target2 + "/app.db");
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_EQ(*text, "rows");
  e->Unmount(volume, target2);

  e->Detach(volume);
  grpc::Status s = e->Delete(volume);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_FALSE(e->controller_env().CnsVolume(volume).ok());
}

TEST(NodeControllerE2eTest, SnapshotRestoresTheDataOfItsMoment) {
  auto e = E2e::Start();
  ASSERT_NE(e, nullptr);
  const std::string volume = e->Create("pvc-snap-src");
  ASSERT_FALSE(volume.empty());
  const auto context = e->Attach(volume);
  ASSERT_FALSE(context.empty());
  const std::string target = e->Mount(volume, context);
  ASSERT_FALSE(target.empty());
  ASSERT_TRUE(WriteFile(target + "/first.txt", "before the snapshot").ok());

  // What an application-consistent backup does: the filesystem is quiesced (here: unmounted)
  // while the snapshot is taken.
  e->Unmount(volume, target);
  ::csi::v1::CreateSnapshotRequest snap;
  snap.set_name("snapshot-e2e");
  snap.set_source_volume_id(volume);
  ::csi::v1::CreateSnapshotResponse made;
  {
    grpc::ClientContext ctx;
    grpc::Status s = e->c().CreateSnapshot(&ctx, snap, &made);
    ASSERT_TRUE(s.ok()) << s.error_message();
  }
  EXPECT_TRUE(made.snapshot().ready_to_use());
  EXPECT_EQ(made.snapshot().size_bytes(), static_cast<int64_t>(kDiskSize));

  const std::string again = e->Mount(volume, context);
  ASSERT_TRUE(WriteFile(again + "/later.txt", "after the snapshot").ok());
  e->Unmount(volume, again);

  // Restore into a new volume and stage it on the node.
  const std::string restored = e->Create("pvc-snap-restored", made.snapshot().snapshot_id());
  ASSERT_FALSE(restored.empty());
  const auto restored_context = e->Attach(restored);
  ASSERT_FALSE(restored_context.empty());
  const std::string view = e->Mount(restored, restored_context);
  ASSERT_FALSE(view.empty());
  auto first = ReadFile(view + "/first.txt");
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(*first, "before the snapshot");
  EXPECT_FALSE(ReadFile(view + "/later.txt").ok());  // written after the snapshot
  e->Unmount(restored, view);

  // The source cannot go while its snapshot exists; everything goes in order.
  e->Detach(volume);
  e->Detach(restored);
  EXPECT_EQ(e->Delete(volume).error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  ::csi::v1::DeleteSnapshotRequest del;
  del.set_snapshot_id(made.snapshot().snapshot_id());
  ::csi::v1::DeleteSnapshotResponse del_resp;
  grpc::ClientContext ctx;
  ASSERT_TRUE(e->c().DeleteSnapshot(&ctx, del, &del_resp).ok());
  EXPECT_TRUE(e->Delete(volume).ok());
  EXPECT_TRUE(e->Delete(restored).ok());
  EXPECT_TRUE(MountsUnder(e->node_env().dir()).empty());
}

// The in-tree plugin's way: an ext4 filesystem on the whole VMDK with the application's file,
// written without mounting (debugfs), so nothing of this driver touched it.
void FillAsInTree(const std::string& file, const std::string& name, const std::string& text) {
  const std::string src = absl::StrCat(TestDirPrefix(), "vcp-data");
  ASSERT_TRUE(WriteFile(src, text).ok());
  ASSERT_EQ(std::system(absl::StrCat("mkfs.ext4 -q -F ", file).c_str()), 0);
  ASSERT_EQ(std::system(absl::StrCat("debugfs -w -R 'write ", src, " ", name, "' ", file,
                                     " >/dev/null 2>&1")
                            .c_str()),
            0);
  std::remove(src.c_str());
}

TEST(NodeControllerE2eTest, MigratedInTreeVolumeKeepsItsData) {
  auto e = E2e::Start();
  ASSERT_NE(e, nullptr);
  ControllerEnv& env = e->controller_env();
  auto vmdk =
      env.sim().CreateInTreeDisk("dc1", "ds-shared", "kubevols/vcp-e2e.vmdk", kDiskSize / kMiB);
  ASSERT_TRUE(vmdk.ok()) << vmdk.status();
  FillAsInTree(vmdk->file, "orders.db", "written under the in-tree plugin");

  // The syncer's registration (its own tests run it from PV events).
  InTreeRegistrarOptions ro;
  ro.vcenter_host = "127.0.0.1";
  ro.datacenters = []() -> absl::StatusOr<std::vector<std::string>> {
    return std::vector<std::string>{"/dc1"};
  };
  ro.cluster.cluster_id = env.config().global.cluster_id;
  InTreeRegistrar registrar(*env.backend().vcenters().front().cns, *env.backend().migrations(),
                            std::move(ro));
  absl::StatusOr<std::string> cns_id = registrar.Register(vmdk->path, "pv-vcp-e2e");
  ASSERT_TRUE(cns_id.ok()) << cns_id.status();

  // CSI migration: every call names the VMDK path.
  const std::string& handle = vmdk->path;
  const auto context = e->Attach(handle, *cns_id);
  ASSERT_FALSE(context.empty());
  const std::string target = e->Mount(handle, context);
  ASSERT_FALSE(target.empty());
  auto text = ReadFile(target + "/orders.db");
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_EQ(*text, "written under the in-tree plugin");  // staged as it was, not formatted
  ASSERT_TRUE(WriteFile(target + "/after.txt", "written through CSI").ok());

  // Online expansion: CNS grows the VMDK, the guest rescans, the filesystem grows.
  ::csi::v1::ControllerExpandVolumeRequest grow;
  grow.set_volume_id(handle);
  grow.mutable_capacity_range()->set_required_bytes(2 * kDiskSize);
  ::csi::v1::ControllerExpandVolumeResponse grown;
  {
    grpc::ClientContext ctx;
    grpc::Status s = e->c().ControllerExpandVolume(&ctx, grow, &grown);
    ASSERT_TRUE(s.ok()) << s.error_message();
  }
  ASSERT_TRUE(e->disk(handle)->Grow(2 * kDiskSize).ok());
  ::csi::v1::NodeExpandVolumeRequest node_grow;
  node_grow.set_volume_id(handle);
  node_grow.set_volume_path(target);
  node_grow.mutable_capacity_range()->set_required_bytes(2 * kDiskSize);
  ::csi::v1::NodeExpandVolumeResponse node_grown;
  grpc::ClientContext grow_ctx;
  grpc::Status grew = e->node().NodeExpandVolume(&grow_ctx, node_grow, &node_grown);
  struct statvfs fs;
  ASSERT_EQ(statvfs(target.c_str(), &fs), 0);
  if (HasCapability(CAP_SYS_RESOURCE)) {
    ASSERT_TRUE(grew.ok()) << grew.error_message();
    EXPECT_GT(fs.f_blocks * fs.f_frsize, kDiskSize * 3 / 2);
  } else {  // this machine cannot grow a mounted ext4 (node_device_test): said so, data kept
    EXPECT_EQ(grew.error_code(), grpc::StatusCode::FAILED_PRECONDITION) << grew.error_message();
    EXPECT_NE(grew.error_message().find("CAP_SYS_RESOURCE"), std::string::npos);
  }
  EXPECT_TRUE(ReadFile(target + "/orders.db").ok());

  e->Unmount(handle, target);
  e->Detach(handle);
  grpc::Status s = e->Delete(handle);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_FALSE(env.CnsVolume(*cns_id).ok());
  EXPECT_FALSE(env.api().Get("cnsvspherevolumemigrations", "", *cns_id).ok());
  EXPECT_TRUE(MountsUnder(e->node_env().dir()).empty());
}

}  // namespace
}  // namespace ccm::csi::testing
