// The CSI driver with the real sidecars and kube-controller-manager (issue 53 item 2): the
// manifests of the zones overlay applied to a real kube-apiserver, our controller, syncer and node
// plugins, external-provisioner (v5.2.0 as the manifest pins it, and v4.0.1), external-attacher,
// csi-resizer, csi-snapshotter and snapshot-controller with the manifest's arguments, and
// kube-controller-manager's PV binder, attach-detach and protection controllers. What a cluster
// sees: claims Bound (Immediate, and WaitForFirstConsumer with the scheduler's selected-node
// annotation), VolumeAttachments made from Pods attached with the publish context and detached
// when the Pod goes, volumes deleted with their claims, a ReadWriteMany file volume, zones from
// CSINodeTopology, an in-tree vSphere PV under CSI migration attached through its VMDK path,
// expansion, a snapshot and its restore, and the syncer's metadata in CNS.
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "peers/csi_stack.h"
#include "peers/peers.h"
#include "testing/eventually.h"

namespace ccm::peers {
namespace {
using integration::ChildProcess;
using json = nlohmann::json;
using ::ccm::testing::Eventually;

constexpr char kNs[] = "peers";
const absl::Duration kWait = absl::Seconds(60);

// Two zones (clusters zone-a with two node VMs and zone-b with one), a datastore per zone and a
// shared one, and zone-a a vSAN cluster with vSAN file services (its vsan-a datastore holds file
// volumes).
std::string Spec() {
  return R"({
  "users": {"csi-user": "csi-pass"},
  "datacenters": [{"name": "dc1",
    "clusters": [{"name": "zone-a", "hosts": 2, "vsan_file_services": true},
                 {"name": "zone-b", "hosts": 1}],
    "vms": [{"name": "node-a1", "cluster": "zone-a"}, {"name": "node-a2", "cluster": "zone-a"},
            {"name": "node-b1", "cluster": "zone-b"}],
    "datastores": [{"name": "ds-a", "capacity_mb": 204800, "clusters": ["zone-a"]},
                   {"name": "ds-b", "capacity_mb": 102400, "clusters": ["zone-b"]},
                   {"name": "ds-shared", "capacity_mb": 102400, "clusters": ["zone-a", "zone-b"]},
                   {"name": "vsan-a", "capacity_mb": 102400, "clusters": ["zone-a"], "type": "vsan"}]}],
  "tag_categories": [{"name": "k8s-zone"}, {"name": "k8s-region"}],
  "tags": [{"name": "zone-a", "category": "k8s-zone", "attach": ["/dc1/host/zone-a"]},
           {"name": "zone-b", "category": "k8s-zone", "attach": ["/dc1/host/zone-b"]},
           {"name": "region-1", "category": "k8s-region", "attach": ["/dc1"]}]
})";
}

constexpr char kZoneKey[] = "topology.csi.vmware.com/k8s-zone";

json StorageClass(const std::string& name, const std::string& binding,
                  const json& parameters = json::object()) {
  return {{"apiVersion", "storage.k8s.io/v1"}, {"kind", "StorageClass"},
          {"metadata", {{"name", name}}},      {"provisioner", kDriver},
          {"reclaimPolicy", "Delete"},         {"allowVolumeExpansion", true},
          {"volumeBindingMode", binding},      {"parameters", parameters}};
}

json Claim(const std::string& name, const std::string& sc, const std::string& size = "1Gi",
           const std::string& mode = "ReadWriteOnce") {
  return {{"apiVersion", "v1"},
          {"kind", "PersistentVolumeClaim"},
          {"metadata", {{"name", name}, {"namespace", kNs}}},
          {"spec",
           {{"accessModes", {mode}},
            {"storageClassName", sc},
            {"resources", {{"requests", {{"storage", size}}}}}}}};
}

// A Pod the scheduler placed on `node` (nodeName set), using `claims`.
json PodOn(const std::string& name, const std::string& node,
           const std::vector<std::string>& claims) {
  json volumes = json::array(), mounts = json::array();
  for (const std::string& c : claims) {
    volumes.push_back({{"name", c}, {"persistentVolumeClaim", {{"claimName", c}}}});
    mounts.push_back({{"name", c}, {"mountPath", "/data/" + c}});
  }
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"name", name}, {"namespace", kNs}}},
          {"spec",
           {{"nodeName", node},
            {"containers", {{{"name", "app"}, {"image", "busybox"}, {"volumeMounts", mounts}}}},
            {"volumes", volumes}}}};
}

class CsiPeersTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    CsiStackOptions o;
    o.spec = Spec();
    o.conf_extra =
        "[Labels]\ntopology-categories = \"k8s-region,k8s-zone\"\n\n"
        "[TopologyCategory \"k8s-region\"]\nlabel = \"topology.kubernetes.io/region\"\n\n"
        "[TopologyCategory \"k8s-zone\"]\nlabel = \"topology.kubernetes.io/zone\"\n";
    o.kcm_flags = {"--feature-gates=CSIMigration=true,CSIMigrationvSphere=true"};
    auto stack = CsiStack::Start("csi", o);
    ASSERT_TRUE(stack.ok()) << stack.status();
    stack_ = stack->release();
    for (const auto& [vm, zone] : std::vector<std::pair<std::string, std::string>>{
             {"node-a1", "zone-a"}, {"node-a2", "zone-a"}, {"node-b1", "zone-b"}}) {
      ASSERT_TRUE(stack_->AddNode(vm, zone).ok()) << vm << stack_->Logs();
    }
    ASSERT_TRUE(stack_->kube().Kubectl({"create", "namespace", kNs}).ok());
    // The ServiceAccount admission needs the namespace's default ServiceAccount.
    ASSERT_TRUE(WaitObject(
        client(), ServiceAccounts(), kNs, "default", [](const json&) { return true; }, kWait));
    for (const auto& [container, program, extra] :
         std::vector<std::tuple<std::string, std::string, std::vector<std::string>>>{
             {"csi-attacher", "csi-attacher-v4.8.1", {"--reconcile-sync=1s"}},
             {"csi-provisioner", "csi-provisioner-v5.2.0", {"--leader-election=false"}},
             {"csi-resizer", "csi-resizer-v1.13.2", {}}}) {
      if (!HasProgram(program)) continue;
      ASSERT_TRUE(stack_->StartSidecar(container, program, extra).ok()) << program;
    }
    ASSERT_TRUE(
        client().Create(kube::StorageClasses(), "", StorageClass("block", "Immediate")).ok());
  }
  static void TearDownTestSuite() { delete stack_; }

  static kube::RestClient& client() { return stack_->client(); }
  static const kube::Resource& ServiceAccounts() {
    static const kube::Resource r{"", "v1", "serviceaccounts", "ServiceAccount", true};
    return r;
  }

  static std::string Moid(const std::string& vm) {
    for (const auto& v : stack_->vcsim().info().vms) {
      if (v.name == vm) return v.moid;
    }
    return "";
  }
  static std::optional<::ccm::testing::VcsimCnsVolume> Cns(const std::string& id) {
    auto vols = stack_->vcsim().CnsVolumes();
    if (!vols.ok()) return std::nullopt;
    for (const auto& v : *vols) {
      if (v.id == id) return v;
    }
    return std::nullopt;
  }

  // The claim Bound: its PV.
  static json WaitBound(const std::string& claim) {
    json pvc, pv;
    EXPECT_TRUE(WaitObject(
        client(), kube::PersistentVolumeClaims(), kNs, claim,
        [](const json& c) { return c["status"].value("phase", "") == "Bound"; }, kWait, &pvc))
        << pvc.dump() << stack_->Logs();
    const std::string name = pvc["spec"].value("volumeName", "");
    if (name.empty()) return json::object();
    EXPECT_TRUE(WaitObject(
        client(), kube::PersistentVolumes(), "", name,
        [](const json& v) { return v["status"].value("phase", "") == "Bound"; }, kWait, &pv))
        << pv.dump();
    return pv;
  }

  // The VolumeAttachment of `pv` on `node` once attached (kube-controller-manager made it, the
  // attacher attached it).
  static json WaitAttached(const std::string& pv, const std::string& node) {
    json found;
    EXPECT_TRUE(Eventually(
        [&] {
          auto list = client().List(kube::VolumeAttachments(), "", {});
          if (!list.ok()) return false;
          for (const json& va : list->items) {
            if (va["spec"]["source"].value("persistentVolumeName", "") == pv &&
                va["spec"].value("nodeName", "") == node) {
              found = va;
              return va["status"].value("attached", false);
            }
          }
          return false;
        },
        kWait, absl::Milliseconds(100)))
        << found.dump() << stack_->Logs();
    return found;
  }

  static bool NoAttachmentOf(const std::string& pv) {
    return Eventually(
        [&] {
          auto list = client().List(kube::VolumeAttachments(), "", {});
          if (!list.ok()) return false;
          for (const json& va : list->items) {
            if (va["spec"]["source"].value("persistentVolumeName", "") == pv) return false;
          }
          return true;
        },
        kWait, absl::Milliseconds(100));
  }

  // What the kubelet reports once the Pod's containers run (the syncer writes Pods to CNS then).
  static absl::Status MarkRunning(const std::string& pod) {
    return client()
        .Patch(kube::Pods(), kNs, pod, kube::PatchType::kStrategicMerge,
               {{"status", {{"phase", "Running"}, {"podIP", "10.244.0.5"}}}}, "status")
        .status();
  }

  static absl::Status ForceDelete(const kube::Resource& r, const std::string& name) {
    kube::DeleteOptions o;
    o.grace_period_seconds = 0;
    return client().Delete(r, kNs, name, o);
  }

  // A claim of class `sc` through its whole life: Bound, attached to `node` by a Pod, its CNS
  // metadata written by the syncer, detached when the Pod goes, deleted with the claim.
  static void BlockLifecycle(const std::string& claim, const std::string& node) {
    ASSERT_TRUE(client().Create(kube::PersistentVolumeClaims(), kNs, Claim(claim, "block")).ok());
    json pv = WaitBound(claim);
    ASSERT_TRUE(pv.contains("spec")) << "not bound";
    const std::string pv_name = pv["metadata"]["name"];
    const std::string handle = pv["spec"]["csi"].value("volumeHandle", "");
    EXPECT_EQ(pv["spec"]["csi"].value("driver", ""), kDriver);
    EXPECT_EQ(pv["spec"]["csi"].value("fsType", ""), "ext4");
    EXPECT_EQ(pv["spec"]["capacity"].value("storage", ""), "1Gi");
    // Topology: the PV is pinned to the zones the volume is reachable from.
    EXPECT_TRUE(absl::StrContains(pv["spec"]["nodeAffinity"].dump(), kZoneKey)) << pv.dump();
    ASSERT_TRUE(Cns(handle).has_value()) << handle;
    EXPECT_EQ(Cns(handle)->name, pv_name);

    ASSERT_TRUE(client().Create(kube::Pods(), kNs, PodOn(claim + "-pod", node, {claim})).ok());
    json va = WaitAttached(pv_name, node);
    ASSERT_TRUE(MarkRunning(claim + "-pod").ok());
    const json& meta = va["status"].value("attachmentMetadata", json::object());
    EXPECT_FALSE(meta.empty()) << va.dump();
    EXPECT_EQ(Cns(handle)->attached_vm, Moid(node));
    // The syncer pushes the PV, the claim and the Pod into CNS.
    EXPECT_TRUE(Eventually([&] { return Cns(handle) && Cns(handle)->entities >= 3; }, kWait))
        << (Cns(handle) ? Cns(handle)->entities : -1) << stack_->Logs();

    ASSERT_TRUE(ForceDelete(kube::Pods(), claim + "-pod").ok());
    EXPECT_TRUE(NoAttachmentOf(pv_name)) << stack_->Logs();
    EXPECT_TRUE(Eventually([&] { return Cns(handle) && Cns(handle)->attached_vm.empty(); }, kWait));

    ASSERT_TRUE(client().Delete(kube::PersistentVolumeClaims(), kNs, claim).ok());
    EXPECT_TRUE(Eventually(
        [&] {
          return kube::IsNotFoundError(
              client().Get(kube::PersistentVolumes(), "", pv_name).status());
        },
        kWait))
        << stack_->Logs();
    EXPECT_FALSE(Cns(handle).has_value()) << "the CNS volume is deleted with its claim";
  }

  static inline CsiStack* stack_ = nullptr;
};

