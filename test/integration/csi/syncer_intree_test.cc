// In-tree vSphere volumes under CSI migration, end to end: the syncer registers the VMDK of an
// in-tree PV with the simulator's CNS (backingDiskUrlPath), keeps the mapping in a
// CnsVSphereVolumeMigration of the API emulator, describes the volume like any other, never
// registers twice (restart, lost object), and unregisters a deleted PV's volume keeping the disk.
#include <sys/stat.h>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "integration/csi/syncer_env.h"
#include "testing/eventually.h"

namespace ccm::csi::syncer::intree_testing {
namespace {

using ccm::csi::syncer::testing::kClusterId;
using ccm::csi::syncer::testing::SyncerEnv;
using ::ccm::testing::Eventually;

class SyncerInTreeTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(env_.Start().ok()); }

  ccm::testing::VcsimInTreeDisk Disk(const std::string& name) {
    auto d = env_.vcsim().CreateInTreeDisk("dc1", "ds1", "kubevols/" + name + ".vmdk", 1024);
    EXPECT_TRUE(d.ok()) << d.status();
    return d.ok() ? *d : ccm::testing::VcsimInTreeDisk{};
  }
  // The CNS volume of a VMDK path, if CNS has one.
  std::optional<ccm::testing::VcsimCnsVolume> VolumeOf(const std::string& path) {
    auto all = env_.vcsim().CnsVolumes();
    if (!all.ok()) return std::nullopt;
    for (const auto& v : *all) {
      if (v.path == path) return v;
    }
    return std::nullopt;
  }
  int Creates() {
    auto calls = env_.vcsim().CnsCounters();
    return calls.ok() ? (*calls)["CnsCreateVolume"] : -1;
  }
  // PV pv-<name> of the disk, PVC ns1/<name>, Running Pod ns1/<name>-pod; the CNS volume ID once
  // all three are in its metadata.
  std::string Workload(const std::string& name, const std::string& path, bool migrated) {
    EXPECT_TRUE(env_.PutInTreePv("pv-" + name, path, "ns1", name, migrated).ok());
    EXPECT_TRUE(env_.PutPvc("ns1", name, "pv-" + name).ok());
    EXPECT_TRUE(env_.PutPod("ns1", name + "-pod", name).ok());
    std::string id;
    EXPECT_TRUE(Eventually([&] {
      std::optional<ccm::testing::VcsimCnsVolume> v = VolumeOf(path);
      if (!v) return false;
      id = v->id;
      return env_.HasEntity(id, kEntityPv, "pv-" + name) &&
             env_.HasEntity(id, kEntityPvc, name, "ns1") &&
             env_.HasEntity(id, kEntityPod, name + "-pod", "ns1");
    })) << name;
    return id;
  }

  SyncerEnv env_;
};

// A CnsVSphereVolumeMigration object for the path as CNS's registrations write it.
nlohmann::json MigrationObject(const std::string& id, const std::string& path) {
  return {{"apiVersion", "cns.vmware.com/v1alpha1"},
          {"kind", "CnsVSphereVolumeMigration"},
          {"metadata", {{"name", id}}},
          {"spec", {{"volumepath", path}, {"volumeid", id}}}};
}

// The delete event of an old registration, arriving after a new registration of the same VMDK
// path was saved, leaves the new one in place (it used to erase the path).
TEST_F(SyncerInTreeTest, LateDeleteOfAnOldRegistrationKeepsTheNewOne) {
  const std::string path = "[ds1] kubevols/reused.vmdk";
  ASSERT_TRUE(
      env_.emu().Create("cnsvspherevolumemigrations", MigrationObject("old-id", path)).ok());
  ASSERT_TRUE(Eventually([&] { return env_.migrations().Find(path).ok(); }));
  ASSERT_TRUE(env_.migrations().Save({path, "new-id", false}).ok());
  ASSERT_TRUE(env_.emu().Delete("cnsvspherevolumemigrations", "", "old-id").ok());
  // Events arrive in order: once this later object is known, the delete was applied.
  const std::string marker = "[ds1] kubevols/marker.vmdk";
  ASSERT_TRUE(
      env_.emu().Create("cnsvspherevolumemigrations", MigrationObject("marker-id", marker)).ok());
  ASSERT_TRUE(Eventually([&] { return env_.migrations().Find(marker).ok(); }));
  absl::StatusOr<InTreeVolume> v = env_.migrations().Find(path);
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(v->volume_id, "new-id");
}

