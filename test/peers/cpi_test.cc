// The CPI against the real kube-apiserver (issue 53 item 1): vsphere-cloud-controller-manager, as
// built, initialises 200 Nodes registered the way kubelets with --cloud-provider=external
// register them, and the stored objects are checked member by member; a VM destroyed deletes its
// Node, a VM powered off taints it; two replicas share the server's Lease and SIGTERM hands it
// over; an edit of vsphere.conf is told with an Event.
#include <signal.h>

#include <map>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "gtest/gtest.h"
#include "integration/harness.h"
#include "peers/kube_cluster.h"
#include "peers/kubelet_node.h"
#include "peers/peers.h"

namespace ccm::peers {
namespace {
using integration::ChildProcess;
using integration::WaitFor;
using json = nlohmann::json;

constexpr int kNodes = 200;
constexpr char kUser[] = "ccm@vsphere.local";
constexpr char kPassword[] = "peers-cpi-Zq7";

// One VM and what its Node must look like once initialised.
struct Vm {
  std::string name;
  std::string zone;
  std::vector<std::string> ips;  // in NIC order
  std::string node_ip;           // kubelet's --node-ip, "" when none
  std::string os = "ubuntu";     // instance type's os part
  int cpus = 2;
  int memory_mb = 4096;
};

// 200 VMs over two clusters (zones zone-a and zone-b, region region-1): every tenth has a second
// NIC and a kubelet whose --node-ip names it, every seventh a --node-ip that is its only IP, a
// few run other guests and sizes.
std::vector<Vm> Vms() {
  std::vector<Vm> vms;
  for (int i = 0; i < kNodes; ++i) {
    Vm vm;
    vm.name = absl::StrFormat("node-%03d", i);
    vm.zone = i % 2 == 0 ? "zone-a" : "zone-b";
    vm.ips = {absl::StrFormat("10.1.%d.%d", i / 200, i % 200 + 10)};
    if (i % 10 == 3) {
      vm.ips.push_back(absl::StrFormat("192.168.%d.%d", i / 200, i % 200 + 10));
      vm.node_ip = vm.ips[1];
    } else if (i % 7 == 0) {
      vm.node_ip = vm.ips[0];
    }
    if (i % 25 == 1) {
      vm.os = "rhel9";
      vm.cpus = 8;
      vm.memory_mb = 16 * 1024 + 512;
    }
    vms.push_back(vm);
  }
  return vms;
}

std::string Spec(const std::vector<Vm>& vms) {
  json list = json::array();
  for (const Vm& vm : vms) {
    json nics = json::array();
    for (size_t n = 0; n < vm.ips.size(); ++n) {
      nics.push_back(
          {{"network", n == 0 ? "VM Network" : "Storage Network"}, {"ips", {vm.ips[n]}}});
    }
    list.push_back({{"name", vm.name},
                    {"cluster", vm.zone == "zone-a" ? "c1" : "c2"},
                    {"guest_id", vm.os == "rhel9" ? "rhel9_64Guest" : "ubuntu64Guest"},
                    {"cpus", vm.cpus},
                    {"memory_mb", vm.memory_mb},
                    {"nics", nics}});
  }
  json spec = {{"users", {{kUser, kPassword}}},
               {"session_form", "missingset"},
               {"datacenters",
                {{{"name", "dc1"},
                  {"clusters", {{{"name", "c1"}, {"hosts", 2}}, {{"name", "c2"}, {"hosts", 2}}}},
                  {"vms", list}}}},
               {"tag_categories", {{{"name", "k8s-zone"}}, {{"name", "k8s-region"}}}},
               {"tags",
                {{{"name", "region-1"}, {"category", "k8s-region"}, {"attach", {"/dc1"}}},
                 {{"name", "zone-a"}, {"category", "k8s-zone"}, {"attach", {"/dc1/host/c1"}}},
                 {{"name", "zone-b"}, {"category", "k8s-zone"}, {"attach", {"/dc1/host/c2"}}}}}};
  return spec.dump();
}

// The addresses the Node must end with, in order: the reference's rules for one or two NICs
// (the first IP is both InternalIP and ExternalIP), and with --node-ip the order of
// k8s.io/cloud-provider's GetNodeAddressesFromNodeIP (the node IP first, its type exclusive).
json ExpectedAddresses(const Vm& vm) {
  auto a = [](const std::string& type, const std::string& ip) {
    return json{{"type", type}, {"address", ip}};
  };
  if (vm.node_ip.empty()) {
    return {a("Hostname", vm.name), a("InternalIP", vm.ips[0]), a("ExternalIP", vm.ips[0])};
  }
  if (vm.node_ip == vm.ips[0]) {
    return {a("InternalIP", vm.ips[0]), a("ExternalIP", vm.ips[0]), a("Hostname", vm.name)};
  }
  return {a("InternalIP", vm.node_ip), a("Hostname", vm.name), a("ExternalIP", vm.ips[0])};
}

class CpiPeersTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    vms_ = new std::vector<Vm>(Vms());
    auto cluster = KubeCluster::Start("cpi");
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    cluster_ = cluster->release();
    auto vcsim = ::ccm::testing::VcsimProcess::Start(Spec(*vms_));
    ASSERT_TRUE(vcsim.ok()) << vcsim.status();
    vcsim_ = vcsim->release();
    const std::string hp = vcsim_->host_port();
    config_ = cluster_->dir() + "/vsphere.conf";
    integration::WriteFile(config_,
                           absl::StrCat("global:\n  port: ", hp.substr(hp.rfind(':') + 1),
                                        "\n  caFile: ", vcsim_->info().ca_file,
                                        "\n  secretName: vsphere-cloud-secret\n"
                                        "  secretNamespace: kube-system\n"
                                        "vcenter:\n  vc-peers:\n    server: 127.0.0.1\n"
                                        "labels:\n  region: k8s-region\n  zone: k8s-zone\n"));
    ASSERT_TRUE(
        cluster_
            ->Kubectl({"-n", "kube-system", "create", "secret", "generic", "vsphere-cloud-secret",
                       absl::StrCat("--from-literal=127.0.0.1.username=", kUser),
                       absl::StrCat("--from-literal=127.0.0.1.password=", kPassword)})
            .ok());
  }
  static void TearDownTestSuite() {
    // SIGTERM: the controllers log out, so the simulator is not left waiting on a long poll.
    for (auto& [name, p] : *ccms_) p->Signal(SIGTERM);
    for (auto& [name, p] : *ccms_) p->WaitExit(absl::Seconds(10));
    ccms_->clear();
    delete vcsim_;
    delete cluster_;
    delete vms_;
  }

