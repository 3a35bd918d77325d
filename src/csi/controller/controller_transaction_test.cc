// CNS transactions (issue 54 item 7): from vCenter 9.1 CreateVolume sends the UID of the PV name
// as the new volume's ID, and a create CNS already has under that ID is answered from it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "csi/controller/controller_service.h"
#include "testing/fake_controller.h"

namespace ccm::csi::transaction_test {
namespace {

using testing::FakeControllerCloud;
using ::testing::HasSubstr;
using Code = grpc::StatusCode;
constexpr int64_t kGiB = int64_t{1} << 30;
constexpr char kUid[] = "7d2f6d43-5a0c-4f3e-9c55-0d3c2a9b1e11";

struct Rig {
  Rig() : cloud(std::make_shared<FakeControllerCloud>()), service(cloud) {}
  std::shared_ptr<FakeControllerCloud> cloud;
  ControllerService service;

  grpc::Status Create(const std::string& name, int64_t bytes,
                      ::csi::v1::CreateVolumeResponse* resp) {
    ::csi::v1::CreateVolumeRequest req;
    req.set_name(name);
    req.mutable_capacity_range()->set_required_bytes(bytes);
    auto* cap = req.add_volume_capabilities();
    cap->mutable_mount()->set_fs_type("ext4");
    cap->mutable_access_mode()->set_mode(
        ::csi::v1::VolumeCapability::AccessMode::SINGLE_NODE_WRITER);
    grpc::ServerContext ctx;
    return service.CreateVolume(&ctx, &req, resp);
  }
  // A volume CNS made for a create whose answer never came back, not listed by name yet.
  void LostCreate(const std::string& name, const std::string& id, int64_t capacity_mb) {
    vsphere::cns::CreateSpec spec;
    spec.name = name;
    spec.volume_id = id;
    spec.capacity_mb = capacity_mb;
    spec.datastores = {vsphere::Moref{"Datastore", "datastore-1"}};
    spec.metadata.container_cluster.cluster_id = FakeControllerCloud::kClusterId;
    ASSERT_TRUE(cloud->cns.CreateVolume(spec).ok());
    cloud->cns.HideName(id);
  }
};

TEST(ControllerTransactionTest, From91TheVolumeIdIsTheUidOfTheName) {
  Rig rig;
  rig.cloud->cns.SetApiVersion("9.1.0.0");
  ::csi::v1::CreateVolumeResponse resp;
  grpc::Status s = rig.Create(std::string("pvc-") + kUid, kGiB, &resp);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(resp.volume().volume_id(), kUid);
  // A name without a UUID (csi-sanity's): CNS chooses, the create is not refused.
  ::csi::v1::CreateVolumeResponse other;
  ASSERT_TRUE(rig.Create("sanity-volume-1", kGiB, &other).ok());
  EXPECT_NE(other.volume().volume_id(), "");
  EXPECT_EQ(rig.cloud->cns.All().size(), 2u);
}

TEST(ControllerTransactionTest, BeforeItNoIdIsSent) {
  Rig rig;
  rig.cloud->cns.SetApiVersion("8.0.3.0");  // the fake refuses a volumeId as vCenter would
  ::csi::v1::CreateVolumeResponse resp;
  grpc::Status s = rig.Create(std::string("pvc-") + kUid, kGiB, &resp);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_NE(resp.volume().volume_id(), kUid);
}

TEST(ControllerTransactionTest, ACreateCnsHasAlreadyIsItsAnswer) {
  Rig rig;
  FakeControllerCloud& c = *rig.cloud;
  c.cns.SetApiVersion("9.1.0.0");
  const std::string name = std::string("pvc-") + kUid;
  rig.LostCreate(name, kUid, 1024);
  ::csi::v1::CreateVolumeResponse resp;
  grpc::Status s = rig.Create(name, kGiB, &resp);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(resp.volume().volume_id(), kUid);
  EXPECT_EQ(resp.volume().capacity_bytes(), kGiB);
  EXPECT_EQ(c.cns.All().size(), 1u);  // the same volume, not a second one (nor a re-creation)
  EXPECT_EQ(c.cns.Calls("CnsDeleteVolume"), 0);
}

TEST(ControllerTransactionTest, AnIncompatibleOrForeignVolumeOfTheIdIsAlreadyExists) {
  Rig rig;
  FakeControllerCloud& c = *rig.cloud;
  c.cns.SetApiVersion("9.1.0.0");
  const std::string uid2 = "00000000-0000-4000-8000-0000000000a2";
  rig.LostCreate("pvc-" + uid2, uid2, 1024);
  ::csi::v1::CreateVolumeResponse resp;
  grpc::Status bigger = rig.Create("pvc-" + uid2, 5 * kGiB, &resp);
  EXPECT_EQ(bigger.error_code(), Code::ALREADY_EXISTS) << bigger.error_message();
  EXPECT_THAT(bigger.error_message(), HasSubstr("capacity"));

  const std::string uid3 = "00000000-0000-4000-8000-0000000000a3";
  rig.LostCreate("another-name", uid3, 1024);
  grpc::Status foreign = rig.Create("pvc-" + uid3, kGiB, &resp);
  EXPECT_EQ(foreign.error_code(), Code::ALREADY_EXISTS) << foreign.error_message();
  EXPECT_THAT(foreign.error_message(), HasSubstr("named \"another-name\""));
  EXPECT_EQ(c.cns.All().size(), 2u);  // nothing deleted, nothing more made
}

}  // namespace
}  // namespace ccm::csi::transaction_test
