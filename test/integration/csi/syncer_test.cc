// The CNS metadata syncer end to end: objects written to the API emulator show in the
// simulator's CNS as the vSphere client would show them, drift is repaired by the full sync,
// orphans are reported and kept, and statically provisioned volumes are registered.
#include <yaml-cpp/yaml.h>

#include <map>
#include <set>

#include "absl/algorithm/container.h"
#include "absl/cleanup/cleanup.h"
#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "integration/csi/syncer_env.h"
#include "testing/eventually.h"

namespace ccm::csi::syncer::testing {
namespace {

using ::ccm::testing::Eventually;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::UnorderedElementsAre;
namespace cns = ::ccm::vsphere::cns;

class SyncerTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(env_.Start().ok()); }

  // A volume with PV pv-<name>, PVC ns1/<name> and Running Pod ns1/<name>-pod.
  std::string Workload(const std::string& name) {
    absl::StatusOr<std::string> id = env_.CreateVolume("pvc-" + name);
    EXPECT_TRUE(id.ok()) << id.status();
    EXPECT_TRUE(env_.PutPv("pv-" + name, *id, "ns1", name).ok());
    absl::Status pvc = env_.PutPvc("ns1", name, "pv-" + name, {{"tier", "gold"}});
    EXPECT_TRUE(pvc.ok()) << pvc;
    absl::Status pod = env_.PutPod("ns1", name + "-pod", name);
    EXPECT_TRUE(pod.ok()) << pod;
    return *id;
  }
  bool Complete(const std::string& id, const std::string& name) {
    return env_.HasEntity(id, kEntityPv, "pv-" + name) &&
           env_.HasEntity(id, kEntityPvc, name, "ns1") &&
           env_.HasEntity(id, kEntityPod, name + "-pod", "ns1");
  }
  // `n` CNS volumes pvc-<prefix><i> without PVs yet; fewer when one could not be made.
  std::vector<std::string> Volumes(const std::string& prefix, int n) {
    std::vector<std::string> ids;
    for (int i = 0; i < n; ++i) {
      absl::StatusOr<std::string> id = env_.CreateVolume("pvc-" + prefix + std::to_string(i));
      EXPECT_TRUE(id.ok()) << id.status();
      if (id.ok()) ids.push_back(*id);
    }
    return ids;
  }
  // Holds the (single) worker in its write of PV `pv`'s volume, labelled for it, until
  // env_.gate().Release(); false when the write was not seen.
  bool HoldTheWorkerIn(const std::string& pv) {
    env_.gate().HoldAnswerTo([](const cns::Operation& op) {
      for (const cns::EntityMetadata& e : op.metadata.entity_metadata) {
        if (absl::c_linear_search(e.labels, std::pair<std::string, std::string>("app", "hold"))) {
          return true;
        }
      }
      return false;
    });
    return env_.SetLabels("persistentvolumes", "", pv, {{"app", "hold"}}).ok() &&
           env_.gate().WaitUntilHeld();
  }
  // Starts the syncer (stopped) and waits until its workers found `volumes` volumes already
  // described right; the CNS calls it made meanwhile, by method.
  std::map<std::string, int> CnsCallsOfAStart(int volumes) {
    auto before = env_.vcsim().CnsCounters();
    EXPECT_TRUE(before.ok()) << before.status();
    EXPECT_TRUE(env_.StartSyncer().ok());
    EXPECT_TRUE(Eventually([&] { return env_.syncer().stats().unchanged_skips >= volumes; }));
    auto after = env_.vcsim().CnsCounters();
    EXPECT_TRUE(after.ok()) << after.status();
    if (!before.ok() || !after.ok()) return {};
    for (const auto& [method, n] : *before) (*after)[method] -= n;
    return *after;
  }
  double Metric(const std::string& family, const metrics::Labels& labels = {}) {
    metrics::Family* f = env_.registry().Find(family);
    return f == nullptr ? -1 : f->Value(labels);
  }

  SyncerEnv env_;
};

TEST_F(SyncerTest, PvPvcAndPodMetadataAppearInCns) {
  const std::string id = Workload("db");
  ASSERT_TRUE(Eventually([&] { return Complete(id, "db"); })) << id;
  std::vector<cns::EntityMetadata> entities = env_.Entities(id);
  ASSERT_EQ(entities.size(), 3u);
  for (const cns::EntityMetadata& e : entities) {
    EXPECT_EQ(e.cluster_id, kClusterId);
    if (e.entity_type == kEntityPv) {
      EXPECT_THAT(e.labels, ElementsAre(std::pair<std::string, std::string>("backup", "daily")));
      EXPECT_THAT(e.referred_entity, IsEmpty());
    } else if (e.entity_type == kEntityPvc) {
      EXPECT_THAT(e.labels, ElementsAre(std::pair<std::string, std::string>("tier", "gold")));
      EXPECT_THAT(e.referred_entity,
                  ElementsAre(cns::EntityReference{kEntityPv, "pv-db", "", kClusterId}));
    } else {
      EXPECT_EQ(e.entity_type, kEntityPod);
      EXPECT_THAT(e.referred_entity,
                  ElementsAre(cns::EntityReference{kEntityPvc, "db", "ns1", kClusterId}));
    }
  }
  auto v = env_.Volume(id);
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(v->metadata.container_cluster.cluster_id, kClusterId);
  // Counted once the worker has the task's answer, a moment after CNS shows the change.
  EXPECT_TRUE(Eventually(
      [&] { return Metric("vsphere_syncer_metadata_updates_total", {"success"}) >= 1; }));
}