  static KubeCluster& cluster() { return *cluster_; }
  static kube::RestClient& client() { return cluster_->client(); }

  // A replica of the controller manager, with short leases so the hand-over test is quick.
  static ChildProcess* StartCcm(const std::string& name) {
    auto p = ChildProcess::Start(
        {integration::CcmBinary(), "--cloud-provider=vsphere", "--cloud-config=" + config_,
         "--kubeconfig=" + cluster_->kubeconfig(), "--leader-elect=true",
         "--leader-elect-lease-duration=6s", "--leader-elect-renew-deadline=4s",
         "--leader-elect-retry-period=1s", "--node-monitor-period=1s",
         "--cloud-config-check-period=500ms", "--concurrent-node-syncs=4", "--kube-api-qps=200",
         "--kube-api-burst=200", "--bind-address=127.0.0.1",
         absl::StrCat("--secure-port=", integration::FreePort()), "-v=2"},
        cluster_->dir() + "/" + name);
    EXPECT_TRUE(p.ok()) << p.status();
    if (!p.ok()) return nullptr;
    ChildProcess* raw = p->get();
    (*ccms_)[name] = *std::move(p);
    return raw;
  }

  static std::string LeaseHolder() {
    auto l = client().Get(kube::Leases(), "kube-system", "cloud-controller-manager");
    if (!l.ok()) return "";
    return l->value("spec", json::object()).value("holderIdentity", "");
  }

  static absl::Status Register(const Vm& vm) {
    std::string uuid;
    for (const auto& v : vcsim_->info().vms) {
      if (v.name == vm.name) uuid = v.uuid;
    }
    return client()
        .Create(kube::Nodes(), "",
                KubeletNode({.name = vm.name, .bios_uuid = uuid, .node_ip = vm.node_ip}))
        .status();
  }

