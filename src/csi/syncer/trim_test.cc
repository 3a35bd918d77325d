#include "csi/syncer/trim.h"

#include <string>
#include <vector>

#include "csi/migration/intree.h"
#include "csi/syncer/entities.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ccm::csi::syncer {
namespace {

// Objects as the API server sends them: managed fields, annotations, status and all.
Json FullPv(const std::string& driver, bool bound) {
  Json pv = Json::parse(R"({
    "apiVersion": "v1", "kind": "PersistentVolume",
    "metadata": {"name": "pv-1", "uid": "u1", "resourceVersion": "17",
                 "labels": {"app": "db", "tier": "gold"},
                 "annotations": {"pv.kubernetes.io/provisioned-by": "csi.vsphere.vmware.com"},
                 "finalizers": ["kubernetes.io/pv-protection"],
                 "managedFields": [{"manager": "csi-provisioner", "fieldsV1": {"f:spec": {}}}]},
    "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
             "csi": {"volumeHandle": "0b7e2c1a-1111-2222-3333-444455556666",
                     "fsType": "ext4", "volumeAttributes": {"type": "vSphere CNS Block Volume"}},
             "persistentVolumeReclaimPolicy": "Delete", "storageClassName": "sc"},
    "status": {"phase": "Bound"}})");
  pv["spec"]["csi"]["driver"] = driver;
  if (bound) {
    pv["spec"]["claimRef"] = {{"kind", "PersistentVolumeClaim"},
                              {"namespace", "ns1"},
                              {"name", "data"},
                              {"uid", "u2"},
                              {"resourceVersion", "9"}};
  }
  return pv;
}

Json FullPvc(const std::string& volume) {
  Json pvc = Json::parse(R"({
    "metadata": {"name": "data", "namespace": "ns1", "uid": "u2", "resourceVersion": "18",
                 "labels": {"team": "a"},
                 "annotations": {"pv.kubernetes.io/bind-completed": "yes"},
                 "managedFields": [{"manager": "kube-controller-manager"}]},
    "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}},
             "storageClassName": "sc"},
    "status": {"phase": "Bound", "capacity": {"storage": "1Gi"}}})");
  if (!volume.empty()) pvc["spec"]["volumeName"] = volume;
  return pvc;
}

Json FullPod(const std::string& name, const std::string& phase, bool terminating) {
  Json pod = Json::parse(R"({
    "metadata": {"name": "", "namespace": "ns1", "uid": "u3", "resourceVersion": "30",
                 "labels": {"app": "db"}, "ownerReferences": [{"kind": "StatefulSet"}]},
    "spec": {"nodeName": "node-1",
             "containers": [{"name": "db", "image": "postgres", "env": [{"name": "A"}]}],
             "volumes": [{"name": "kube-api-access", "projected": {"sources": []}},
                         {"name": "v", "persistentVolumeClaim": {"claimName": "data"}},
                         {"name": "scratch", "emptyDir": {}},
                         {"name": "w", "persistentVolumeClaim": {"claimName": "logs",
                                                                 "readOnly": true}},
                         {"name": "vcp", "vsphereVolume": {"volumePath": "[ds1] kubevols/x.vmdk",
                                                           "fsType": "ext4"}}]},
    "status": {"phase": "", "podIP": "10.0.0.5", "conditions": [{"type": "Ready"}]}})");
  pod["metadata"]["name"] = name;
  pod["status"]["phase"] = phase;
  if (terminating) pod["metadata"]["deletionTimestamp"] = "2026-11-26T00:00:00Z";
  return pod;
}

// An in-tree vSphere PV under CSI migration.
Json FullInTreePv() {
  Json pv = FullPv("", true);
  pv["spec"].erase("csi");
  pv["spec"]["vsphereVolume"] = {{"volumePath", "[ds1] kubevols/pv-1.vmdk"},
                                 {"fsType", "ext4"},
                                 {"storagePolicyName", "gold"}};
  pv["metadata"]["annotations"] = {
      {"pv.kubernetes.io/provisioned-by", "kubernetes.io/vsphere-volume"},
      {"pv.kubernetes.io/migrated-to", "csi.vsphere.vmware.com"},
      {"kubernetes.io/createdby", "vsphere-volume-dynamic-provisioner"}};
  return pv;
}

template <typename F>
Json Trimmed(Json obj, F trim) {
  trim(obj);
  return obj;
}

