// `diagnose` of both binaries against the vCenter simulator and the API emulator: a healthy
// set-up prints only ok lines (exit 0); each set-up mistake prints the line that names it (exit 1
// for an error).

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "integration/child_process.h"
#include "integration/harness.h"

namespace ccm::integration::diagnose_test {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using json = nlohmann::json;

struct Outcome {
  int code = -1;
  std::string out;
};

Outcome Exec(const std::vector<std::string>& argv, const std::string& log) {
  auto p = ChildProcess::Start(argv, log);
  EXPECT_TRUE(p.ok()) << p.status();
  if (!p.ok()) return {};
  Outcome r;
  r.code = (*p)->WaitExit(absl::Seconds(60)).value_or(-1);
  r.out = (*p)->Stdout();
  return r;
}

void ExpectOnlyOk(const Outcome& r) {
  EXPECT_EQ(r.code, 0) << r.out;
  for (absl::string_view line : absl::StrSplit(r.out, '\n', absl::SkipEmpty())) {
    EXPECT_TRUE(absl::StartsWith(line, "ok ") || line == "0 errors, 0 warnings") << line;
  }
}

// The harness's inventory, plus: a datastore on one host of c1 only (in datastore cluster
// pod-local), a storage policy "gold" that datastore1 satisfies, a cluster c2 whose host
// carries no zone tag, with VM node-5, and VMs node-6 and node-7 in c1.
std::string DiagnoseSpec() {
  json spec = json::parse(TestSpec());
  json& dc = spec["datacenters"][0];
  dc["clusters"].push_back({{"name", "c2"}, {"hosts", 1}});
  dc["vms"].push_back({{"name", "node-5"},
                       {"cluster", "c2"},
                       {"nics", {{{"network", "VM Network"}, {"ips", {"10.0.0.15"}}}}}});
  for (const char* name : {"node-6", "node-7"}) {
    dc["vms"].push_back({{"name", name}, {"cluster", "c1"}});
  }
  dc["datastores"] = {{{"name", "local-0"},
                       {"capacity_mb", 900000},
                       {"hosts", {"c1-host-0"}},
                       {"datastore_cluster", "pod-local"}}};
  spec["storage_policies"] = {
      {{"name", "gold"}, {"id", "gold-policy-id"}, {"datastores", {"datastore1"}}}};
  return spec.dump();
}

class DiagnoseTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto c = Cluster::Start("diagnose", DiagnoseSpec());
    ASSERT_TRUE(c.ok()) << c.status();
    cluster_ = *std::move(c);
  }

  std::string Port() const {
    const std::string hp = cluster_->vcsim().host_port();
    return hp.substr(hp.rfind(':') + 1);
  }

  // The harness's vsphere.conf with parts replaced.
  std::string CcmConfig(const std::string& server, const std::string& port,
                        const std::string& trust, const std::string& secret,
                        const std::string& datacenters = "") const {
    return absl::StrCat(
        "global:\n  port: ", port, "\n  ", trust, "\n  secretName: ", secret,
        "\n  secretNamespace: kube-system\nvcenter:\n  vc-test:\n    server: ", server, "\n",
        datacenters.empty() ? "" : "    datacenters:\n      - ", datacenters,
        datacenters.empty() ? "" : "\n", "labels:\n  region: k8s-region\n  zone: k8s-zone\n");
  }
  std::string CaLine() const { return absl::StrCat("caFile: ", cluster_->vcsim().info().ca_file); }

  Outcome Ccm(const std::string& config_text, const std::string& name) {
    const std::string path = cluster_->dir() + "/" + name + ".conf";
    WriteFile(path, config_text);
    return Exec({CcmBinary(), "diagnose", "--cloud-config=" + path,
                 "--kubeconfig=" + cluster_->kubeconfig()},
                cluster_->dir() + "/" + name);
  }

  // csi-vsphere.conf with user `user` inline, then `extra`.
  Outcome Csi(const std::string& user, const std::string& password, const std::string& name,
              const std::string& extra = "") {
    const std::string path = cluster_->dir() + "/" + name + "-csi.conf";
    WriteFile(path, absl::StrCat("[Global]\ncluster-id = \"c1\"\n[VirtualCenter \"127.0.0.1\"]\n"
                                 "user = \"",
                                 user, "\"\npassword = \"", password, "\"\nport = \"", Port(),
                                 "\"\nca-file = \"", cluster_->vcsim().info().ca_file,
                                 "\"\ndatacenters = \"dc1\"\n", extra));
    return Exec({"/usr/bin/env", "-i", "VSPHERE_CSI_CONFIG=" + path, CSI_DRIVER_BINARY, "diagnose",
                 "--kubeconfig=" + cluster_->kubeconfig()},
                cluster_->dir() + "/" + name);
  }

  // The Secret the CSI driver's pods mount csi-vsphere.conf from, with `data`.
  void AddCsiConfigSecret(const json& data) {
    (void)cluster_->emu().Create("namespaces", {{"apiVersion", "v1"},
                                                {"kind", "Namespace"},
                                                {"metadata", {{"name", "vmware-system-csi"}}}});
    json secret = {
        {"apiVersion", "v1"},
        {"kind", "Secret"},
        {"metadata", {{"name", "vsphere-config-secret"}, {"namespace", "vmware-system-csi"}}},
        {"data", data}};
    ASSERT_TRUE(cluster_->emu().Create("secrets", secret).ok());
  }

  // A Node as the CPI leaves it: providerID, zone and region labels, no taint.
  void AddInitialisedNode(const std::string& vm, bool zone_labels = true) {
    json n = KubeletNode(vm, SmbiosUuid(cluster_->VmUuid(vm)));
    n["spec"].erase("taints");
    n["spec"]["providerID"] = "vsphere://" + cluster_->VmUuid(vm);
    if (zone_labels) {
      n["metadata"]["labels"]["topology.kubernetes.io/zone"] = "zone-a";
      n["metadata"]["labels"]["topology.kubernetes.io/region"] = "region-1";
    }
    ASSERT_TRUE(cluster_->emu().Create("nodes", n).ok());
  }

  std::unique_ptr<Cluster> cluster_;
};