TEST_F(SyncerInTreeTest, StaticInTreePvIsRegisteredOnceAndDescribed) {
  const ccm::testing::VcsimInTreeDisk disk = Disk("static-a");
  const std::string id = Workload("a", disk.path, /*migrated=*/false);
  ASSERT_FALSE(id.empty());
  std::optional<ccm::testing::VcsimCnsVolume> v = VolumeOf(disk.path);
  EXPECT_EQ(v->file, disk.file);  // the disk stays where the in-tree plugin made it
  EXPECT_EQ(v->capacity_mb, 1024);
  EXPECT_EQ(v->name, "pv-a");
  EXPECT_EQ(v->cluster_id, kClusterId);
  absl::StatusOr<nlohmann::json> cr = env_.Migration(id);
  ASSERT_TRUE(cr.ok()) << cr.status();
  EXPECT_EQ(cr->at("spec").at("volumepath"), disk.path);
  EXPECT_EQ(cr->at("spec").at("volumeid"), id);
  EXPECT_EQ(cr->at("spec").at("protectvolumefromvmdelete"), false);

  // Full syncs and a restart: the object is the memory, nothing is registered again.
  ASSERT_TRUE(env_.RunFullSync());
  env_.StopSyncer();
  ASSERT_TRUE(env_.StartSyncer().ok());
  ASSERT_TRUE(env_.RunFullSync());
  EXPECT_EQ(Creates(), 1);
  EXPECT_THAT(env_.syncer().stats().orphans, ::testing::IsEmpty());
}

TEST_F(SyncerInTreeTest, MigratedPvIsRegisteredAndAnUnmigratedOneIsNot) {
  const ccm::testing::VcsimInTreeDisk migrated = Disk("migrated");
  const std::string id = Workload("m", migrated.path, /*migrated=*/true);
  EXPECT_FALSE(id.empty());
  // Provisioned by the in-tree plugin but not marked migrated-to: the in-tree plugin's still.
  const ccm::testing::VcsimInTreeDisk other = Disk("not-migrated");
  nlohmann::json pv = {
      {"metadata",
       {{"name", "pv-n"},
        {"annotations", {{"pv.kubernetes.io/provisioned-by", "kubernetes.io/vsphere-volume"}}}}},
      {"spec", {{"vsphereVolume", {{"volumePath", other.path}}}}}};
  ASSERT_TRUE(env_.emu().Put("persistentvolumes", pv).ok());
  ASSERT_TRUE(env_.RunFullSync());
  EXPECT_FALSE(VolumeOf(other.path).has_value());
  EXPECT_EQ(Creates(), 1);
}

// The object lost (deleted by hand, or a crash between CNS and the API): CNS answers
// CnsAlreadyRegisteredFault with the volume ID, and the object is written again.
TEST_F(SyncerInTreeTest, LostMigrationObjectIsRebuiltFromCns) {
  const ccm::testing::VcsimInTreeDisk disk = Disk("lost");
  const std::string id = Workload("l", disk.path, /*migrated=*/true);
  ASSERT_TRUE(env_.emu().Delete("cnsvspherevolumemigrations", "", id).ok());
  // Gone from the syncer's cache too (its delete event applied), not only from the API: a full
  // sync that still sees the object has nothing to rebuild.
  ASSERT_TRUE(
      Eventually([&] { return absl::IsNotFound(env_.migrations().Find(disk.path).status()); }));
  ASSERT_TRUE(env_.RunFullSync());
  ASSERT_TRUE(Eventually([&] { return env_.Migration(id).ok(); }));
  EXPECT_EQ(Creates(), 2);  // the second one answered "already registered"
  auto all = env_.vcsim().CnsVolumes();
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->size(), 1u);
}

TEST_F(SyncerInTreeTest, DeletedPvIsUnregisteredAndItsDiskKept) {
  const ccm::testing::VcsimInTreeDisk disk = Disk("retained");
  const std::string id = Workload("r", disk.path, /*migrated=*/false);
  ASSERT_TRUE(env_.emu().Delete("pods", "ns1", "r-pod").ok());
  ASSERT_TRUE(env_.emu().Delete("persistentvolumeclaims", "ns1", "r").ok());
  ASSERT_TRUE(env_.emu().Delete("persistentvolumes", "", "pv-r").ok());
  ASSERT_TRUE(Eventually([&] { return !VolumeOf(disk.path).has_value(); }));
  ASSERT_TRUE(Eventually([&] { return !env_.Migration(id).ok(); }));
  struct stat st;
  EXPECT_EQ(stat(disk.file.c_str(), &st), 0) << disk.file;  // the data stays
  // A PV of that disk again (a rollback and back): registered again.
  EXPECT_FALSE(Workload("r2", disk.path, /*migrated=*/false).empty());
}