// Issue 45: a file volume's PV, PVC and Pods (two, on two nodes: ReadWriteMany) reach CNS as
// a block volume's do.
TEST_F(SyncerTest, FileVolumeMetadataAppearsInCns) {
  absl::StatusOr<std::string> id = env_.CreateVolume("pvc-shared", kClusterId, true, true);
  ASSERT_TRUE(id.ok()) << id.status();
  ASSERT_THAT(*id, ::testing::StartsWith("file:"));
  ASSERT_TRUE(env_.PutPv("pv-shared", *id, "ns1", "shared").ok());
  ASSERT_TRUE(env_.PutPvc("ns1", "shared", "pv-shared", {{"tier", "web"}}).ok());
  ASSERT_TRUE(env_.PutPod("ns1", "web-0", "shared").ok());
  ASSERT_TRUE(env_.PutPod("ns1", "web-1", "shared").ok());
  EXPECT_TRUE(Eventually([&] {
    return env_.HasEntity(*id, kEntityPv, "pv-shared") &&
           env_.HasEntity(*id, kEntityPvc, "shared", "ns1") &&
           env_.HasEntity(*id, kEntityPod, "web-0", "ns1") &&
           env_.HasEntity(*id, kEntityPod, "web-1", "ns1");
  }));
  auto v = env_.Volume(*id);
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(v->volume_type, "FILE");
}

TEST_F(SyncerTest, LabelChangesAreWritten) {
  const std::string id = Workload("web");
  ASSERT_TRUE(Eventually([&] { return Complete(id, "web"); }));
  ASSERT_TRUE(
      env_.SetLabels("persistentvolumeclaims", "ns1", "web", {{"tier", "silver"}, {"team", "a"}})
          .ok());
  ASSERT_TRUE(env_.SetLabels("persistentvolumes", "", "pv-web", nlohmann::json::object()).ok());
  auto labels_of = [&](const std::string& type) {
    for (const auto& e : env_.Entities(id)) {
      if (e.entity_type == type) {
        cns::KeyValues l = e.labels;
        std::sort(l.begin(), l.end());
        return l;
      }
    }
    return cns::KeyValues{{"missing", ""}};
  };
  ASSERT_TRUE(Eventually([&] {
    return labels_of(kEntityPvc) == cns::KeyValues{{"team", "a"}, {"tier", "silver"}} &&
           labels_of(kEntityPv).empty();
  }));
}

TEST_F(SyncerTest, DeletedPodAndPvcAreRemovedFromCns) {
  const std::string id = Workload("cache");
  ASSERT_TRUE(Eventually([&] { return Complete(id, "cache"); }));
  ASSERT_TRUE(env_.emu().Delete("pods", "ns1", "cache-pod").ok());
  ASSERT_TRUE(Eventually([&] { return !env_.HasEntity(id, kEntityPod, "cache-pod", "ns1"); }));
  EXPECT_TRUE(env_.HasEntity(id, kEntityPvc, "cache", "ns1"));
  // A Pod that is not Running (Succeeded) does not own the volume either.
  ASSERT_TRUE(env_.PutPod("ns1", "job", "cache", "Running").ok());
  ASSERT_TRUE(Eventually([&] { return env_.HasEntity(id, kEntityPod, "job", "ns1"); }));
  ASSERT_TRUE(env_.PutPod("ns1", "job", "cache", "Succeeded").ok());
  ASSERT_TRUE(Eventually([&] { return !env_.HasEntity(id, kEntityPod, "job", "ns1"); }));
  // The PVC goes; the PV (Retain) stays, claimRef still naming it.
  ASSERT_TRUE(env_.emu().Delete("persistentvolumeclaims", "ns1", "cache").ok());
  ASSERT_TRUE(Eventually([&] {
    auto e = env_.Entities(id);
    return e.size() == 1 && e[0].entity_type == kEntityPv;
  }));
  // The PV goes: the volume stays in CNS, its PV entity labelled pv_missing=true for the
  // vSphere admin (as the reference labels volumes whose PV is gone).
  ASSERT_TRUE(env_.emu().Delete("persistentvolumes", "", "pv-cache").ok());
  ASSERT_TRUE(Eventually([&] {
    auto e = env_.Entities(id);
    return e.size() == 1 && e[0].entity_name == "pv-cache" &&
           absl::c_linear_search(e[0].labels,
                                 std::pair<std::string, std::string>("pv_missing", "true"));
  }));
  EXPECT_TRUE(env_.Volume(id).ok());
}