// The CPI's own initialisation, then both binaries' diagnose: nothing but ok lines.
TEST_F(DiagnoseTest, HealthySetUpPrintsOnlyOk) {
  ASSERT_TRUE(cluster_->RegisterNode("node-1").ok());
  ASSERT_TRUE(cluster_->RegisterNode("node-2").ok());
  int port = 0;
  {
    auto ccm = cluster_->StartCcm("ccm", &port);
    ASSERT_TRUE(ccm.ok()) << ccm.status();
    ASSERT_TRUE(WaitFor(
        [&] {
          return !cluster_->ProviderId("node-1").empty() && !cluster_->ProviderId("node-2").empty();
        },
        absl::Seconds(30)));
  }
  Outcome cpi = Ccm(CcmConfig("127.0.0.1", Port(), CaLine(), "vsphere-cloud-secret", "dc1"), "cpi");
  ExpectOnlyOk(cpi);
  EXPECT_THAT(cpi.out, HasSubstr("logged in as ccm-a@vsphere.local"));
  EXPECT_THAT(cpi.out, HasSubstr("2 of 2 Nodes initialised with a VM, a zone and a region"));
  EXPECT_THAT(cpi.out, HasSubstr("has every privilege the CPI needs on 1 root folder, "
                                 "1 datacenter, 3 hosts, 2 node VMs"));
  AddCsiConfigSecret({{"csi-vsphere.conf", "W0dsb2JhbF0K"}});
  Outcome csi = Csi(kUserA, kPasswordA, "csi");
  ExpectOnlyOk(csi);
  EXPECT_THAT(csi.out, HasSubstr("has every privilege the CSI driver needs"));
  EXPECT_THAT(csi.out, HasSubstr("Secret vmware-system-csi/vsphere-config-secret holds "
                                 "csi-vsphere.conf"));
}

// Issue 42 item 1: the manifests ship no Secret (applying them must never replace a cluster's
// config), so diagnose names a missing one, or one without the key the pods mount, with the
// command that creates it.
TEST_F(DiagnoseTest, CsiConfigSecretMissingOrWithoutItsKey) {
  Outcome missing = Csi(kUserA, kPasswordA, "csi-no-secret");
  EXPECT_EQ(missing.code, 1) << missing.out;
  EXPECT_THAT(missing.out, HasSubstr("Secret vmware-system-csi/vsphere-config-secret not found: "
                                     "the driver's pods cannot mount csi-vsphere.conf"));
  EXPECT_THAT(missing.out, HasSubstr("kubectl create secret generic vsphere-config-secret "
                                     "--from-file=csi-vsphere.conf --namespace=vmware-system-csi"));
  AddCsiConfigSecret({{"vsphere.conf", "W0dsb2JhbF0K"}});
  Outcome wrong_key = Csi(kUserA, kPasswordA, "csi-wrong-key");
  EXPECT_EQ(wrong_key.code, 1) << wrong_key.out;
  EXPECT_THAT(wrong_key.out, HasSubstr("Secret vmware-system-csi/vsphere-config-secret has no key "
                                       "csi-vsphere.conf (its keys: vsphere.conf)"));
}