TEST_F(CsiPeersTest, NodesHaveTheirZonesFromCsiNodeTopology) {
  for (const auto& [vm, zone] : std::vector<std::pair<std::string, std::string>>{
           {"node-a1", "zone-a"}, {"node-a2", "zone-a"}, {"node-b1", "zone-b"}}) {
    SCOPED_TRACE(vm);
    static const kube::Resource topologies{"cns.vmware.com", "v1alpha1", "csinodetopologies",
                                           "CSINodeTopology", false};
    auto t = client().Get(topologies, "", vm);
    ASSERT_TRUE(t.ok()) << t.status();
    EXPECT_EQ((*t)["status"].value("status", ""), "Success") << t->dump();
    EXPECT_TRUE(absl::StrContains((*t)["status"]["topologyLabels"].dump(), zone)) << t->dump();
    auto csinode = client().Get(kube::CsiNodes(), "", vm);
    ASSERT_TRUE(csinode.ok());
    const json& driver = (*csinode)["spec"]["drivers"][0];
    EXPECT_EQ(driver.value("nodeID", ""), stack_->VmUuid(vm));
    EXPECT_TRUE(absl::StrContains(driver["topologyKeys"].dump(), kZoneKey)) << driver.dump();
    auto node = client().Get(kube::Nodes(), "", vm);
    ASSERT_TRUE(node.ok());
    EXPECT_EQ((*node)["metadata"]["labels"].value(kZoneKey, ""), zone);
  }
}

