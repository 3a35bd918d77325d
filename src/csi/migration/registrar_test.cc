#include "csi/migration/registrar.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "testing/fake_controller.h"

namespace ccm::csi::registrar_test {
namespace {

using ::testing::HasSubstr;

constexpr char kPath[] = "[datastore1] kubevols/pvc-1.vmdk";

struct Rig {
  testing::FakeCns cns;
  testing::FakeMigrations migrations;
  std::vector<std::string> datacenters = {"/dc0", "/dc1"};
  InTreeRegistrar registrar{cns, migrations, Options()};

  InTreeRegistrarOptions Options() {
    InTreeRegistrarOptions o;
    o.vcenter_host = "vc.example.com";
    o.datacenters = [this]() -> absl::StatusOr<std::vector<std::string>> { return datacenters; };
    o.cluster.cluster_id = "cluster-1";
    o.policy_id_of = [](const std::string& name) -> absl::StatusOr<std::string> {
      if (name == "gold") return std::string("policy-gold");
      return absl::NotFoundError("no storage policy " + name);
    };
    return o;
  }
};

TEST(InTreeRegistrarTest, RegistersOnceInTheDatacenterThatHasTheDisk) {
  Rig rig;
  rig.cns.AddDisk(
      "https://vc.example.com/folder/kubevols/pvc-1.vmdk?dcPath=%2Fdc1&dsName=datastore1", kPath,
      2048, "datastore-1");
  absl::StatusOr<std::string> id = rig.registrar.Register(kPath, "pv-1", "gold");
  ASSERT_TRUE(id.ok()) << id.status();
  EXPECT_EQ(rig.cns.Calls("CnsCreateVolume"), 2);  // /dc0 has no such disk
  std::optional<testing::FakeCns::Stored> v = rig.cns.Get(*id);
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->volume.name, "pv-1");
  EXPECT_EQ(v->volume.capacity_mb, 2048);
  EXPECT_EQ(v->volume.storage_policy_id, "policy-gold");
  EXPECT_EQ(v->volume.metadata.container_cluster.cluster_id, "cluster-1");
  EXPECT_EQ(rig.migrations.by_path.at(kPath).volume_id, *id);
  EXPECT_FALSE(rig.migrations.by_path.at(kPath).protected_from_vm_delete);

  // Known: no CNS call. Its object lost (a crash before it was saved): CNS names the volume.
  EXPECT_EQ(rig.registrar.Register(kPath, "pv-1").value(), *id);
  EXPECT_EQ(rig.cns.Calls("CnsCreateVolume"), 2);
  rig.migrations.by_path.clear();
  EXPECT_EQ(rig.registrar.Register(kPath, "pv-1").value(), *id);
  EXPECT_EQ(rig.migrations.by_path.at(kPath).volume_id, *id);
  EXPECT_EQ(rig.cns.All().size(), 1u);
}

TEST(InTreeRegistrarTest, SaysWhatIsWrong) {
  Rig rig;
  absl::StatusOr<std::string> missing = rig.registrar.Register(kPath, "pv-1");
  EXPECT_TRUE(absl::IsNotFound(missing.status())) << missing.status();
  EXPECT_THAT(missing.status().message(), HasSubstr(kPath));
  EXPECT_THAT(missing.status().message(), HasSubstr("/dc1"));
  EXPECT_TRUE(rig.migrations.by_path.empty());

  EXPECT_TRUE(absl::IsInvalidArgument(rig.registrar.Register("kubevols/x.vmdk", "pv-1").status()));
  EXPECT_EQ(rig.registrar.Register(kPath, "pv-1", "silver").status().code(),
            absl::StatusCode::kNotFound);

  rig.cns.AddDisk(
      "https://vc.example.com/folder/kubevols/pvc-1.vmdk?dcPath=%2Fdc0&dsName=datastore1", kPath,
      1024, "datastore-1");
  rig.cns.Fail("CnsCreateVolume", absl::UnavailableError("vCenter down"), true);
  absl::StatusOr<std::string> down = rig.registrar.Register(kPath, "pv-1");
  EXPECT_TRUE(absl::IsUnavailable(down.status())) << down.status();
  EXPECT_EQ(rig.cns.Calls("CnsCreateVolume"), 3);  // one more: not tried in the next datacenter

  rig.migrations.fail_save = absl::UnavailableError("API down");
  absl::StatusOr<std::string> unsaved = rig.registrar.Register(kPath, "pv-1");
  EXPECT_THAT(unsaved.status().message(), HasSubstr("API down"));
  rig.migrations.fail_save = absl::OkStatus();
  EXPECT_TRUE(rig.registrar.Register(kPath, "pv-1").ok());  // CNS has it: not a second volume
  EXPECT_EQ(rig.cns.All().size(), 1u);
}

TEST(InTreeRegistrarTest, UnregisterKeepsTheDisk) {
  Rig rig;
  rig.cns.AddDisk(
      "https://vc.example.com/folder/kubevols/pvc-1.vmdk?dcPath=%2Fdc0&dsName=datastore1", kPath,
      1024, "datastore-1");
  const std::string id = rig.registrar.Register(kPath, "pv-1").value();
  ASSERT_TRUE(rig.registrar.Unregister(kPath).ok());
  EXPECT_FALSE(rig.cns.Get(id).has_value());
  EXPECT_EQ(rig.migrations.forgotten, std::vector<std::string>{id});
  EXPECT_TRUE(rig.registrar.Unregister(kPath).ok());  // nothing registered: nothing to do
  EXPECT_EQ(rig.cns.Calls("CnsDeleteVolume"), 1);
  // The disk is still there: registering again works.
  EXPECT_TRUE(rig.registrar.Register(kPath, "pv-1").ok());
}

}  // namespace
}  // namespace ccm::csi::registrar_test