TEST_F(DiagnoseTest, EachVcenterMistakeNamesItsFix) {
  const std::string closed = std::to_string(FreePort());
  struct Case {
    std::string name, config, want;
  };
  const std::vector<Case> cases = {
      {"dns", CcmConfig("no-such-vcenter.invalid", Port(), CaLine(), "vsphere-cloud-secret"),
       "cannot resolve no-such-vcenter.invalid"},
      {"port", CcmConfig("127.0.0.1", closed, CaLine(), "vsphere-cloud-secret"),
       absl::StrCat("no TCP connection to 127.0.0.1:", closed, ": 127.0.0.1: Connection refused")},
      {"thumbprint",
       CcmConfig("127.0.0.1", Port(),
                 "thumbprint: 00:11:22:33:44:55:66:77:88:99:AA:BB:CC:DD:EE:FF:00:11:22:33",
                 "vsphere-cloud-secret"),
       absl::StrCat("the server's certificate has thumbprint ", cluster_->vcsim().info().thumbprint,
                    ", the config pins 00:11")},
      {"ca",
       CcmConfig("127.0.0.1", Port(), "caFile: /etc/ssl/certs/ca-certificates.crt",
                 "vsphere-cloud-secret"),
       "is not trusted by the CAs in /etc/ssl/certs/ca-certificates.crt"},
      {"secret", CcmConfig("127.0.0.1", Port(), CaLine(), "no-such-secret"), "no credentials"},
      {"datacenter", CcmConfig("127.0.0.1", Port(), CaLine(), "vsphere-cloud-secret", "dc9"),
       "datacenter dc9: "},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Outcome r = Ccm(c.config, c.name);
    EXPECT_EQ(r.code, 1) << r.out;
    EXPECT_THAT(r.out, HasSubstr(c.want));
  }
  ASSERT_TRUE(cluster_->SetCredentials(kUserA, "not-the-password").ok());
  Outcome r = Ccm(CcmConfig("127.0.0.1", Port(), CaLine(), "vsphere-cloud-secret"), "password");
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_THAT(r.out, HasSubstr("login as ccm-a@vsphere.local failed"));
  EXPECT_THAT(r.out, Not(HasSubstr("not-the-password")));
  // The CSI driver's: the volume checks need the vCenter and say so instead of guessing.
  Outcome csi = Csi(kUserA, "not-the-password", "csi-password");
  EXPECT_EQ(csi.code, 1) << csi.out;
  EXPECT_THAT(csi.out, HasSubstr("login as ccm-a@vsphere.local failed"));
  EXPECT_THAT(csi.out, HasSubstr("volume checks skipped: a vCenter check failed"));
  EXPECT_THAT(csi.out, Not(HasSubstr("storageclass")));
}

// Users with reduced roles in the simulator's AuthorizationManager.
TEST_F(DiagnoseTest, MissingPrivilegesAreListedPerObject) {
  AddInitialisedNode("node-1");
  // B: read-only everywhere: enough for the CPI, not for the CSI driver.
  ASSERT_TRUE(cluster_->vcsim().Grant(kUserB, "/", {"System.Read", "System.View"}).ok());
  Outcome csi = Csi(kUserB, kPasswordB, "csi-read-only");
  EXPECT_EQ(csi.code, 1) << csi.out;
  EXPECT_THAT(csi.out, HasSubstr("lacks Cns.Searchable, StorageProfile.View on root folder /"));
  EXPECT_THAT(csi.out, HasSubstr("lacks Datastore.FileManagement on datastore"));
  EXPECT_THAT(csi.out, HasSubstr("lacks VirtualMachine.Config.AddExistingDisk, "
                                 "VirtualMachine.Config.AddRemoveDevice on node VM node-1"));
  ASSERT_TRUE(cluster_->SetCredentials(kUserB, kPasswordB).ok());
  Outcome cpi = Ccm(CcmConfig("127.0.0.1", Port(), CaLine(), "vsphere-cloud-secret"), "cpi-b");
  EXPECT_EQ(cpi.code, 0) << cpi.out;
  EXPECT_THAT(cpi.out, HasSubstr("has every privilege the CPI needs"));
  // A: read-only on the root folder alone (not propagated).
  ASSERT_TRUE(cluster_->vcsim().Grant(kUserA, "/", {"System.Read"}, false).ok());
  ASSERT_TRUE(cluster_->SetCredentials(kUserA, kPasswordA).ok());
  Outcome a = Ccm(CcmConfig("127.0.0.1", Port(), CaLine(), "vsphere-cloud-secret"), "cpi-a");
  EXPECT_EQ(a.code, 1) << a.out;
  EXPECT_THAT(a.out, HasSubstr("lacks System.Read on node VM node-1"));
  EXPECT_THAT(a.out, HasSubstr("grant the role Read-only (propagated)"));
}

