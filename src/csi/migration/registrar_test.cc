#include "csi/migration/registrar.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "testing/fake_controller.h"
#include "testing/memory_event_sink.h"

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

// Issue 54 item 9: CNS lost the volume of a mapping (reset, unregistered by an admin).
TEST(InTreeRegistrarTest, ReregistersADiskCnsNoLongerKnows) {
  Rig rig;
  kube::MemoryEventSink sink;
  kube::EventRecorder events(sink);
  InTreeRegistrarOptions o = rig.Options();
  o.events = &events;
  int lookups = 0;
  o.pv_of = [&](const std::string& path) -> absl::StatusOr<kube::ObjectReference> {
    ++lookups;
    return kube::ObjectReference{"PersistentVolume", "", "pv-found", "uid-1", "v1", "", ""};
  };
  InTreeRegistrar registrar(rig.cns, rig.migrations, o);
  rig.cns.AddDisk(
      "https://vc.example.com/folder/kubevols/pvc-1.vmdk?dcPath=%2Fdc0&dsName=datastore1", kPath,
      1024, "datastore-1");
  const std::string stale = registrar.Register(kPath, "pv-1").value();
  ASSERT_TRUE(rig.cns.Delete(stale));  // CNS forgets it; the disk stays

  const kube::ObjectReference pv{"PersistentVolume", "", "pv-1", "uid-pv-1", "v1", "", ""};
  absl::StatusOr<std::string> id = registrar.Reregister(kPath, stale, pv, "gold");
  ASSERT_TRUE(id.ok()) << id.status();
  EXPECT_NE(*id, stale);
  EXPECT_EQ(rig.cns.Get(*id)->volume.name, "pv-1");
  EXPECT_EQ(rig.cns.Get(*id)->volume.storage_policy_id, "policy-gold");
  EXPECT_EQ(rig.migrations.by_path.at(kPath).volume_id, *id);
  EXPECT_EQ(rig.migrations.forgotten, std::vector<std::string>{stale});
  EXPECT_EQ(lookups, 0);  // the caller named the PV
  ASSERT_TRUE(events.Flush(absl::Seconds(30)));
  std::vector<kube::Event> sent = sink.Events();
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].involved_object.name, "pv-1");
  EXPECT_EQ(sent[0].involved_object.uid, "uid-pv-1");
  EXPECT_EQ(sent[0].reason, "VolumeReregistered");
  EXPECT_THAT(sent[0].message, HasSubstr(stale));
  EXPECT_THAT(sent[0].message, HasSubstr(*id));

  // Without the PV: it is looked up, and names the volume.
  ASSERT_TRUE(rig.cns.Delete(*id));
  absl::StatusOr<std::string> again = registrar.Reregister(kPath, *id);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(lookups, 1);
  EXPECT_EQ(rig.cns.Get(*again)->volume.name, "pv-found");
}

TEST(InTreeRegistrarTest, ReregisterOfAGoneDiskKeepsTheMapping) {
  Rig rig;
  rig.migrations.Add(kPath, "stale-id");
  absl::StatusOr<std::string> gone = rig.registrar.Reregister(kPath, "stale-id");
  EXPECT_TRUE(absl::IsNotFound(gone.status())) << gone.status();
  EXPECT_THAT(gone.status().message(), HasSubstr(kPath));
  EXPECT_THAT(gone.status().message(), HasSubstr("stale-id"));
  EXPECT_THAT(gone.status().message(), HasSubstr("gone too"));
  EXPECT_EQ(rig.migrations.by_path.at(kPath).volume_id, "stale-id");
  EXPECT_TRUE(rig.migrations.forgotten.empty());

  rig.cns.AddDisk(
      "https://vc.example.com/folder/kubevols/pvc-1.vmdk?dcPath=%2Fdc0&dsName=datastore1", kPath,
      1024, "datastore-1");
  rig.cns.Fail("CnsCreateVolume", absl::UnavailableError("vCenter down"), true);
  absl::StatusOr<std::string> down = rig.registrar.Reregister(kPath, "stale-id");
  EXPECT_TRUE(absl::IsUnavailable(down.status())) << down.status();
  EXPECT_THAT(down.status().message(), HasSubstr("no longer knows"));
  EXPECT_EQ(rig.migrations.by_path.at(kPath).volume_id, "stale-id");

  rig.migrations.fail_save = absl::UnavailableError("API down");
  absl::StatusOr<std::string> unsaved = rig.registrar.Reregister(kPath, "stale-id");
  EXPECT_THAT(unsaved.status().message(), HasSubstr("API down"));
  EXPECT_EQ(rig.migrations.by_path.at(kPath).volume_id, "stale-id");  // kept: a retry mends it
  rig.migrations.fail_save = absl::OkStatus();
  absl::StatusOr<std::string> mended = rig.registrar.Reregister(kPath, "stale-id");
  ASSERT_TRUE(mended.ok()) << mended.status();  // CNS has it already: the same volume
  EXPECT_EQ(rig.cns.All().size(), 1u);
  EXPECT_EQ(rig.migrations.by_path.at(kPath).volume_id, *mended);
}

}  // namespace
}  // namespace ccm::csi::registrar_test