// Reclaim policy Delete: once its claim is gone the volume is the provisioner's to delete, and
// the syncer asks CNS nothing more about it (the claim's deletion, the PV deleted once
// Released), as the reference's syncer leaves it. At scale each was a CnsQueryVolume.
TEST_F(SyncerTest, AVolumeTheProvisionerDeletesIsLeftToIt) {
  const std::string id = Workload("temp");
  ASSERT_TRUE(Eventually([&] { return Complete(id, "temp"); }));
  absl::StatusOr<nlohmann::json> pv = env_.emu().Get("persistentvolumes", "", "pv-temp");
  ASSERT_TRUE(pv.ok()) << pv.status();
  (*pv)["spec"]["persistentVolumeReclaimPolicy"] = "Delete";
  ASSERT_TRUE(env_.emu().Put("persistentvolumes", *pv).ok());
  // The PV watch delivers in order: once a later PV is described, the syncer has this one.
  const std::string marker = Workload("marker");
  ASSERT_TRUE(Eventually([&] { return Complete(marker, "marker"); }));
  auto left = [&](int64_t n) {
    return Eventually([&] { return env_.syncer().stats().left_to_controller >= n; });
  };
  ASSERT_TRUE(env_.emu().Delete("persistentvolumeclaims", "ns1", "temp").ok());
  ASSERT_TRUE(left(1));
  pv = env_.emu().Get("persistentvolumes", "", "pv-temp");
  ASSERT_TRUE(pv.ok()) << pv.status();
  (*pv)["status"]["phase"] = "Released";  // no sync: nothing the entities show changed
  ASSERT_TRUE(env_.emu().Put("persistentvolumes", *pv).ok());
  ASSERT_TRUE(env_.emu().Delete("persistentvolumes", "", "pv-temp").ok());
  ASSERT_TRUE(left(2));
  // Nothing written (a sync would have removed the claim, then labelled the PV pv_missing),
  // nothing deleted.
  EXPECT_TRUE(env_.HasEntity(id, kEntityPvc, "temp", "ns1"));
  EXPECT_EQ(env_.Entities(id).size(), 3u);
  for (const cns::EntityMetadata& e : env_.Entities(id)) {
    EXPECT_THAT(e.labels,
                ::testing::Not(::testing::Contains(::testing::Pair("pv_missing", "true"))));
  }
  EXPECT_TRUE(env_.Volume(id).ok());
}

TEST_F(SyncerTest, FullSyncRepairsDriftBothWays) {
  const std::string id = Workload("drift");
  ASSERT_TRUE(Eventually([&] { return Complete(id, "drift"); }));
  // Behind the syncer's back: the PVC entity removed, a Pod that does not exist added.
  cns::VolumeMetadata m;
  m.container_cluster.cluster_id = kClusterId;
  m.entity_metadata = {{kEntityPvc, "drift", "ns1", {}, true, kClusterId, {}},
                       {kEntityPod, "ghost", "ns1", {}, false, kClusterId, {}}};
  ASSERT_TRUE(env_.cns().UpdateVolumeMetadata(id, m).ok());
  ASSERT_FALSE(env_.HasEntity(id, kEntityPvc, "drift", "ns1"));
  ASSERT_TRUE(env_.HasEntity(id, kEntityPod, "ghost", "ns1"));
  // Nothing in Kubernetes changed, so only the periodic full sync can notice.
  ASSERT_TRUE(env_.RunFullSync());
  ASSERT_TRUE(Eventually(
      [&] { return Complete(id, "drift") && !env_.HasEntity(id, kEntityPod, "ghost", "ns1"); }));
  EXPECT_EQ(env_.Entities(id).size(), 3u);
  EXPECT_TRUE(Eventually([&] {
    return env_.registry().Find("vsphere_full_sync_ops_histogram")->Count({"pass"}) == 2u;
  }));
}