TEST_F(DiagnoseTest, NodeProblemsAreNamed) {
  ASSERT_TRUE(cluster_->RegisterNode("node-1").ok());
  ASSERT_TRUE(cluster_->vcsim().PowerVm("node-1", false).ok());
  ASSERT_TRUE(cluster_->RegisterNode("node-4").ok());
  json ghost = KubeletNode("ghost", "4237a4c6-dead-beef-0000-000000000009");
  ASSERT_TRUE(cluster_->emu().Create("nodes", ghost).ok());
  json untainted = KubeletNode("node-2", SmbiosUuid(cluster_->VmUuid("node-2")));
  untainted["spec"].erase("taints");
  ASSERT_TRUE(cluster_->emu().Create("nodes", untainted).ok());
  AddInitialisedNode("node-3", false);
  // Two guests report the hostname "twin"; a Node "twin" whose systemUUID no VM has.
  for (const char* vm : {"node-5", "node-6"}) {
    ASSERT_TRUE(cluster_->vcsim().SetGuest(vm, R"({"hostname": "twin"})").ok());
  }
  json twin = KubeletNode("twin", "4237a4c6-dead-beef-0000-00000000000a");
  ASSERT_TRUE(cluster_->emu().Create("nodes", twin).ok());
  // An initialised Node whose VM was deleted.
  AddInitialisedNode("node-7");
  ASSERT_TRUE(cluster_->vcsim().DestroyVm("node-7").ok());
  Outcome r = Ccm(CcmConfig("127.0.0.1", Port(), CaLine(), "vsphere-cloud-secret"), "nodes");
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_THAT(r.out, HasSubstr("node-1: not initialised: its VM vm-"));
  EXPECT_THAT(r.out, HasSubstr("is powered off"));
  EXPECT_THAT(r.out, HasSubstr("ghost: not initialised: "));
  EXPECT_THAT(r.out, HasSubstr("node-2: no providerID and no uninitialized taint"));
  EXPECT_THAT(r.out, HasSubstr("node-3: no zone or region label"));
  EXPECT_THAT(r.out, HasSubstr("node-4: not initialised: its VM is vm-"));
  EXPECT_THAT(r.out, HasSubstr("twin: not initialised: node twin: 2 VMs match hostname twin"));
  EXPECT_THAT(r.out, HasSubstr("make the identifier unique"));
  EXPECT_THAT(r.out, HasSubstr("node-7: its VM is gone (vsphere://"));
  // Issue 44: node-3's CSINodeTopology says what the syncer could not resolve.
  json crd = {{"apiVersion", "apiextensions.k8s.io/v1"},
              {"kind", "CustomResourceDefinition"},
              {"metadata", {{"name", "csinodetopologies.cns.vmware.com"}}},
              {"spec", {{"group", "cns.vmware.com"}, {"scope", "Cluster"}}}};
  ASSERT_TRUE(cluster_->emu().Create("customresourcedefinitions", crd).ok());
  json topo = {
      {"apiVersion", "cns.vmware.com/v1alpha1"},
      {"kind", "CSINodeTopology"},
      {"metadata", {{"name", "node-3"}}},
      {"spec", {{"nodeID", "node-3"}, {"nodeuuid", "4237a4c6-0000-0000-0000-000000000001"}}},
      {"status",
       {{"status", "Error"},
        {"errorMessage",
         "no tag of category k8s-zone on HostSystem:host-21 (h) or its 3 "
         "ancestors"}}}};
  ASSERT_TRUE(cluster_->emu().Create("csinodetopologies", topo).ok());
  Outcome csi = Csi(kUserA, kPasswordA, "csi-nodes");
  EXPECT_EQ(csi.code, 1) << csi.out;
  EXPECT_THAT(csi.out, HasSubstr("ghost: no providerID and no node ID of csi.vsphere.vmware.com"));
  EXPECT_THAT(csi.out, HasSubstr("node-3: CSINodeTopology Error: no tag of category k8s-zone on "
                                 "HostSystem:host-21"));
}