TEST_F(CsiPeersTest, BlockVolumeWithProvisionerV5) { BlockLifecycle("block-v5", "node-a1"); }

TEST_F(CsiPeersTest, BlockVolumeWithProvisionerV4) {
  ASSERT_TRUE(HasProgram("csi-provisioner-v4.0.1"));
  stack_->Stop("csi-provisioner-v5.2.0");
  // Not leader-elected: the two replace each other without waiting out the other's Lease. Before
  // v5 the provisioner's Topology gate is off by default: topology setups switch it on.
  ASSERT_TRUE(stack_
                  ->StartSidecar("csi-provisioner", "csi-provisioner-v4.0.1",
                                 {"--leader-election=false", "--feature-gates=Topology=true"})
                  .ok());
  BlockLifecycle("block-v4", "node-b1");
  stack_->Stop("csi-provisioner-v4.0.1");
  ASSERT_TRUE(
      stack_->StartSidecar("csi-provisioner", "csi-provisioner-v5.2.0", {"--leader-election=false"})
          .ok());
}

TEST_F(CsiPeersTest, WaitForFirstConsumerProvisionsInTheSelectedNodesZone) {
  ASSERT_TRUE(client()
                  .Create(kube::StorageClasses(), "", StorageClass("wffc", "WaitForFirstConsumer"))
                  .ok());
  ASSERT_TRUE(client().Create(kube::PersistentVolumeClaims(), kNs, Claim("late", "wffc")).ok());
  // The binder leaves it Pending until a Pod picks a node; the scheduler then writes the node.
  ASSERT_TRUE(client()
                  .Patch(kube::PersistentVolumeClaims(), kNs, "late", kube::PatchType::kMerge,
                         {{"metadata",
                           {{"annotations", {{"volume.kubernetes.io/selected-node", "node-b1"}}}}}})
                  .ok());
  json pv = WaitBound("late");
  ASSERT_TRUE(pv.contains("spec")) << "not bound";
  const std::string handle = pv["spec"]["csi"].value("volumeHandle", "");
  ASSERT_TRUE(Cns(handle).has_value());
  // Only datastores of node-b1's host (zone-b's): ds-b, ds-shared, or datastore1 (the
  // simulator mounts it on the last host it made, zone-b's).
  const std::string ds = Cns(handle)->datastore_name;
  EXPECT_TRUE(ds == "ds-b" || ds == "ds-shared" || ds == "datastore1") << ds;
  EXPECT_TRUE(absl::StrContains(pv["spec"]["nodeAffinity"].dump(), "zone-b")) << pv.dump();
  ASSERT_TRUE(client().Delete(kube::PersistentVolumeClaims(), kNs, "late").ok());
  EXPECT_TRUE(Eventually([&] { return !Cns(handle).has_value(); }, kWait)) << stack_->Logs();
}

