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

class DiagnoseTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto c = Cluster::Start("diagnose");
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

  // csi-vsphere.conf with user `user` inline.
  Outcome Csi(const std::string& user, const std::string& password, const std::string& name) {
    const std::string path = cluster_->dir() + "/" + name + "-csi.conf";
    WriteFile(path, absl::StrCat("[Global]\ncluster-id = \"c1\"\n[VirtualCenter \"127.0.0.1\"]\n"
                                 "user = \"",
                                 user, "\"\npassword = \"", password, "\"\nport = \"", Port(),
                                 "\"\nca-file = \"", cluster_->vcsim().info().ca_file,
                                 "\"\ndatacenters = \"dc1\"\n"));
    return Exec({"/usr/bin/env", "-i", "VSPHERE_CSI_CONFIG=" + path, CSI_DRIVER_BINARY, "diagnose",
                 "--kubeconfig=" + cluster_->kubeconfig()},
                cluster_->dir() + "/" + name);
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
                                 "1 datacenter, 1 datastore, 2 hosts, 2 node VMs"));
  Outcome csi = Csi(kUserA, kPasswordA, "csi");
  ExpectOnlyOk(csi);
  EXPECT_THAT(csi.out, HasSubstr("has every privilege the CSI driver needs"));
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
  Outcome r = Ccm(CcmConfig("127.0.0.1", Port(), CaLine(), "vsphere-cloud-secret"), "nodes");
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_THAT(r.out, HasSubstr("node-1: not initialised: its VM vm-"));
  EXPECT_THAT(r.out, HasSubstr("is powered off"));
  EXPECT_THAT(r.out, HasSubstr("ghost: not initialised: "));
  EXPECT_THAT(r.out, HasSubstr("node-2: no providerID and no uninitialized taint"));
  EXPECT_THAT(r.out, HasSubstr("node-3: no zone or region label"));
  EXPECT_THAT(r.out, HasSubstr("node-4: not initialised: its VM is vm-"));
  Outcome csi = Csi(kUserA, kPasswordA, "csi-nodes");
  EXPECT_EQ(csi.code, 1) << csi.out;
  EXPECT_THAT(csi.out, HasSubstr("ghost: no providerID: the CSI driver cannot attach"));
}

}  // namespace
}  // namespace ccm::integration::diagnose_test