// The tag categories exist and who carries them; a typo in a category; a VM on a host without
// a zone tag.
TEST_F(DiagnoseTest, ZoneProblemsAreNamed) {
  ASSERT_TRUE(cluster_->RegisterNode("node-5").ok());
  const std::string config =
      CcmConfig("127.0.0.1", Port(), CaLine(), "vsphere-cloud-secret", "dc1");
  Outcome r = Ccm(config, "zones");
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_THAT(r.out, HasSubstr("zones vc-test       k8s-zone: cluster dc1/c1=zone-a"));
  EXPECT_THAT(r.out, HasSubstr("k8s-region: datacenter /dc1=region-1"));
  EXPECT_THAT(r.out, HasSubstr("node-5: not initialised: its VM is vm-"));
  EXPECT_THAT(r.out, HasSubstr("no tag of zone category \"k8s-zone\" found on"));
  EXPECT_THAT(r.out, HasSubstr("exactly one tag of each configured category"));
  std::string typo = config;
  typo.replace(typo.find("zone: k8s-zone"), 14, "zone: k8s-zon");
  Outcome t = Ccm(typo, "zone-typo");
  EXPECT_EQ(t.code, 1) << t.out;
  EXPECT_THAT(t.out, HasSubstr("tag category \"k8s-zon\" does not exist (categories there: "
                               "k8s-region, k8s-zone)"));
}

json StorageClass(const std::string& name, json parameters) {
  return {{"apiVersion", "storage.k8s.io/v1"},
          {"kind", "StorageClass"},
          {"metadata", {{"name", name}}},
          {"provisioner", "csi.vsphere.vmware.com"},
          {"parameters", std::move(parameters)}};
}

json Claim(const std::string& name, const std::string& storage_class) {
  return {{"apiVersion", "v1"},
          {"kind", "PersistentVolumeClaim"},
          {"metadata", {{"name", name}, {"namespace", "default"}}},
          {"spec",
           {{"storageClassName", storage_class},
            {"accessModes", {"ReadWriteOnce"}},
            {"resources", {{"requests", {{"storage", "2Gi"}}}}}}}};
}