  static bool Initialised(const json& node) {
    for (const json& t : node["spec"].value("taints", json::array())) {
      if (t.value("key", "") == "node.cloudprovider.kubernetes.io/uninitialized") return false;
    }
    return !node["spec"].value("providerID", "").empty();
  }

  static absl::Status MarkNotReady(const std::string& node) {
    return client()
        .Patch(kube::Nodes(), "", node, kube::PatchType::kStrategicMerge,
               {{"status", {{"conditions", NotReadyConditions()}}}}, "status")
        .status();
  }

  static inline KubeCluster* cluster_ = nullptr;
  static inline ::ccm::testing::VcsimProcess* vcsim_ = nullptr;
  static inline std::vector<Vm>* vms_ = nullptr;
  static inline std::string config_;
  static inline auto* ccms_ = new std::map<std::string, std::unique_ptr<ChildProcess>>();
};

TEST_F(CpiPeersTest, TwoHundredKubeletNodesAreInitialisedExactly) {
  ChildProcess* ccm = StartCcm("ccm-1");
  ASSERT_NE(ccm, nullptr);
  for (const Vm& vm : *vms_) ASSERT_TRUE(Register(vm).ok()) << vm.name;
  std::map<std::string, json> nodes;
  ASSERT_TRUE(WaitFor(
      [&] {
        auto list = client().ListAll(kube::Nodes(), "", {});
        if (!list.ok()) return false;
        nodes.clear();
        for (json& n : list->items) {
          if (!Initialised(n)) continue;
          const std::string name = n["metadata"]["name"];
          nodes[name] = std::move(n);
        }
        return static_cast<int>(nodes.size()) == kNodes;
      },
      absl::Seconds(90)))
      << nodes.size() << " of " << kNodes << " initialised; " << ccm->Stderr().substr(0, 4000);

  std::map<std::string, std::string> uuids;
  for (const auto& v : vcsim_->info().vms) uuids[v.name] = v.uuid;
  for (const Vm& vm : *vms_) {
    SCOPED_TRACE(vm.name);
    const json& n = nodes[vm.name];
    EXPECT_EQ(n["spec"]["providerID"], "vsphere://" + uuids[vm.name]);
    EXPECT_EQ(n["status"]["addresses"], ExpectedAddresses(vm)) << n["status"]["addresses"].dump();
    const json& labels = n["metadata"]["labels"];
    const std::string type =
        absl::StrCat("vsphere-vm.cpu-", vm.cpus, ".mem-", vm.memory_mb / 1024, "gb.os-", vm.os);
    EXPECT_EQ(labels.value("node.kubernetes.io/instance-type", ""), type);
    EXPECT_EQ(labels.value("beta.kubernetes.io/instance-type", ""), type);
    EXPECT_EQ(labels.value("topology.kubernetes.io/zone", ""), vm.zone);
    EXPECT_EQ(labels.value("failure-domain.beta.kubernetes.io/zone", ""), vm.zone);
    EXPECT_EQ(labels.value("topology.kubernetes.io/region", ""), "region-1");
    EXPECT_EQ(labels.value("failure-domain.beta.kubernetes.io/region", ""), "region-1");
    // The kubelet's labels and the rest of its status are kept.
    EXPECT_EQ(labels.value("kubernetes.io/hostname", ""), vm.name);
    EXPECT_EQ(n["status"]["images"].size(), 20u);
    EXPECT_EQ(n["status"]["nodeInfo"]["kubeletVersion"], "v1.24.0");
    // No taint of ours is left; the server's own (not-ready, added at admission) may be there.
    for (const json& t : n["spec"].value("taints", json::array())) {
      EXPECT_NE(t.value("key", ""), "node.cloudprovider.kubernetes.io/uninitialized");
      EXPECT_NE(t.value("key", ""), "node.cloudprovider.kubernetes.io/shutdown");
    }
  }
  EXPECT_FALSE(LeaseHolder().empty());
}