TEST_F(SyncerTest, OrphanIsReportedAndKept) {
  const std::string kept = Workload("kept");
  auto orphan = env_.CreateVolume("pvc-orphan");
  auto foreign = env_.CreateVolume("pvc-foreign", "another-cluster");
  ASSERT_TRUE(orphan.ok() && foreign.ok());
  // The orphan still carries the entity of a PV deleted while the syncer was not looking.
  cns::VolumeMetadata m;
  m.container_cluster.cluster_id = kClusterId;
  m.entity_metadata = {{kEntityPv, "pv-long-gone", "", {}, false, kClusterId, {}}};
  ASSERT_TRUE(env_.cns().UpdateVolumeMetadata(*orphan, m).ok());
  ASSERT_TRUE(Eventually([&] { return Complete(kept, "kept"); }));

  // First sighting: a candidate only (a volume exists in CNS before its PV).
  ASSERT_TRUE(env_.RunFullSync());
  EXPECT_THAT(env_.syncer().stats().orphans, IsEmpty());
  // Second: reported, counted, its PV entity labelled pv_missing=true (as the reference now
  // does), the volume kept.
  ASSERT_TRUE(env_.RunFullSync());
  EXPECT_THAT(env_.syncer().stats().orphans, ElementsAre(*orphan));
  EXPECT_EQ(Metric("vsphere_cns_volume_pv_missing", {env_.vcenter()}), 1);
  EXPECT_EQ(Metric("vsphere_cns_volume_pv_retained", {env_.vcenter()}), 0);
  auto labelled = [&] {
    auto e = env_.Entities(*orphan);
    return e.size() == 1u && e[0].entity_name == "pv-long-gone" &&
           e[0].labels == cns::KeyValues{{"pv_missing", "true"}};
  };
  ASSERT_TRUE(Eventually(labelled));
  // Labelled once: the next full sync writes nothing for it.
  auto before = env_.vcsim().CnsCounters();
  ASSERT_TRUE(before.ok());
  ASSERT_TRUE(env_.RunFullSync());
  auto after = env_.vcsim().CnsCounters();
  ASSERT_TRUE(after.ok());
  EXPECT_EQ((*after)["CnsUpdateVolumeMetadata"], (*before)["CnsUpdateVolumeMetadata"]);
  EXPECT_TRUE(labelled());
  auto volumes = env_.vcsim().CnsVolumes();
  ASSERT_TRUE(volumes.ok());
  std::set<std::string> ids;
  for (const auto& v : *volumes) ids.insert(v.id);
  EXPECT_TRUE(ids.count(*orphan) && ids.count(*foreign) && ids.count(kept));
  auto counters = env_.vcsim().CnsCounters();
  ASSERT_TRUE(counters.ok());
  EXPECT_EQ((*counters)["CnsDeleteVolume"], 0);

  // A PV for it appears: no longer an orphan at the next full sync, its metadata registered
  // and the label gone with the stale entity.
  ASSERT_TRUE(env_.PutPv("pv-adopted", *orphan).ok());
  ASSERT_TRUE(Eventually([&] { return env_.HasEntity(*orphan, kEntityPv, "pv-adopted"); }));
  ASSERT_TRUE(Eventually([&] { return !env_.HasEntity(*orphan, kEntityPv, "pv-long-gone"); }));
  ASSERT_TRUE(env_.RunFullSync());
  EXPECT_THAT(env_.syncer().stats().orphans, IsEmpty());
  EXPECT_EQ(Metric("vsphere_cns_volume_pv_missing", {env_.vcenter()}), 0);
}

// Feature state pv-to-backingdiskobjectid-mapping: the PVC of a bound PV on vSAN carries
// "<PV uid>:<vSAN object>" after a full sync (from its listing: no CNS call of its own); a VMFS
// volume (no object) gets no annotation; nothing is written again while it holds.
TEST_F(SyncerTest, BackingObjectIdsAnnotateThePvcsWhenTheFeatureIsOn) {
  auto vsan = env_.CreateVolume("pvc-on-vsan", kClusterId, /*vsan=*/true);
  ASSERT_TRUE(vsan.ok()) << vsan.status();
  ASSERT_TRUE(env_.PutPv("pv-on-vsan", *vsan, "ns1", "on-vsan").ok());
  ASSERT_TRUE(env_.PutPvc("ns1", "on-vsan", "pv-on-vsan").ok());
  const std::string vmfs = Workload("on-vmfs");
  auto annotation = [&](const std::string& pvc) -> std::optional<std::string> {
    auto obj = env_.emu().Get("persistentvolumeclaims", "ns1", pvc);
    const nlohmann::json::json_pointer at(
        "/metadata/annotations/cns.vmware.com~1pv-to-backingdiskobjectid-mapping");
    if (!obj.ok() || !obj->contains(at)) return std::nullopt;
    return obj->at(at).get<std::string>();
  };
  ASSERT_TRUE(Eventually([&] { return Complete(vmfs, "on-vmfs"); }));
  ASSERT_TRUE(env_.RunFullSync());
  EXPECT_EQ(annotation("on-vsan"), std::nullopt) << "the feature state is off";

  env_.map_backing_objects = true;
  ASSERT_TRUE(env_.RunFullSync());
  auto volume = env_.Volume(*vsan);
  ASSERT_TRUE(volume.ok());
  ASSERT_FALSE(volume->backing_disk_object_id.empty()) << "vSAN answers the object";
  auto pv = env_.emu().Get("persistentvolumes", "", "pv-on-vsan");
  ASSERT_TRUE(pv.ok());
  ASSERT_TRUE(Eventually([&] {
    return annotation("on-vsan") == absl::StrCat((*pv)["metadata"]["uid"].get<std::string>(), ":",
                                                 volume->backing_disk_object_id);
  })) << annotation("on-vsan").value_or("(none)");
  EXPECT_EQ(annotation("on-vmfs"), std::nullopt) << "no object on VMFS";

  // Held: the next full sync writes no PVC.
  env_.emu().ResetRequestCounts();
  ASSERT_TRUE(env_.RunFullSync());
  for (const auto& [key, count] : env_.emu().RequestCounts()) {
    EXPECT_FALSE(absl::StartsWith(key, "patch persistentvolumeclaims")) << key << " x" << count;
  }
}