// Issue 54 item 9: CNS lost the volume of a migrated PV (CNS reset; here unregistered as an admin
// would, the disk kept) while the VMDK stays: a full sync registers the disk again, replaces the
// CnsVSphereVolumeMigration, describes the volume, and says so in one Event on the PV.
TEST_F(SyncerInTreeTest, AVolumeCnsLostIsRegisteredAgain) {
  const ccm::testing::VcsimInTreeDisk disk = Disk("reset");
  const std::string stale = Workload("z", disk.path, /*migrated=*/true);
  ASSERT_TRUE(env_.cns().DeleteVolume(stale, /*delete_disk=*/false).ok());
  ASSERT_FALSE(VolumeOf(disk.path).has_value());

  ASSERT_TRUE(env_.RunFullSync());  // the volumes it finds wrong are synced by the workers
  std::optional<ccm::testing::VcsimCnsVolume> now;
  ASSERT_TRUE(Eventually([&] {
    now = VolumeOf(disk.path);
    return now.has_value() && env_.HasEntity(now->id, kEntityPv, "pv-z") &&
           env_.HasEntity(now->id, kEntityPod, "z-pod", "ns1");
  }));
  EXPECT_NE(now->id, stale);
  EXPECT_EQ(now->name, "pv-z");
  EXPECT_TRUE(env_.Migration(now->id).ok());
  EXPECT_FALSE(env_.Migration(stale).ok());
  EXPECT_EQ(env_.migrations().VolumeIdOf(disk.path).value(), now->id);
  EXPECT_EQ(env_.syncer().stats().in_tree_reregistered, 1);
  EXPECT_THAT(env_.syncer().stats().pvs_without_volume, ::testing::IsEmpty());
  ASSERT_TRUE(env_.events().Flush(absl::Seconds(30)));
  int said = 0;
  for (const nlohmann::json& e : env_.emu().List("events")) {
    if (e.value("reason", "") != "VolumeReregistered") continue;
    ++said;
    EXPECT_EQ(e["involvedObject"].value("kind", ""), "PersistentVolume");
    EXPECT_EQ(e["involvedObject"].value("name", ""), "pv-z");
    EXPECT_FALSE(e["involvedObject"].value("uid", "").empty());
    EXPECT_THAT(e.value("message", ""), ::testing::HasSubstr(disk.path));
  }
  EXPECT_EQ(said, 1);

  // The disk gone too: nothing to register; the record stays, and a full sync says so (once).
  ASSERT_TRUE(env_.cns().DeleteVolume(now->id, /*delete_disk=*/true).ok());
  ASSERT_TRUE(env_.RunFullSync());
  ASSERT_TRUE(
      Eventually([&] { return env_.syncer().stats().pvs_without_volume.contains(now->id); }));
  ASSERT_TRUE(env_.RunFullSync());
  EXPECT_FALSE(VolumeOf(disk.path).has_value());
  EXPECT_TRUE(env_.Migration(now->id).ok());
  EXPECT_EQ(env_.syncer().stats().in_tree_reregistered, 1);
}

TEST_F(SyncerInTreeTest, PvOfAMissingDiskRegistersNothing) {
  ASSERT_TRUE(env_.PutInTreePv("pv-x", "[ds1] kubevols/missing.vmdk", "ns1", "x", false).ok());
  ASSERT_TRUE(env_.RunFullSync());
  ASSERT_TRUE(Eventually([&] { return Creates() >= 1; }));  // tried, refused: FileNotFound
  auto all = env_.vcsim().CnsVolumes();
  ASSERT_TRUE(all.ok());
  EXPECT_TRUE(all->empty());
}

// A VMDK written inline in a Pod (no PV): registered for the attach CSI migration will send with
// its path, and kept registered after the Pod is gone (the detach may come later).
TEST_F(SyncerInTreeTest, InlineVolumeOfAPodIsRegisteredAndKept) {
  const ccm::testing::VcsimInTreeDisk disk = Disk("inline");
  nlohmann::json pod = {
      {"metadata", {{"name", "legacy"}, {"namespace", "ns1"}}},
      {"spec",
       {{"containers", {{{"name", "c"}, {"image", "busybox"}}}},
        {"volumes", {{{"name", "data"}, {"vsphereVolume", {{"volumePath", disk.path}}}}}}}},
      {"status", {{"phase", "Running"}}}};
  ASSERT_TRUE(env_.emu().Put("pods", pod).ok());
  std::string id;
  ASSERT_TRUE(Eventually([&] {
    std::optional<ccm::testing::VcsimCnsVolume> v = VolumeOf(disk.path);
    if (v) id = v->id;
    return v.has_value() && env_.Migration(id).ok();
  }));
  EXPECT_EQ(VolumeOf(disk.path)->name, "inline.vmdk");
  ASSERT_TRUE(env_.emu().Delete("pods", "ns1", "legacy").ok());
  ASSERT_TRUE(env_.RunFullSync());
  ASSERT_TRUE(env_.RunFullSync());
  EXPECT_TRUE(VolumeOf(disk.path).has_value());
  EXPECT_TRUE(env_.Migration(id).ok());
  EXPECT_EQ(Creates(), 1);
  EXPECT_THAT(env_.syncer().stats().orphans, ::testing::IsEmpty());
}

}  // namespace
}  // namespace ccm::csi::syncer::intree_testing