TEST(SyncerTrimTest, KeepsExactlyWhatTheEntitiesRead) {
  EXPECT_EQ(Trimmed(FullPv("csi.vsphere.vmware.com", true), TrimPvForSyncer), Json::parse(R"({
    "metadata": {"name": "pv-1", "uid": "u1", "resourceVersion": "17",
                 "labels": {"app": "db", "tier": "gold"},
                 "annotations": {"pv.kubernetes.io/provisioned-by": "csi.vsphere.vmware.com"}},
    "spec": {"csi": {"driver": "csi.vsphere.vmware.com",
                     "volumeHandle": "0b7e2c1a-1111-2222-3333-444455556666"},
             "claimRef": {"namespace": "ns1", "name": "data"},
             "persistentVolumeReclaimPolicy": "Delete"},
    "status": {"phase": "Bound"}})"));
  EXPECT_EQ(Trimmed(FullPvc("pv-1"), TrimPvcForSyncer), Json::parse(R"({
    "metadata": {"name": "data", "namespace": "ns1", "resourceVersion": "18",
                 "labels": {"team": "a"}},
    "spec": {"volumeName": "pv-1"}})"));
  // The feature state pv-to-backingdiskobjectid-mapping compares the PVC's annotation.
  Json mapped = FullPvc("pv-1");
  mapped["metadata"]["annotations"]["cns.vmware.com/pv-to-backingdiskobjectid-mapping"] = "u1:52";
  EXPECT_EQ(Trimmed(mapped, TrimPvcForSyncer)["metadata"]["annotations"],
            (Json{{"cns.vmware.com/pv-to-backingdiskobjectid-mapping", "u1:52"}}));
  EXPECT_EQ(Trimmed(FullPod("web-1", "Running", true), TrimPodForSyncer), Json::parse(R"({
    "metadata": {"name": "web-1", "namespace": "ns1", "resourceVersion": "30",
                 "deletionTimestamp": "2026-11-26T00:00:00Z"},
    "spec": {"volumes": [{"persistentVolumeClaim": {"claimName": "data"}},
                         {"persistentVolumeClaim": {"claimName": "logs"}},
                         {"vsphereVolume": {"volumePath": "[ds1] kubevols/x.vmdk"}}]},
    "status": {"phase": "Running"}})"));
}

TEST(SyncerTrimTest, OddObjectsStayWhatTheyWere) {
  for (Json odd : {Json(), Json("x"), Json::array({1}), Json::object()}) {
    for (auto trim : {TrimPvForSyncer, TrimPvcForSyncer, TrimPodForSyncer}) {
      Json copy = odd;
      trim(copy);
      EXPECT_EQ(copy, odd.is_object() ? Json::object() : odd) << odd.dump();
    }
  }
  Json pod = {{"metadata", {{"name", "p"}}}, {"spec", {{"volumes", "not a list"}}}};
  TrimPodForSyncer(pod);
  EXPECT_EQ(pod, (Json{{"metadata", {{"name", "p"}}}}));
}

// Every answer the syncer takes from these objects is the same trimmed or not.
TEST(SyncerTrimTest, EntitiesAreTheSameFromTrimmedObjects) {
  struct Case {
    std::string name;
    Json pv;
    Json pvc;
    std::vector<Json> pods;
  };
  const std::vector<Case> cases = {
      {"bound, running and other pods",
       FullPv("csi.vsphere.vmware.com", true),
       FullPvc("pv-1"),
       {FullPod("a", "Running", false), FullPod("b", "Pending", false),
        FullPod("c", "Running", true)}},
      {"claim not bound to this PV", FullPv("csi.vsphere.vmware.com", true), FullPvc("pv-2"), {}},
      {"unbound PV", FullPv("csi.vsphere.vmware.com", false), FullPvc(""), {}},
      {"other driver", FullPv("other.csi.example.com", true), FullPvc("pv-1"), {}},
      {"in-tree, migrated", FullInTreePv(), FullPvc("pv-1"), {FullPod("a", "Running", false)}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const Json pv = Trimmed(c.pv, TrimPvForSyncer);
    const Json pvc = Trimmed(c.pvc, TrimPvcForSyncer);
    std::vector<Json> pods;
    for (const Json& p : c.pods) {
      pods.push_back(Trimmed(p, TrimPodForSyncer));
      EXPECT_EQ(PodClaimKeys(pods.back()), PodClaimKeys(p));
      EXPECT_EQ(PodIsRunning(pods.back()), PodIsRunning(p));
      EXPECT_EQ(PodInTreeVolumePaths(pods.back()), PodInTreeVolumePaths(p));
      EXPECT_EQ(PodInTreeVolumePaths(p), std::vector<std::string>{"[ds1] kubevols/x.vmdk"});
    }
    EXPECT_EQ(IsOurPv(pv), IsOurPv(c.pv));
    EXPECT_EQ(VolumeHandle(pv), VolumeHandle(c.pv));
    EXPECT_EQ(ClaimKey(pv), ClaimKey(c.pv));
    EXPECT_EQ(IsMigratedInTreePv(pv), IsMigratedInTreePv(c.pv));
    EXPECT_EQ(InTreeVolumePath(pv), InTreeVolumePath(c.pv));
    EXPECT_EQ(InTreeStoragePolicyName(pv), InTreeStoragePolicyName(c.pv));
    EXPECT_FALSE(PvUpdateMatters(c.pv, pv));
    EXPECT_FALSE(PvcUpdateMatters(c.pvc, pvc));
    EXPECT_EQ(DesiredEntities(pv, &pvc, pods, "c1"), DesiredEntities(c.pv, &c.pvc, c.pods, "c1"));
  }
}

}  // namespace
}  // namespace ccm::csi::syncer