TEST_F(SyncerTest, StaticallyProvisionedVolumeGetsItsMetadata) {
  // A disk registered in CNS by hand: no container cluster.
  auto id = env_.CreateVolume("hand-made", "");
  ASSERT_TRUE(id.ok());
  ASSERT_TRUE(env_.PutPv("static-pv", *id, "ns2", "static").ok());
  ASSERT_TRUE(env_.PutPvc("ns2", "static", "static-pv").ok());
  ASSERT_TRUE(Eventually([&] {
    return env_.HasEntity(*id, kEntityPv, "static-pv") &&
           env_.HasEntity(*id, kEntityPvc, "static", "ns2");
  }));
  auto v = env_.Volume(*id);
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(v->metadata.container_cluster.cluster_id, kClusterId);
  // A PV naming a volume CNS does not know is counted, never an error loop.
  ASSERT_TRUE(env_.PutPv("typo-pv", "3f1c7a2e-0000-4000-8000-000000000000").ok());
  ASSERT_TRUE(Eventually([&] { return env_.syncer().stats().pvs_without_volume.size() == 1; }));
  EXPECT_EQ(Metric("vsphere_syncer_pv_volume_not_found"), 1);
  // PVs of other drivers are none of our business.
  ASSERT_TRUE(env_.PutPv("nfs-pv", *id, "", "", "nfs.csi.k8s.io").ok());
  ASSERT_TRUE(env_.RunFullSync());
  EXPECT_FALSE(env_.HasEntity(*id, kEntityPv, "nfs-pv"));
}

// Static provisioning from a First Class Disk CNS has never seen (govc disk.create, then a PV
// naming its ID): the syncer registers the disk with CNS, with the PV's name and metadata, once.
TEST_F(SyncerTest, StaticPvOfAnUnregisteredDiskIsRegisteredOnce) {
  absl::StatusOr<std::string> fcd = env_.vcsim().CreateFcd("ds1", "hand-made-fcd", 2048);
  ASSERT_TRUE(fcd.ok()) << fcd.status();
  absl::Status pv = env_.PutPv("static-fcd", *fcd, "ns2", "fcd-claim");
  ASSERT_TRUE(pv.ok()) << pv;
  ASSERT_TRUE(env_.PutPvc("ns2", "fcd-claim", "static-fcd").ok());
  ASSERT_TRUE(Eventually([&] {
    return env_.HasEntity(*fcd, kEntityPv, "static-fcd") &&
           env_.HasEntity(*fcd, kEntityPvc, "fcd-claim", "ns2");
  }));
  absl::StatusOr<cns::Volume> v = env_.Volume(*fcd);
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(v->name, "static-fcd");
  EXPECT_EQ(v->capacity_mb, 2048);
  EXPECT_EQ(v->metadata.container_cluster.cluster_id, kClusterId);
  // CNS shows the volume as soon as its task ends; the syncer counts it once its wait returns.
  ASSERT_TRUE(Eventually([&] { return env_.syncer().stats().registered == 1; }));
  ASSERT_TRUE(env_.RunFullSync());
  ASSERT_TRUE(env_.RunFullSync());
  EXPECT_EQ(env_.syncer().stats().registered, 1);
  EXPECT_THAT(env_.syncer().stats().pvs_without_volume, IsEmpty());
  absl::StatusOr<std::map<std::string, int>> calls = env_.vcsim().CnsCounters();
  ASSERT_TRUE(calls.ok());
  EXPECT_EQ((*calls)["CnsCreateVolume"], 1);
}

TEST_F(SyncerTest, ExistingObjectsAreSyncedAtStart) {
  env_.StopSyncer();
  const std::string id = Workload("early");
  ASSERT_TRUE(env_.StartSyncer().ok());
  ASSERT_TRUE(Eventually([&] { return Complete(id, "early"); }));
}

// A first start with volumes to describe writes them from the first full sync, in one batch: one
// query of their metadata and one CnsUpdateVolumeMetadata for all three, nothing per volume.
TEST_F(SyncerTest, FirstStartWritesTheVolumesInOneBatch) {
  env_.StopSyncer();
  const std::vector<std::string> names = {"b1", "b2", "b3"};
  std::vector<std::string> ids;
  for (const std::string& n : names) ids.push_back(Workload(n));
  // The workers start after the first full sync; their start-up events find CNS already says it.
  std::map<std::string, int> calls = CnsCallsOfAStart(3);
  // The listing in pages of 2 (SyncerEnv), then the batch's query.
  EXPECT_EQ(calls["CnsQueryVolume"], 3);
  EXPECT_EQ(calls["CnsUpdateVolumeMetadata"], 1);
  EXPECT_EQ(env_.syncer().stats().metadata_updates, 1);
  EXPECT_EQ(Metric("vsphere_syncer_metadata_updates_total", {"success"}), 1);
  for (size_t i = 0; i < ids.size(); ++i) EXPECT_TRUE(Complete(ids[i], names[i])) << names[i];
}

