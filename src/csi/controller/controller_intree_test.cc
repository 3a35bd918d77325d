// In-tree volumes (CSI migration) whose CNS volume CNS lost while the VMDK stayed (issue 54
// item 9): the controller registers the disk again and goes on; the disk gone too is NotFound
// naming the path. On the in-memory seams (testing/fake_controller.h).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "csi/controller/controller_service.h"
#include "testing/fake_controller.h"

namespace ccm::csi::intree_test {
namespace {

using testing::FakeControllerCloud;
using ::testing::HasSubstr;
using Code = grpc::StatusCode;

constexpr char kPath[] = "[datastore1] kubevols/lost.vmdk";
// As the registrar of FakeControllerCloud writes it (host vc1.example.com, datacenter /dc1).
constexpr char kUrl[] =
    "https://vc1.example.com/folder/kubevols/lost.vmdk?dcPath=%2Fdc1&dsName=datastore1";

struct Rig {
  Rig() : cloud(std::make_shared<FakeControllerCloud>()), service(cloud) {}
  std::shared_ptr<FakeControllerCloud> cloud;
  ControllerService service;

  // The in-tree disk, registered with CNS and recorded as the syncer does; its CNS volume ID.
  std::string Registered() {
    cloud->cns.AddDisk(kUrl, kPath, 1024, "datastore-1");
    vsphere::cns::CreateSpec registration;
    registration.name = "pv-lost";
    registration.backing_disk_url_path = kUrl;
    const std::string id = cloud->cns.CreateVolume(registration).value().volume_id;
    cloud->volume_migrations.Add(kPath, id);
    return id;
  }
  std::string Recorded() { return cloud->volume_migrations.by_path.at(kPath).volume_id; }

  grpc::Status Publish(const std::string& volume) {
    ::csi::v1::ControllerPublishVolumeRequest req;
    req.set_volume_id(volume);
    req.set_node_id(cloud->node1_uuid);
    req.mutable_volume_capability()->mutable_mount()->set_fs_type("ext4");
    req.mutable_volume_capability()->mutable_access_mode()->set_mode(
        ::csi::v1::VolumeCapability::AccessMode::SINGLE_NODE_WRITER);
    grpc::ServerContext ctx;
    ::csi::v1::ControllerPublishVolumeResponse resp;
    return service.ControllerPublishVolume(&ctx, &req, &resp);
  }
  grpc::Status Unpublish(const std::string& volume) {
    ::csi::v1::ControllerUnpublishVolumeRequest req;
    req.set_volume_id(volume);
    req.set_node_id(cloud->node1_uuid);
    grpc::ServerContext ctx;
    ::csi::v1::ControllerUnpublishVolumeResponse resp;
    return service.ControllerUnpublishVolume(&ctx, &req, &resp);
  }
  grpc::Status Delete(const std::string& volume) {
    ::csi::v1::DeleteVolumeRequest req;
    req.set_volume_id(volume);
    grpc::ServerContext ctx;
    ::csi::v1::DeleteVolumeResponse resp;
    return service.DeleteVolume(&ctx, &req, &resp);
  }
};

TEST(ControllerInTreeTest, APublishRegistersTheDiskOfALostVolumeAgain) {
  Rig rig;
  FakeControllerCloud& c = *rig.cloud;
  const std::string stale = rig.Registered();
  ASSERT_TRUE(c.cns.Delete(stale));  // CNS reset: the volume is gone, the VMDK stays

  grpc::Status s = rig.Publish(kPath);
  ASSERT_TRUE(s.ok()) << s.error_message();
  const std::string now = rig.Recorded();
  EXPECT_NE(now, stale);
  EXPECT_EQ(c.cns.Get(now)->attached_vm, c.node1_moid);
  EXPECT_EQ(c.cns.Get(now)->file_path, kPath);
  EXPECT_TRUE(c.cns.Get(now)->keep_after_delete_vm);  // protected again, as at first
  EXPECT_EQ(c.volume_migrations.forgotten, std::vector<std::string>{stale});

  // Asked once per process: a second publish asks CNS nothing more about the volume.
  const int queries = c.cns.Calls("CnsQueryVolume");
  ASSERT_TRUE(rig.Publish(kPath).ok());
  EXPECT_EQ(c.cns.Calls("CnsQueryVolume"), queries);
}

TEST(ControllerInTreeTest, AVolumeLostAfterItWasAskedForIsFoundOnTheNextCall) {
  Rig rig;
  FakeControllerCloud& c = *rig.cloud;
  rig.Registered();
  ASSERT_TRUE(rig.Publish(kPath).ok());
  ASSERT_TRUE(rig.Unpublish(kPath).ok());
  const std::string first = rig.Recorded();
  ASSERT_TRUE(c.cns.Delete(first));  // lost while the controller runs

  grpc::Status s = rig.Publish(kPath);  // the attach's NotFound: asked again, tried once more
  ASSERT_TRUE(s.ok()) << s.error_message();
  const std::string second = rig.Recorded();
  EXPECT_NE(second, first);
  EXPECT_EQ(c.cns.Get(second)->attached_vm, c.node1_moid);

  ASSERT_TRUE(rig.Unpublish(kPath).ok());
  ASSERT_TRUE(c.cns.Delete(second));
  s = rig.Delete(kPath);  // the disk is deleted, not only forgotten
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_TRUE(c.cns.All().empty());
  EXPECT_EQ(c.cns.Calls("CnsDeleteVolume"), 2);  // NotFound, then the volume registered again
  EXPECT_TRUE(c.volume_migrations.by_path.empty());
}

TEST(ControllerInTreeTest, TheDiskGoneTooIsNotFoundNamingThePath) {
  Rig rig;
  FakeControllerCloud& c = *rig.cloud;
  const std::string stale = "5e0c3d7a-0000-4000-8000-00000000dead";
  c.volume_migrations.Add(kPath, stale);  // no such disk, no such volume

  grpc::Status s = rig.Publish(kPath);
  EXPECT_EQ(s.error_code(), Code::NOT_FOUND) << s.error_message();
  EXPECT_THAT(s.error_message(), HasSubstr(kPath));
  EXPECT_THAT(s.error_message(), HasSubstr(stale));
  EXPECT_THAT(s.error_message(), HasSubstr("gone too"));
  EXPECT_EQ(rig.Recorded(), stale);        // kept: nothing is thrown away on a publish
  EXPECT_TRUE(rig.Unpublish(kPath).ok());  // nothing can be attached
  EXPECT_TRUE(rig.Delete(kPath).ok());     // the spec: a volume that is gone is deleted
  EXPECT_TRUE(c.volume_migrations.by_path.empty());

  // CNS cannot be asked: Unavailable, the record kept.
  c.volume_migrations.Add(kPath, stale);
  c.cns.Fail("CnsQueryVolume", absl::UnavailableError("vCenter down"));
  s = rig.Publish(kPath);
  EXPECT_EQ(s.error_code(), Code::UNAVAILABLE) << s.error_message();
  EXPECT_THAT(s.error_message(), HasSubstr(kPath));
  EXPECT_EQ(rig.Recorded(), stale);
}

}  // namespace
}  // namespace ccm::csi::intree_test