TEST_F(CsiPeersTest, ReadWriteManyFileVolumeOnTwoNodes) {
  ASSERT_TRUE(client()
                  .Create(kube::PersistentVolumeClaims(), kNs,
                          Claim("shared", "block", "2Gi", "ReadWriteMany"))
                  .ok());
  json pv = WaitBound("shared");
  ASSERT_TRUE(pv.contains("spec")) << "not bound";
  const std::string pv_name = pv["metadata"]["name"];
  const std::string handle = pv["spec"]["csi"].value("volumeHandle", "");
  EXPECT_TRUE(absl::StartsWith(handle, "file:")) << handle;
  ASSERT_TRUE(Cns(handle).has_value());
  EXPECT_EQ(Cns(handle)->datastore_name, "vsan-a");
  for (const char* node : {"node-a1", "node-a2"}) {
    ASSERT_TRUE(client()
                    .Create(kube::Pods(), kNs, PodOn(absl::StrCat("rwx-", node), node, {"shared"}))
                    .ok());
  }
  for (const char* node : {"node-a1", "node-a2"}) {
    json va = WaitAttached(pv_name, node);
    EXPECT_TRUE(absl::StrContains(va["status"]["attachmentMetadata"].dump(), "/vsanfs/"))
        << va.dump();
  }
  for (const char* node : {"node-a1", "node-a2"}) {
    ASSERT_TRUE(ForceDelete(kube::Pods(), absl::StrCat("rwx-", node)).ok());
  }
  EXPECT_TRUE(NoAttachmentOf(pv_name));
  ASSERT_TRUE(client().Delete(kube::PersistentVolumeClaims(), kNs, "shared").ok());
  EXPECT_TRUE(Eventually([&] { return !Cns(handle).has_value(); }, kWait)) << stack_->Logs();
}

// An in-tree vSphere PV (a VMDK the in-tree plugin made), under CSI migration: the syncer
// registers it with CNS, kube-controller-manager's attach-detach controller hands its attachment
// to csi.vsphere.vmware.com, and the external-attacher translates it and publishes it by its VMDK
// path. The attacher's reconciliation (every second here) then finds it listed, by that path, on
// its node: three periods pass with no publish again (issue 54 item 1, the reference's issue 2534).
TEST_F(CsiPeersTest, MigratedInTreeVolumeIsAttachedByItsPathAndStaysAttached) {
  auto disk = stack_->vcsim().CreateInTreeDisk("dc1", "ds-shared", "kubevols/intree-1.vmdk", 1024);
  ASSERT_TRUE(disk.ok()) << disk.status();
  const std::string path = disk->path;
  json pv = {{"apiVersion", "v1"},
             {"kind", "PersistentVolume"},
             {"metadata", {{"name", "intree-pv"}}},
             {"spec",
              {{"capacity", {{"storage", "1Gi"}}},
               {"accessModes", {"ReadWriteOnce"}},
               {"persistentVolumeReclaimPolicy", "Retain"},
               {"storageClassName", ""},
               {"vsphereVolume", {{"volumePath", path}, {"fsType", "ext4"}}},
               {"claimRef", {{"namespace", kNs}, {"name", "intree-claim"}}}}}};
  ASSERT_TRUE(client().Create(kube::PersistentVolumes(), "", pv).ok());
  json claim = Claim("intree-claim", "");
  claim["spec"]["volumeName"] = "intree-pv";
  ASSERT_TRUE(client().Create(kube::PersistentVolumeClaims(), kNs, claim).ok());
  WaitBound("intree-claim");
  // The syncer's registration: a CnsVSphereVolumeMigration naming the path.
  static const kube::Resource migrations{"cns.vmware.com", "v1alpha1", "cnsvspherevolumemigrations",
                                         "CnsVSphereVolumeMigration", false};
  std::string cns_id;
  ASSERT_TRUE(Eventually(
      [&] {
        auto list = client().List(migrations, "", {});
        if (!list.ok()) return false;
        for (const json& m : list->items) {
          if (m["spec"].value("volumepath", "") == path) cns_id = m["spec"].value("volumeid", "");
        }
        return !cns_id.empty();
      },
      kWait))
      << stack_->Logs();

  ASSERT_TRUE(
      client().Create(kube::Pods(), kNs, PodOn("intree-pod", "node-a1", {"intree-claim"})).ok());
  json va = WaitAttached("intree-pv", "node-a1");
  EXPECT_EQ(va["spec"].value("attacher", ""), kDriver) << va.dump();
  EXPECT_EQ(Cns(cns_id)->attached_vm, Moid("node-a1"));

  // Three reconciliations of the attacher: no publish again, still attached.
  auto count = [](const std::string& log, const std::string& what) {
    size_t n = 0;
    for (size_t at = log.find(what); at != std::string::npos; at = log.find(what, at + 1)) ++n;
    return n;
  };
  ChildProcess& controller = stack_->controller_process();
  const size_t publishes = count(controller.Stderr(), "CSI ControllerPublishVolume:");
  const size_t lists = count(controller.Stderr(), "CSI ListVolumes:");
  ASSERT_TRUE(Eventually(
      [&] { return count(controller.Stderr(), "CSI ListVolumes:") >= lists + 3; }, kWait));
  EXPECT_EQ(count(controller.Stderr(), "CSI ControllerPublishVolume:"), publishes)
      << stack_->Logs();
  auto now = client().Get(kube::VolumeAttachments(), "", va["metadata"]["name"]);
  ASSERT_TRUE(now.ok());
  EXPECT_TRUE((*now)["status"].value("attached", false)) << now->dump();

  ASSERT_TRUE(ForceDelete(kube::Pods(), "intree-pod").ok());
  EXPECT_TRUE(NoAttachmentOf("intree-pv")) << stack_->Logs();
  EXPECT_TRUE(Eventually([&] { return Cns(cns_id) && Cns(cns_id)->attached_vm.empty(); }, kWait));
}