// A batch whose task fails as a whole loses nothing: its volumes go to the workers, which write
// them again (the two queued together: in one call of their own).
TEST_F(SyncerTest, AFailedBatchIsWrittenAgainByTheWorkers) {
  env_.StopSyncer();
  const std::vector<std::string> names = {"f1", "f2"};
  std::vector<std::string> ids;
  for (const std::string& n : names) ids.push_back(Workload(n));
  ASSERT_TRUE(
      env_.vcsim().SetCnsFault("CnsUpdateVolumeMetadata", "CnsFault", "injected", 1, "task").ok());
  ASSERT_TRUE(env_.StartSyncer().ok());
  for (size_t i = 0; i < ids.size(); ++i) {
    ASSERT_TRUE(Eventually([&] { return Complete(ids[i], names[i]); })) << names[i];
  }
  ASSERT_TRUE(Eventually([&] { return env_.syncer().stats().metadata_updates == 1; }));
  EXPECT_EQ(Metric("vsphere_syncer_metadata_updates_total", {"failure"}), 1);
  EXPECT_EQ(Metric("vsphere_syncer_metadata_updates_total", {"success"}), 1);
}

// A restart with every volume already described right costs the full sync's bulk query and
// nothing per volume: the workers' start-up events are answered from what that query showed.
TEST_F(SyncerTest, RestartWithVolumesInSyncCostsOnlyTheBulkQuery) {
  const std::vector<std::string> names = {"r1", "r2", "r3"};
  std::vector<std::string> ids;
  for (const std::string& n : names) ids.push_back(Workload(n));
  for (size_t i = 0; i < ids.size(); ++i) {
    ASSERT_TRUE(Eventually([&] { return Complete(ids[i], names[i]); })) << names[i];
  }
  env_.StopSyncer();
  // Each PV's start-up events reach a worker, which finds CNS already says what it would write.
  std::map<std::string, int> calls = CnsCallsOfAStart(3);
  // The full sync's listing of the cluster's volumes in pages of 2 (SyncerEnv): 2 queries.
  EXPECT_EQ(calls["CnsQueryVolume"], 2);
  EXPECT_EQ(calls["CnsUpdateVolumeMetadata"], 0);
  EXPECT_EQ(env_.syncer().stats().metadata_updates, 0);
  EXPECT_EQ(env_.syncer().stats().full_syncs, 1);
}

// A worker's write whose answer came back only after a full sync had found the volume gone
// from CNS is not remembered as CNS's state: the volume is looked at again (once, it was skipped
// from then on, and a lost volume never reported).
TEST_F(SyncerTest, AnAnswerOlderThanAFullSyncConfirmsNothing) {
  const std::string id = Workload("late");
  ASSERT_TRUE(Eventually([&] { return Complete(id, "late"); }));
  env_.gate().HoldAnswerTo([](const cns::Operation& op) {
    for (const cns::EntityMetadata& e : op.metadata.entity_metadata) {
      for (const auto& [key, value] : e.labels) {
        if (key == "app" && value == "new") return true;
      }
    }
    return false;
  });
  absl::Cleanup release = [&] { env_.gate().Release(); };
  ASSERT_TRUE(env_.SetLabels("persistentvolumes", "", "pv-late", {{"app", "new"}}).ok());
  ASSERT_TRUE(env_.gate().WaitUntilHeld());  // the update is in CNS; its answer is held
  ASSERT_TRUE(env_.cns().DeleteVolume(id, /*delete_disk=*/true).ok());
  ASSERT_TRUE(env_.RunFullSync());  // finds the volume gone: the PV is queued again
  env_.gate().Release();
  EXPECT_TRUE(Eventually([&] { return env_.syncer().stats().pvs_without_volume.contains(id); }));
}