TEST_F(CpiPeersTest, DestroyedVmDeletesItsNodeAndPoweredOffTaintsIt) {
  ASSERT_FALSE(LeaseHolder().empty()) << "the first test starts the controller";
  ASSERT_TRUE(vcsim_->DestroyVm("node-010").ok());
  ASSERT_TRUE(vcsim_->PowerVm("node-011", false).ok());
  ASSERT_TRUE(MarkNotReady("node-010").ok());
  ASSERT_TRUE(MarkNotReady("node-011").ok());
  EXPECT_TRUE(WaitFor(
      [&] { return kube::IsNotFoundError(client().Get(kube::Nodes(), "", "node-010").status()); },
      absl::Seconds(30)));
  json node;
  EXPECT_TRUE(WaitFor(
      [&] {
        auto n = client().Get(kube::Nodes(), "", "node-011");
        if (!n.ok()) return false;
        node = *n;
        for (const json& t : node["spec"].value("taints", json::array())) {
          if (t.value("key", "") == "node.cloudprovider.kubernetes.io/shutdown" &&
              t.value("effect", "") == "NoSchedule") {
            return true;
          }
        }
        return false;
      },
      absl::Seconds(30)))
      << node.dump();
  // A powered-off VM's Node stays.
  EXPECT_TRUE(client().Get(kube::Nodes(), "", "node-011").ok());
}

TEST_F(CpiPeersTest, ConfigEditIsToldWithAnEvent) {
  ASSERT_FALSE(LeaseHolder().empty());
  const std::string good = integration::ReadFile(config_);
  integration::WriteFile(config_ + ".tmp", "global:\n  port: [unclosed\n");
  ASSERT_EQ(rename((config_ + ".tmp").c_str(), config_.c_str()), 0);
  json event;
  EXPECT_TRUE(WaitFor(
      [&] {
        auto list = client().List(kube::CoreEvents(), "kube-system", {});
        if (!list.ok()) return false;
        for (const json& e : list->items) {
          if (e.value("reason", "") == "InvalidCloudConfig") {
            event = e;
            return true;
          }
        }
        return false;
      },
      absl::Seconds(30)));
  EXPECT_EQ(event.value("type", ""), "Warning");
  EXPECT_EQ(event["involvedObject"].value("kind", ""), "Lease");
  EXPECT_EQ(event["involvedObject"].value("name", ""), "cloud-controller-manager");
  integration::WriteFile(config_ + ".tmp", good);
  ASSERT_EQ(rename((config_ + ".tmp").c_str(), config_.c_str()), 0);
}

TEST_F(CpiPeersTest, SecondReplicaTakesTheLeaseOnSigterm) {
  const std::string first = LeaseHolder();
  ASSERT_FALSE(first.empty());
  ChildProcess* second = StartCcm("ccm-2");
  ASSERT_NE(second, nullptr);
  // The second replica waits: the first keeps renewing.
  ASSERT_TRUE(WaitFor(
      [&] { return absl::StrContains(second->Stderr(), "attempting to acquire leader lease"); },
      absl::Seconds(20)))
      << second->Stderr();
  EXPECT_EQ(LeaseHolder(), first);
  ChildProcess* leader = (*ccms_)["ccm-1"].get();
  leader->Signal(SIGTERM);
  std::optional<int> code = leader->WaitExit(absl::Seconds(20));
  ASSERT_TRUE(code.has_value());
  EXPECT_EQ(*code, 0) << leader->Stderr();
  std::string holder;
  ASSERT_TRUE(WaitFor(
      [&] {
        holder = LeaseHolder();
        return !holder.empty() && holder != first;
      },
      absl::Seconds(30)))
      << holder << "\n"
      << second->Stderr();
  // The new leader does the work: a Node registered now is initialised.
  Vm late = (*vms_)[20];
  ASSERT_TRUE(client().Delete(kube::Nodes(), "", late.name).ok());
  ASSERT_TRUE(WaitFor(
      [&] { return kube::IsNotFoundError(client().Get(kube::Nodes(), "", late.name).status()); },
      absl::Seconds(20)));
  ASSERT_TRUE(Register(late).ok());
  EXPECT_TRUE(WaitFor(
      [&] {
        auto n = client().Get(kube::Nodes(), "", late.name);
        return n.ok() && Initialised(*n);
      },
      absl::Seconds(30)))
      << second->Stderr();
}

}  // namespace
}  // namespace ccm::peers

int main(int argc, char** argv) {
  return ccm::peers::Main(argc, argv, "peers_cpi_test", {"etcd", "kube-apiserver"});
}