// A claim grown through the csi-resizer: ControllerExpandVolume in CNS, the PV's capacity, and
// the claim waiting for the node's file system resize.
TEST_F(CsiPeersTest, ClaimExpandedThroughTheResizer) {
  if (!HasProgram("csi-resizer-v1.13.2")) {
    std::printf("no csi-resizer among the peers: expansion through it not checked\n");
    return;
  }
  ASSERT_TRUE(client().Create(kube::PersistentVolumeClaims(), kNs, Claim("grow", "block")).ok());
  json pv = WaitBound("grow");
  ASSERT_TRUE(pv.contains("spec")) << "not bound";
  const std::string handle = pv["spec"]["csi"].value("volumeHandle", "");
  ASSERT_TRUE(client()
                  .Patch(kube::PersistentVolumeClaims(), kNs, "grow", kube::PatchType::kMerge,
                         {{"spec", {{"resources", {{"requests", {{"storage", "3Gi"}}}}}}}})
                  .ok());
  json now;
  EXPECT_TRUE(WaitObject(
      client(), kube::PersistentVolumes(), "", pv["metadata"]["name"],
      [](const json& v) { return v["spec"]["capacity"].value("storage", "") == "3Gi"; }, kWait,
      &now))
      << now.dump() << stack_->Logs();
  EXPECT_EQ(Cns(handle)->capacity_mb, 3072);
  json pvc;
  EXPECT_TRUE(WaitObject(
      client(), kube::PersistentVolumeClaims(), kNs, "grow",
      [](const json& c) {
        return absl::StrContains(c["status"].value("conditions", json::array()).dump(),
                                 "FileSystemResizePending");
      },
      kWait, &pvc))
      << pvc.dump();
  ASSERT_TRUE(client().Delete(kube::PersistentVolumeClaims(), kNs, "grow").ok());
  EXPECT_TRUE(Eventually([&] { return !Cns(handle).has_value(); }, kWait));
}