// Issue 55: volumes that wait in the queue together are looked up together, one
// CnsQueryVolume for all of them instead of one each (at scale half the syncer's requests were
// these look-ups), and written together, one CnsUpdateVolumeMetadata task (and so one task wait)
// for all. A volume the shared answer leaves out is asked alone before it counts as unknown.
TEST_F(SyncerTest, VolumesQueuedTogetherShareOneLookup) {
  const std::string first = Workload("first");
  ASSERT_TRUE(Eventually([&] { return Complete(first, "first"); }));
  const std::vector<std::string> ids = Volumes("q", 6);
  ASSERT_EQ(ids.size(), 6u);
  // The worker is held in a write of the first volume while the others queue up.
  absl::Cleanup release = [&] { env_.gate().Release(); };
  ASSERT_TRUE(HoldTheWorkerIn("pv-first"));
  const std::string unknown = "0f3c3e2a-5b7d-4c1e-9a8b-00000000dead";  // no such volume
  for (size_t i = 0; i < ids.size(); ++i) {
    ASSERT_TRUE(env_.PutPv("pv-q" + std::to_string(i), ids[i]).ok());
  }
  ASSERT_TRUE(env_.PutPv("pv-unknown", unknown).ok());
  ASSERT_TRUE(Eventually([&] { return env_.syncer().stats().queued >= 7; }));
  const SyncerStats before = env_.syncer().stats();
  auto calls_before = env_.vcsim().CnsCounters();
  ASSERT_TRUE(calls_before.ok());
  env_.gate().Release();
  ASSERT_TRUE(Eventually([&] {
    for (size_t i = 0; i < ids.size(); ++i) {
      if (!env_.HasEntity(ids[i], kEntityPv, "pv-q" + std::to_string(i))) return false;
    }
    return env_.syncer().stats().pvs_without_volume.contains(unknown);
  }));
  const SyncerStats after = env_.syncer().stats();
  auto calls_after = env_.vcsim().CnsCounters();
  ASSERT_TRUE(calls_after.ok());
  EXPECT_EQ(after.lookups - before.lookups, 7);
  // One query for the seven, one for the volume it did not answer, asked alone (the
  // simulator's own count of CnsQueryVolume would include this test's HasEntity polls).
  EXPECT_EQ(after.lookup_queries - before.lookup_queries, 2);
  // And their six writes in one CnsUpdateVolumeMetadata task.
  EXPECT_EQ((*calls_after)["CnsUpdateVolumeMetadata"] - (*calls_before)["CnsUpdateVolumeMetadata"],
            1);
}

// A worker's shared write that fails as a whole loses nothing: each of its volumes is written
// on its own at once (the failure counted once, each single write as its own success).
TEST_F(SyncerTest, ASharedWriteThatFailsIsSentVolumeByVolume) {
  const std::string first = Workload("lead");
  ASSERT_TRUE(Eventually([&] { return Complete(first, "lead"); }));
  const std::vector<std::string> ids = Volumes("w", 2);
  ASSERT_EQ(ids.size(), 2u);
  absl::Cleanup release = [&] { env_.gate().Release(); };
  ASSERT_TRUE(HoldTheWorkerIn("pv-lead"));  // the two PVs then queue together
  for (size_t i = 0; i < ids.size(); ++i) {
    ASSERT_TRUE(env_.PutPv("pv-w" + std::to_string(i), ids[i]).ok());
  }
  ASSERT_TRUE(Eventually([&] { return env_.syncer().stats().queued >= 2; }));
  ASSERT_TRUE(
      env_.vcsim().SetCnsFault("CnsUpdateVolumeMetadata", "CnsFault", "injected", 1, "task").ok());
  const SyncerStats before = env_.syncer().stats();
  const double failures = Metric("vsphere_syncer_metadata_updates_total", {"failure"});
  env_.gate().Release();
  for (size_t i = 0; i < ids.size(); ++i) {
    ASSERT_TRUE(Eventually([&] {
      return env_.HasEntity(ids[i], kEntityPv, "pv-w" + std::to_string(i));
    })) << i;
  }
  // The held write, then the two written one by one after the shared one failed...
  ASSERT_TRUE(Eventually(
      [&] { return env_.syncer().stats().metadata_updates == before.metadata_updates + 3; }));
  EXPECT_EQ(Metric("vsphere_syncer_metadata_updates_total", {"failure"}), failures + 1);
  // ...at once: both were looked up in one query and neither was queued to be looked up again.
  EXPECT_EQ(env_.syncer().stats().lookup_queries - before.lookup_queries, 1);
}

// A Released PV whose volume the provisioner's DeleteVolume took (its disk not yet gone) is not
// registered again: the registration would race the deletion and bring the disk back into CNS.
// (Seen at scale with the real provisioner: 489 CnsCreateVolume for 1,000 deletions.)
TEST_F(SyncerTest, AReleasedPvWhoseVolumeIsGoneIsNotRegisteredAgain) {
  const std::string id = Workload("going");
  ASSERT_TRUE(Eventually([&] { return Complete(id, "going"); }));
  absl::StatusOr<nlohmann::json> pv = env_.emu().Get("persistentvolumes", "", "pv-going");
  ASSERT_TRUE(pv.ok());
  (*pv)["status"]["phase"] = "Released";
  ASSERT_TRUE(env_.emu().Put("persistentvolumes", *pv).ok());
  ASSERT_TRUE(env_.cns().DeleteVolume(id, /*delete_disk=*/false).ok());
  auto creates = [&] {
    auto calls = env_.vcsim().CnsCounters();
    return calls.ok() ? (*calls)["CnsCreateVolume"] : -1;
  };
  const int before = creates();
  ASSERT_TRUE(env_.RunFullSync());  // queues the PV: CNS does not list its volume
  // One worker takes the queue in order: once a later volume is described, the PV was synced.
  const std::string marker = Workload("marker");  // one CnsCreateVolume of the test's
  ASSERT_TRUE(Eventually([&] { return Complete(marker, "marker"); }));
  EXPECT_EQ(creates(), before + 1);
  EXPECT_FALSE(env_.syncer().stats().pvs_without_volume.contains(id));
}

