// End to end with the Controller service on the vCenter simulator's CNS: CreateVolume ->
// ControllerPublishVolume to the node that NodeGetInfo names (its ID read from the Node object's
// providerID) -> the disk UUID of the simulator's attach linked to a fresh loop device, as udev
// would -> NodeStage/NodePublish -> write -> NodeUnpublish/NodeUnstage -> stage again: the data is
// there -> ControllerUnpublishVolume -> DeleteVolume.
#include <cstdio>

#include "absl/strings/str_cat.h"
#include "csi/core/constants.h"
#include "fixtures/kube_emulator/kube_emulator.h"
#include "gtest/gtest.h"
#include "integration/csi/controller_env.h"
#include "integration/csi/node_env.h"
#include "kube/client.h"
#include "kube/config.h"

namespace ccm::csi::testing {
namespace {

TEST(NodeControllerE2eTest, VolumeFromCreateToDelete) {
  auto controller = ControllerEnv::Start(ZonesSpec());
  ASSERT_TRUE(controller.ok()) << controller.status();
  auto& c = (*controller)->controller();

  // The node plugin of node-a1: its Node object carries the providerID our CCM writes.
  ccm::testing::KubeEmulator emu;
  ASSERT_TRUE(emu.Start().ok());
  const std::string vm_uuid = (*controller)->VmUuid("node-a1");
  ASSERT_FALSE(vm_uuid.empty());
  ASSERT_TRUE(emu.Create("nodes", {{"apiVersion", "v1"},
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
  ASSERT_TRUE(emu.WriteKubeconfig(kubeconfig).ok());
  auto cfg = kube::LoadKubeconfig(kubeconfig);
  ASSERT_TRUE(cfg.ok()) << cfg.status();
  std::remove(kubeconfig.c_str());
  auto client = kube::RestClient::New(*cfg);
  ASSERT_TRUE(client.ok()) << client.status();
  info.client = std::shared_ptr<kube::Client>(std::move(*client));
  auto env = NodeEnv::Start(absl::Seconds(20), info);
  ASSERT_TRUE(env.ok()) << env.status();
  auto& node = (*env)->node();

  ::csi::v1::NodeGetInfoResponse node_info;
  {
    grpc::ClientContext ctx;
    grpc::Status s = node.NodeGetInfo(&ctx, {}, &node_info);
    ASSERT_TRUE(s.ok()) << s.error_message();
  }
  EXPECT_EQ(node_info.accessible_topology().segments().at(kZoneKey), "zone-a");

  // CreateVolume, in the node's zone.
  ::csi::v1::CreateVolumeRequest create = CreateReq("pvc-node-e2e", 512 * int64_t{1024 * 1024});
  *create.mutable_accessibility_requirements()->add_requisite() = node_info.accessible_topology();
  ::csi::v1::CreateVolumeResponse created;
  {
    grpc::ClientContext ctx;
    grpc::Status s = c.CreateVolume(&ctx, create, &created);
    ASSERT_TRUE(s.ok()) << s.error_message();
  }
  const std::string volume = created.volume().volume_id();

  // ControllerPublish to the node ID the node plugin announced.
  const auto cap = NodeMountCap("ext4");
  ::csi::v1::ControllerPublishVolumeRequest pub;
  pub.set_volume_id(volume);
  pub.set_node_id(node_info.node_id());
  *pub.mutable_volume_capability() = cap;
  ::csi::v1::ControllerPublishVolumeResponse published;
  {
    grpc::ClientContext ctx;
    grpc::Status s = c.ControllerPublishVolume(&ctx, pub, &published);
    ASSERT_TRUE(s.ok()) << s.error_message();
  }
  const std::string disk_uuid = published.publish_context().at(std::string(kPublishDiskUuid));
  ASSERT_EQ(disk_uuid.size(), 32u) << disk_uuid;

  // The attach shows up on the node: a fresh loop device under wwn-0x<disk UUID>.
  auto loop = LoopDevice::Create((*env)->dir(), kDiskSize);
  ASSERT_TRUE(loop.ok()) << loop.status();
  ASSERT_TRUE((*env)->Link(disk_uuid, (*loop)->path()).ok());

  const std::string staging = (*env)->NewStagingDir();
  auto stage = [&] {
    ::csi::v1::NodeStageVolumeRequest r;
    r.set_volume_id(volume);
    *r.mutable_publish_context() = published.publish_context();
    r.set_staging_target_path(staging);
    *r.mutable_volume_capability() = cap;
    *r.mutable_volume_context() = created.volume().volume_context();
    grpc::ClientContext ctx;
    ::csi::v1::NodeStageVolumeResponse resp;
    return node.NodeStageVolume(&ctx, r, &resp);
  };
  auto publish = [&](const std::string& target) {
    ::csi::v1::NodePublishVolumeRequest r;
    r.set_volume_id(volume);
    *r.mutable_publish_context() = published.publish_context();
    r.set_staging_target_path(staging);
    r.set_target_path(target);
    *r.mutable_volume_capability() = cap;
    grpc::ClientContext ctx;
    ::csi::v1::NodePublishVolumeResponse resp;
    return node.NodePublishVolume(&ctx, r, &resp);
  };
  auto unpublish_unstage = [&](const std::string& target) {
    grpc::ClientContext c1, c2;
    ::csi::v1::NodeUnpublishVolumeResponse r1;
    ::csi::v1::NodeUnstageVolumeResponse r2;
    EXPECT_TRUE(node.NodeUnpublishVolume(&c1, UnpublishReq(volume, target), &r1).ok());
    EXPECT_TRUE(node.NodeUnstageVolume(&c2, UnstageReq(volume, staging), &r2).ok());
  };

  const std::string target = (*env)->NewTargetPath();
  grpc::Status s = stage();
  ASSERT_TRUE(s.ok()) << s.error_message();
  s = publish(target);
  ASSERT_TRUE(s.ok()) << s.error_message();
  ASSERT_TRUE(WriteFile(target + "/app.db", "rows").ok());
  unpublish_unstage(target);
  EXPECT_TRUE(MountsUnder((*env)->dir()).empty());

  // The pod moves back: the same volume stages again with its data.
  const std::string target2 = (*env)->NewTargetPath();
  ASSERT_TRUE(stage().ok());
  ASSERT_TRUE(publish(target2).ok());
  auto text = ReadFile(target2 + "/app.db");
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_EQ(*text, "rows");
  unpublish_unstage(target2);

  // Detach and delete.
  {
    ::csi::v1::ControllerUnpublishVolumeRequest r;
    r.set_volume_id(volume);
    r.set_node_id(node_info.node_id());
    grpc::ClientContext ctx;
    ::csi::v1::ControllerUnpublishVolumeResponse resp;
    s = c.ControllerUnpublishVolume(&ctx, r, &resp);
    ASSERT_TRUE(s.ok()) << s.error_message();
  }
  (*loop).reset();  // the disk leaves the node
  {
    ::csi::v1::DeleteVolumeRequest r;
    r.set_volume_id(volume);
    grpc::ClientContext ctx;
    ::csi::v1::DeleteVolumeResponse resp;
    s = c.DeleteVolume(&ctx, r, &resp);
    ASSERT_TRUE(s.ok()) << s.error_message();
  }
  auto gone = (*controller)->CnsVolume(volume);
  EXPECT_FALSE(gone.ok());
}

}  // namespace
}  // namespace ccm::csi::testing