// A VolumeSnapshot through snapshot-controller and csi-snapshotter, and a claim restored from it.
TEST_F(CsiPeersTest, SnapshotAndRestore) {
  if (!HasProgram("csi-snapshotter-v8.2.0") || !HasProgram("snapshot-controller-v8.2.0")) {
    std::printf("no csi-snapshotter or snapshot-controller among the peers: not checked\n");
    return;
  }
  auto bin = BinDir();
  ASSERT_TRUE(bin.ok());
  for (const char* crd : {"volumesnapshotclasses", "volumesnapshotcontents", "volumesnapshots"}) {
    ASSERT_TRUE(
        stack_->kube()
            .Kubectl({"apply", "-f",
                      absl::StrCat(*bin, "/snapshot-crds/snapshot.storage.k8s.io_", crd, ".yaml")})
            .ok());
  }
  ASSERT_TRUE(stack_->kube()
                  .Kubectl({"wait", "--for=condition=Established", "--timeout=60s",
                            "crd/volumesnapshots.snapshot.storage.k8s.io",
                            "crd/volumesnapshotcontents.snapshot.storage.k8s.io",
                            "crd/volumesnapshotclasses.snapshot.storage.k8s.io"})
                  .ok());
  ASSERT_TRUE(stack_
                  ->StartAdminProgram("snapshot-controller", "snapshot-controller-v8.2.0",
                                      {"--leader-election=false"})
                  .ok());
  ASSERT_TRUE(stack_->StartSidecar("csi-snapshotter", "csi-snapshotter-v8.2.0", {}).ok());
  ASSERT_TRUE(client()
                  .Create(VolumeSnapshotClasses(), "",
                          {{"apiVersion", "snapshot.storage.k8s.io/v1"},
                           {"kind", "VolumeSnapshotClass"},
                           {"metadata", {{"name", "cns"}}},
                           {"driver", kDriver},
                           {"deletionPolicy", "Delete"}})
                  .ok());
  ASSERT_TRUE(client().Create(kube::PersistentVolumeClaims(), kNs, Claim("origin", "block")).ok());
  json pv = WaitBound("origin");
  ASSERT_TRUE(pv.contains("spec")) << "not bound";
  const std::string source = pv["spec"]["csi"].value("volumeHandle", "");
  ASSERT_TRUE(client()
                  .Create(VolumeSnapshots(), kNs,
                          {{"apiVersion", "snapshot.storage.k8s.io/v1"},
                           {"kind", "VolumeSnapshot"},
                           {"metadata", {{"name", "snap"}, {"namespace", kNs}}},
                           {"spec",
                            {{"volumeSnapshotClassName", "cns"},
                             {"source", {{"persistentVolumeClaimName", "origin"}}}}}})
                  .ok());
  json snap;
  ASSERT_TRUE(WaitObject(
      client(), VolumeSnapshots(), kNs, "snap",
      [](const json& v) { return v.value("status", json::object()).value("readyToUse", false); },
      kWait, &snap))
      << snap.dump() << stack_->Logs();
  auto content = client().Get(VolumeSnapshotContents(), "",
                              snap["status"].value("boundVolumeSnapshotContentName", ""));
  ASSERT_TRUE(content.ok());
  const std::string handle = (*content)["status"].value("snapshotHandle", "");
  EXPECT_TRUE(absl::StartsWith(handle, source + "+")) << handle;
  ASSERT_EQ(Cns(source)->snapshots.size(), 1u);

  json restore = Claim("restored", "block");
  restore["spec"]["dataSource"] = {
      {"apiGroup", "snapshot.storage.k8s.io"}, {"kind", "VolumeSnapshot"}, {"name", "snap"}};
  ASSERT_TRUE(client().Create(kube::PersistentVolumeClaims(), kNs, restore).ok());
  json restored = WaitBound("restored");
  ASSERT_TRUE(restored.contains("spec")) << "not bound";
  const std::string copy = restored["spec"]["csi"].value("volumeHandle", "");
  EXPECT_NE(copy, source);
  EXPECT_TRUE(Cns(copy).has_value());

  ASSERT_TRUE(client().Delete(kube::PersistentVolumeClaims(), kNs, "restored").ok());
  ASSERT_TRUE(client().Delete(VolumeSnapshots(), kNs, "snap").ok());
  EXPECT_TRUE(Eventually([&] { return Cns(source) && Cns(source)->snapshots.empty(); }, kWait))
      << stack_->Logs();
  ASSERT_TRUE(client().Delete(kube::PersistentVolumeClaims(), kNs, "origin").ok());
  EXPECT_TRUE(Eventually([&] { return !Cns(source).has_value() && !Cns(copy).has_value(); }, kWait))
      << stack_->Logs();
}

}  // namespace
}  // namespace ccm::peers

int main(int argc, char** argv) {
  return ccm::peers::Main(
      argc, argv, "peers_csi_test",
      {"etcd", "kube-apiserver", "kube-controller-manager", "csi-provisioner-v5.2.0",
       "csi-provisioner-v4.0.1", "csi-attacher-v4.8.1"});
}