// Least privilege: every API call the syncer made is granted to the controller's ServiceAccount
// by the rendered manifest.
TEST_F(SyncerTest, ApiCallsAreAllowedByTheControllerRole) {
  const std::string id = Workload("rbac");
  ASSERT_TRUE(Eventually([&] { return Complete(id, "rbac"); }));
  std::set<std::string> allowed;  // "verb resource"
  for (const YAML::Node& d :
       YAML::LoadAllFromFile(CCM_SOURCE_DIR "/manifests/vsphere-csi-driver.yaml")) {
    if (!d.IsMap() || !d["kind"] || !d["metadata"]) continue;
    const std::string kind = d["kind"].as<std::string>();
    const std::string name = d["metadata"]["name"].as<std::string>();
    if (!((kind == "ClusterRole" && name == "vsphere-csi-controller-role") ||
          (kind == "Role" && name == "vsphere-csi-controller-leases"))) {
      continue;
    }
    for (const auto& rule : d["rules"])
      for (const auto& r : rule["resources"])
        for (const auto& v : rule["verbs"])
          allowed.insert(v.as<std::string>() + " " + r.as<std::string>());
  }
  ASSERT_FALSE(allowed.empty());
  int checked = 0;
  for (const auto& [key, count] : env_.emu().RequestCounts()) {
    const std::string& ua = key;
    if (absl::StartsWith(ua, "get discovery")) continue;
    std::vector<std::string> vr = absl::StrSplit(key, absl::MaxSplits(' ', 1));
    ASSERT_EQ(vr.size(), 2u);
    // The test's own writes go through the emulator directly and are not counted.
    EXPECT_TRUE(allowed.count(key)) << key << " is not granted to vsphere-csi-controller";
    ++checked;
  }
  EXPECT_GE(checked, 6);  // list + watch of PVs, PVCs and Pods
}

// Issue 54 item 3: with two vCenters the full sync keeps the CnsVolumeInfo records as the
// reference's does: volumes made before records existed get theirs, a record naming the wrong
// vCenter is made again, one no PV names goes at the second full sync that finds none, and a PV's
// deletion takes its record with it.
TEST(SyncerMultiVCenterTest, FullSyncKeepsTheCnsVolumeInfoRecords) {
  SyncerEnv env;
  ASSERT_TRUE(env.Start(/*start_syncer=*/false, /*two_vcenters=*/true).ok());
  absl::StatusOr<std::string> v1 = env.CreateVolume("pvc-first");
  absl::StatusOr<std::string> v2 = env.CreateVolumeInSecond("pvc-second");
  ASSERT_TRUE(v1.ok() && v2.ok());
  ASSERT_TRUE(env.PutPv("pv-first", *v1).ok());
  ASSERT_TRUE(env.PutPv("pv-second", *v2).ok());
  auto record = [&](const std::string& id, const std::string& vcenter) {
    return env.emu()
        .Create("cnsvolumeinfoes",
                {{"apiVersion", "cns.vmware.com/v1alpha1"},
                 {"kind", "CNSVolumeInfo"},
                 {"metadata", {{"name", id}, {"namespace", "vmware-system-csi"}}},
                 {"spec", {{"volumeID", id}, {"vCenterServer", vcenter}}}})
        .status();
  };
  ASSERT_TRUE(record(*v2, env.vcenter()).ok());  // wrong: v2 is in the second vCenter
  ASSERT_TRUE(record("5e0c3d7a-0000-4000-8000-00000000dead", env.vcenter()).ok());  // no PV
  ASSERT_TRUE(env.StartSyncer().ok());

  std::map<std::string, std::string> want = {
      {*v1, env.vcenter()},
      {*v2, SyncerEnv::kSecondVCenter},
      {"5e0c3d7a-0000-4000-8000-00000000dead", env.vcenter()}};  // kept: its PV may be coming
  EXPECT_EQ(env.VolumeInfos(), want);
  EXPECT_EQ(env.syncer().stats().volume_infos_created, 2);
  EXPECT_EQ(env.syncer().stats().volume_infos_removed, 1);

  ASSERT_TRUE(env.RunFullSync());
  want.erase("5e0c3d7a-0000-4000-8000-00000000dead");
  EXPECT_EQ(env.VolumeInfos(), want);

  ASSERT_TRUE(env.emu().Delete("persistentvolumes", "", "pv-first").ok());
  EXPECT_TRUE(Eventually([&] { return !env.VolumeInfos().contains(*v1); }));
  EXPECT_TRUE(env.VolumeInfos().contains(*v2));
}

}  // namespace
}  // namespace ccm::csi::syncer::testing