// The CSI driver's own CreateVolume decisions about each StorageClass and Pending claim, and the
// VolumeAttachments.
TEST_F(DiagnoseTest, VolumeProblemsAreNamed) {
  AddInitialisedNode("node-1");
  AddInitialisedNode("node-2");
  json zoned = StorageClass("zoned", json::object());
  zoned["allowedTopologies"] = {
      {{"matchLabelExpressions",
        {{{"key", "topology.kubernetes.io/zone"}, {"values", {"zone-a", "zone-x"}}}}}}};
  for (const json& sc : {StorageClass("standard", json::object()),
                         StorageClass("gold", {{"storagepolicyname", "gold"}}),
                         StorageClass("platinum", {{"storagepolicyname", "platinum"}}),
                         StorageClass("local", {{"datastoreurl", "pod-local"}}),
                         StorageClass("typo", {{"storagepolicy", "gold"}}), zoned}) {
    ASSERT_TRUE(cluster_->emu().Create("storageclasses", sc).ok());
  }
  ASSERT_TRUE(cluster_->emu().Create("persistentvolumeclaims", Claim("data-0", "platinum")).ok());
  ASSERT_TRUE(cluster_->emu().Create("persistentvolumeclaims", Claim("data-1", "gold")).ok());
  json bound = Claim("data-2", "platinum");
  bound["spec"]["volumeName"] = "pv-2";
  ASSERT_TRUE(cluster_->emu().Create("persistentvolumeclaims", bound).ok());
  json va = {{"apiVersion", "storage.k8s.io/v1"},
             {"kind", "VolumeAttachment"},
             {"metadata", {{"name", "csi-0123"}}},
             {"spec",
              {{"attacher", "csi.vsphere.vmware.com"},
               {"nodeName", "node-1"},
               {"source", {{"persistentVolumeName", "pv-1"}}}}},
             {"status", {{"attached", false}, {"attachError", {{"message", "VM is locked"}}}}}};
  ASSERT_TRUE(cluster_->emu().Put("volumeattachments", va).ok());
  cluster_->emu().ResetRequestCounts();
  Outcome r = Csi(kUserA, kPasswordA, "csi-volumes");
  EXPECT_EQ(r.code, 1) << r.out;
  for (const auto& [key, n] : cluster_->emu().RequestCounts()) {  // read-only
    EXPECT_TRUE(absl::StartsWith(key, "get ") || absl::StartsWith(key, "list ") ||
                absl::StartsWith(key, "watch "))
        << key << ": " << n;
  }
  EXPECT_THAT(r.out, HasSubstr("storageclass standard  a 1 GiB volume would go to datastore1"));
  EXPECT_THAT(r.out, HasSubstr("storageclass gold      a 1 GiB volume would go to datastore1"));
  EXPECT_THAT(r.out, HasSubstr("storageclass platinum  CreateVolume would fail: "
                               "storagepolicyname \"platinum\": no such storage policy"));
  EXPECT_THAT(r.out, HasSubstr("storageclass local     CreateVolume would fail: "));
  EXPECT_THAT(r.out, HasSubstr("c1-host-1"));
  EXPECT_THAT(r.out, HasSubstr("storageclass typo      CreateVolume would fail: "));
  EXPECT_THAT(r.out, HasSubstr("storagepolicy"));
  EXPECT_THAT(r.out, HasSubstr("storageclass zoned     allowedTopologies "
                               "topology.kubernetes.io/zone=zone-x: no Node has it"));
  EXPECT_THAT(r.out, HasSubstr("(StorageClass platinum): CreateVolume would fail: "));
  EXPECT_THAT(r.out, HasSubstr("pvc default/data-1"));
  EXPECT_THAT(r.out, HasSubstr("being provisioned, on datastore1"));
  EXPECT_THAT(r.out, Not(HasSubstr("data-2")));  // bound to its volume
  EXPECT_THAT(r.out, HasSubstr("csi-0123 (pv-1 on Node node-1): not attached: VM is locked"));
  // With zones: which hosts carry which zone, and the host that carries none.
  Outcome z = Csi(kUserA, kPasswordA, "csi-zones",
                  "[Labels]\nzone = \"k8s-zone\"\nregion = \"k8s-region\"\n");
  EXPECT_THAT(z.out, HasSubstr("hosts by topology: {"));
  EXPECT_THAT(z.out, HasSubstr("zone-a} (2 hosts)"));
  EXPECT_THAT(z.out, HasSubstr("1 host without a value for every topology key"));
  EXPECT_THAT(z.out, HasSubstr("c2-host-0"));
}

// Issue 45: a pending ReadWriteMany claim is judged as a file volume (the datastores that cannot
// hold one named), and with file volumes claimed the host storage privilege is an error.
TEST_F(DiagnoseTest, FileVolumeProblemsAreNamed) {
  AddInitialisedNode("node-1");
  ASSERT_TRUE(
      cluster_->emu().Create("storageclasses", StorageClass("shared", json::object())).ok());
  json rwx = Claim("files-0", "shared");
  rwx["spec"]["accessModes"] = {"ReadWriteMany"};
  ASSERT_TRUE(cluster_->emu().Create("persistentvolumeclaims", rwx).ok());
  // B: what block volumes need, not Host.Config.Storage.
  ASSERT_TRUE(cluster_->vcsim()
                  .Grant(kUserB, "/",
                         {"System.Read", "System.View", "Cns.Searchable", "StorageProfile.View",
                          "Datastore.FileManagement", "VirtualMachine.Config.AddExistingDisk",
                          "VirtualMachine.Config.AddRemoveDevice"})
                  .ok());
  Outcome r = Csi(kUserB, kPasswordB, "csi-files");
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_THAT(r.out, HasSubstr("lacks Host.Config.Storage on host"));
  EXPECT_THAT(r.out, HasSubstr("needed for vSAN file service volumes (ReadWriteMany / "
                               "ReadOnlyMany)"));
  EXPECT_THAT(r.out, HasSubstr("pvc default/files-0"));
  EXPECT_THAT(r.out, HasSubstr("no vSAN datastore to create the file volume on: file volumes are "
                               "vSAN file shares, and the datastores known are datastore1"));
  EXPECT_THAT(r.out, HasSubstr("fix: enable vSAN File Service on a vSAN cluster"));
}

}  // namespace
}  // namespace ccm::integration::diagnose_test
