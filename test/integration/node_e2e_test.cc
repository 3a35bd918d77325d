// The node controllers end to end: wired like the binary (integration/node_e2e_env.h) against
// two real vCenter simulators and the API server emulator. Nodes register like kubelets with
// --cloud-provider=external and must come out exactly as the Go provider would leave them; VMs
// that are destroyed, powered off, re-addressed, or behind a failing vCenter drive the lifecycle.
#include <map>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "cloud/core/addresses.h"
#include "controllers/node_update.h"
#include "fixtures/vcsim/simulator_suite.h"
#include "fixtures/vcsim/vcsim_process.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "integration/node_e2e_env.h"
#include "testing/fake_clock.h"
#include "testing/static_credentials.h"

namespace ccm::kube {
void PrintTo(const NodeAddress& a, std::ostream* os) { *os << a.type << "=" << a.address; }
}  // namespace ccm::kube

namespace ccm::integration {
namespace {

using ::ccm::testing::VcsimProcess;
using ::testing::ElementsAre;

// vCenter "east": zone-a on the cluster, region-1 on the datacenter. One VM per test case so the
// cases do not disturb each other (the simulators are shared by the whole suite).
constexpr char kSpecEast[] = R"({
  "users": {"admin": "secret"},
  "datacenters": [{"name": "dc1",
    "clusters": [{"name": "c1", "hosts": 2, "resource_pools": ["rp1"]},
                 {"name": "c2", "hosts": 1}],
    "vms": [
      {"name": "node-a", "cluster": "c1", "hostname": "node-a", "guest_id": "ubuntu64Guest",
       "cpus": 4, "memory_mb": 8192,
       "nics": [{"network": "VM Network", "ips": ["10.0.0.11", "fd00::11", "fe80::1"]},
                {"network": "Storage", "ips": ["192.168.50.11", "fd00:50::11"]}]},
      {"name": "node-b", "cluster": "c1", "hostname": "node-b", "guest_id": "rhel9_64Guest",
       "cpus": 2, "memory_mb": 4096, "resource_pool": "rp1",
       "nics": [{"network": "VM Network", "ips": ["10.0.0.12", "fd00::12"]}]},
      {"name": "node-v6", "cluster": "c1", "hostname": "node-v6", "guest_id": "vmwarePhoton64Guest",
       "nics": [{"network": "VM Network", "ips": ["fe80::31", "fd00::31"]}]},
      {"name": "node-gone", "cluster": "c1", "nics": [{"ips": ["10.0.0.21"]}]},
      {"name": "node-off", "cluster": "c1", "nics": [{"ips": ["10.0.0.22"]}]},
      {"name": "node-503", "cluster": "c1", "nics": [{"ips": ["10.0.0.23"]}]},
      {"name": "node-drop", "cluster": "c1", "nics": [{"ips": ["10.0.0.24"]}]},
      {"name": "node-conflict", "cluster": "c1", "nics": [{"ips": ["10.0.0.25"]}]},
      {"name": "node-conflict-put", "cluster": "c1", "nics": [{"ips": ["10.0.0.26"]}]},
      {"name": "node-move", "cluster": "c1", "nics": [{"ips": ["10.0.0.27"]}]},
      {"name": "node-reuse", "cluster": "c1", "hostname": "node-reuse",
       "nics": [{"network": "VM Network", "ips": ["10.0.0.28"]}]},
      {"name": "node-heir", "cluster": "c1", "hostname": "node-heir",
       "nics": [{"network": "VM Network", "ips": ["10.0.0.29"]}]},
      {"name": "node-2zones", "cluster": "c2", "nics": [{"ips": ["10.0.0.30"]}]}
    ]}],
  "tag_categories": [{"name": "k8s-zone", "cardinality": "MULTIPLE"}, {"name": "k8s-region"}],
  "tags": [{"name": "zone-a", "category": "k8s-zone", "attach": ["/dc1/host/c1"]},
           {"name": "zone-x", "category": "k8s-zone", "attach": ["/dc1/host/c2"]},
           {"name": "zone-y", "category": "k8s-zone", "attach": ["/dc1/host/c2"]},
           {"name": "region-1", "category": "k8s-region", "attach": ["/dc1"]}]
})";

constexpr char kSpecWest[] = R"({
  "users": {"admin": "secret"},
  "datacenters": [{"name": "dc-west",
    "clusters": [{"name": "w1", "hosts": 1}],
    "vms": [{"name": "node-w1", "cluster": "w1", "hostname": "node-w1",
             "guest_id": "centos7_64Guest", "cpus": 8, "memory_mb": 16384,
             "nics": [{"network": "VM Network", "ips": ["10.2.0.3"]}]}]}],
  "tag_categories": [{"name": "k8s-zone"}, {"name": "k8s-region"}],
  "tags": [{"name": "zone-w", "category": "k8s-zone", "attach": ["/dc-west/host/w1"]},
           {"name": "region-2", "category": "k8s-region", "attach": ["/dc-west"]}]
})";

using Addr = kube::NodeAddress;

class NodeE2eTest : public ccm::testing::SimulatorSuite<NodeE2eTest> {
 public:
  static std::vector<std::string> Specs() { return {kSpecEast, kSpecWest}; }

 protected:
  static ccm::testing::VcsimProcess& east() { return sim(0); }
  static ccm::testing::VcsimProcess& west() { return sim(1); }

  void SetUpTest() override {
    config_.vcenters = {VcConfig(east(), "east"), VcConfig(west(), "west")};
    config_.labels = {.region = "k8s-region", .zone = "k8s-zone"};
  }
  void TearDown() override {
    env_.Stop();
    (void)east().SetFault("none");
    (void)west().SetFault("none");
  }

  void Start(CcmOptions o = {}) { ASSERT_TRUE(env_.Start(config_, creds_, o).ok()); }

  // Registers the kubelet Node of simulator VM `vm` (node name = guest hostname = VM name).
  void Register(VcsimProcess& sim, const std::string& vm, bool ready = true,
                const std::map<std::string, std::string>& annotations = {}) {
    const std::string uuid = VmUuid(sim, vm);
    ASSERT_FALSE(uuid.empty()) << vm;
    auto n = env_.RegisterKubeletNode(vm, uuid, ready, annotations);
    ASSERT_TRUE(n.ok()) << n.status();
  }
  void ExpectInitialised(VcsimProcess& sim, const std::string& name,
                         const std::string& instance_type, const std::string& zone,
                         const std::string& region) {
    ASSERT_TRUE(env_.Initialised(name)) << name << ": " << env_.GetNode(name).dump();
    kube::Json n = env_.GetNode(name);
    EXPECT_EQ(kube::ProviderId(n), "vsphere://" + VmUuid(sim, name));
    // Ours is gone; the API server's own not-ready taint (TaintNodesByCondition, added when
    // the Node is created) is the node lifecycle controller's to remove, not ours.
    EXPECT_EQ(
        n["spec"]["taints"],
        (kube::Json::array({{{"effect", "NoSchedule"}, {"key", "node.kubernetes.io/not-ready"}}})))
        << n["spec"].dump();
    auto labels = kube::Labels(n);
    EXPECT_EQ(labels["node.kubernetes.io/instance-type"], instance_type);
    EXPECT_EQ(labels["beta.kubernetes.io/instance-type"], instance_type);
    EXPECT_EQ(labels["topology.kubernetes.io/zone"], zone);
    EXPECT_EQ(labels["failure-domain.beta.kubernetes.io/zone"], zone);
    EXPECT_EQ(labels["topology.kubernetes.io/region"], region);
    EXPECT_EQ(labels["failure-domain.beta.kubernetes.io/region"], region);
    // The kubelet's own labels are kept.
    EXPECT_EQ(labels["kubernetes.io/hostname"], name);
    EXPECT_EQ(labels["kubernetes.io/os"], "linux");
  }
  std::vector<Addr> Addresses(const std::string& name) {
    return kube::NodeAddresses(env_.GetNode(name));
  }
  static bool HasEvent(const std::vector<kube::EventInfo>& events, const std::string& type,
                       const std::string& reason, const std::string& text) {
    for (const auto& e : events)
      if (e.type == type && e.reason == reason && absl::StrContains(e.message, text)) return true;
    return false;
  }
  static std::string Dump(const std::vector<kube::EventInfo>& events) {
    std::string s;
    for (const auto& e : events) absl::StrAppend(&s, e.type, " ", e.reason, ": ", e.message, "\n");
    return s;
  }
  // Runs lifecycle periods until the Node satisfies `pred` (checked after each completed pass;
  // a write that failed on a transient API error is retried by the next pass, as in production).
  bool PeriodsUntil(const std::string& name, const std::function<bool(const kube::Json&)>& pred,
                    int max_periods = 5) {
    for (int i = 0; i < max_periods; ++i) {
      if (!env_.LifecyclePeriod()) return false;
      if (pred(env_.GetNode(name))) return true;
    }
    return false;
  }
  // Waits (real time) until `vc`'s inventory cache reports the VM's change through `done`.
  bool CacheSees(const std::function<bool()>& done) { return Eventually(done); }
  // The controllers' store has the Node NotReady, or a lifecycle pass that saw it so has deleted
  // it already (its first pass waits for the vCenter inventories and may come at any moment).
  bool NotReadyInStoreOrGone(const std::string& name) {
    return Eventually([&] {
      return env_.GetNode(name).is_null() ||
             env_.StoreSees(
                 name, [](const kube::Json& n) { return !kube::IsNodeReady(n); },
                 absl::ZeroDuration());
    });
  }

  vsphere::StaticCredentialSource creds_{{"admin", Secret("secret")}};
  cloud::Config config_;
  NodeE2eEnv env_;
};

TEST_F(NodeE2eTest, KubeletNodesOnTwoVCentersAreInitialised) {
  Start();
  Register(east(), "node-a");
  Register(east(), "node-b");
  Register(west(), "node-w1");
  ExpectInitialised(east(), "node-a", "vsphere-vm.cpu-4.mem-8gb.os-ubuntu", "zone-a", "region-1");
  ExpectInitialised(east(), "node-b", "vsphere-vm.cpu-2.mem-4gb.os-rhel9", "zone-a", "region-1");
  ExpectInitialised(west(), "node-w1", "vsphere-vm.cpu-8.mem-16gb.os-centos7", "zone-w",
                    "region-2");
  // IPv4 (the default ip-family): first of the pool is both internal and external.
  EXPECT_THAT(Addresses("node-a"),
              ElementsAre(Addr{"Hostname", "node-a"}, Addr{"InternalIP", "10.0.0.11"},
                          Addr{"ExternalIP", "10.0.0.11"}));
  EXPECT_THAT(Addresses("node-w1"),
              ElementsAre(Addr{"Hostname", "node-w1"}, Addr{"InternalIP", "10.2.0.3"},
                          Addr{"ExternalIP", "10.2.0.3"}));
  EXPECT_TRUE(env_.WaitForEvent("node-w1", "Normal", "Synced", "Node synced successfully"));
}

TEST_F(NodeE2eTest, IpFamilyIPv6OnlyAndDualStack) {
  config_.vcenters[0].ip_families = {IpFamily::kIPv6, IpFamily::kIPv4};  // east: dual, v6 first
  config_.vcenters[1].ip_families = {IpFamily::kIPv4};
  Start();
  Register(east(), "node-a");
  ExpectInitialised(east(), "node-a", "vsphere-vm.cpu-4.mem-8gb.os-ubuntu", "zone-a", "region-1");
  EXPECT_THAT(Addresses("node-a"),
              ElementsAre(Addr{"Hostname", "node-a"}, Addr{"InternalIP", "fd00::11"},
                          Addr{"ExternalIP", "fd00::11"}, Addr{"InternalIP", "10.0.0.11"},
                          Addr{"ExternalIP", "10.0.0.11"}));
  env_.Stop();

  // IPv6 only: a VM with a link-local and a ULA address gets the ULA.
  NodeE2eEnv v6;
  config_.vcenters[0].ip_families = {IpFamily::kIPv6};
  ASSERT_TRUE(v6.Start(config_, creds_).ok());
  ASSERT_TRUE(v6.RegisterKubeletNode("node-v6", VmUuid(east(), "node-v6")).ok());
  ASSERT_TRUE(v6.RegisterKubeletNode("node-b", VmUuid(east(), "node-b")).ok());
  ASSERT_TRUE(v6.Initialised("node-v6"));
  ASSERT_TRUE(v6.Initialised("node-b"));
  EXPECT_THAT(kube::NodeAddresses(v6.GetNode("node-v6")),
              ElementsAre(Addr{"Hostname", "node-v6"}, Addr{"InternalIP", "fd00::31"},
                          Addr{"ExternalIP", "fd00::31"}));
  EXPECT_THAT(kube::NodeAddresses(v6.GetNode("node-b")),
              ElementsAre(Addr{"Hostname", "node-b"}, Addr{"InternalIP", "fd00::12"},
                          Addr{"ExternalIP", "fd00::12"}));
  EXPECT_EQ(kube::Labels(v6.GetNode("node-v6"))["node.kubernetes.io/instance-type"],
            "vsphere-vm.cpu-2.mem-4gb.os-photon");
}

TEST_F(NodeE2eTest, NodesSectionSubnetNetworkNameAndExclusion) {
  struct Case {
    std::string what;
    cloud::NodesConfig nodes;
    std::vector<Addr> want;
  };
  const std::vector<Case> cases = {
      {"subnet CIDRs",
       {.internal_network_subnet_cidrs = {*IpNet::Parse("192.168.50.0/24")},
        .external_network_subnet_cidrs = {*IpNet::Parse("10.0.0.0/24")}},
       {{"Hostname", "node-a"}, {"InternalIP", "192.168.50.11"}, {"ExternalIP", "10.0.0.11"}}},
      {"internal subnet only: no external address",
       {.internal_network_subnet_cidrs = {*IpNet::Parse("192.168.50.0/24")}},
       {{"Hostname", "node-a"}, {"InternalIP", "192.168.50.11"}}},
      {"VM network names, case-insensitive",
       {.internal_vm_network_name = "storage", .external_vm_network_name = "vm network"},
       {{"Hostname", "node-a"}, {"InternalIP", "192.168.50.11"}, {"ExternalIP", "10.0.0.11"}}},
      {"exclusion",
       {.exclude_internal_network_subnet_cidrs = {*IpNet::Parse("10.0.0.0/8")}},
       {{"Hostname", "node-a"}, {"InternalIP", "192.168.50.11"}, {"ExternalIP", "10.0.0.11"}}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    config_.nodes = c.nodes;
    NodeE2eEnv env;
    ASSERT_TRUE(env.Start(config_, creds_).ok());
    ASSERT_TRUE(env.RegisterKubeletNode("node-a", VmUuid(east(), "node-a")).ok());
    ASSERT_TRUE(env.Initialised("node-a")) << env.GetNode("node-a").dump();
    EXPECT_EQ(kube::NodeAddresses(env.GetNode("node-a")), c.want);
  }
}

TEST_F(NodeE2eTest, KubeletNodeIpAnnotationIsHonoured) {
  Start();
  Register(east(), "node-a", true,
           {{std::string(cloud::kProvidedNodeIpAnnotation), "192.168.50.11"}});
  ExpectInitialised(east(), "node-a", "vsphere-vm.cpu-4.mem-8gb.os-ubuntu", "zone-a", "region-1");
  // The node IP's type first (k8s.io/cloud-provider's GetNodeAddressesFromNodeIP order).
  EXPECT_THAT(Addresses("node-a"),
              ElementsAre(Addr{"InternalIP", "192.168.50.11"}, Addr{"Hostname", "node-a"},
                          Addr{"ExternalIP", "10.0.0.11"}));
}

TEST_F(NodeE2eTest, NodeOfDestroyedVmIsDeleted) {
  Start();
  Register(east(), "node-gone");
  ASSERT_TRUE(env_.Initialised("node-gone"));

  ASSERT_TRUE(east().DestroyVm("node-gone").ok());
  ASSERT_TRUE(CacheSees(
      [&] { return !env_.instances().InstanceExists({.name = "node-gone"}).value_or(true); }));
  // Still Ready: a period passes and nothing happens (only NotReady nodes are checked).
  ASSERT_TRUE(env_.LifecyclePeriod());
  EXPECT_TRUE(env_.GetNode("node-gone").is_object());

  ASSERT_TRUE(
      env_.EditNode("node-gone", [](kube::Json& n) { NodeE2eEnv::SetReady(n, false); }).ok());
  ASSERT_TRUE(NotReadyInStoreOrGone("node-gone"));
  ASSERT_TRUE(PeriodsUntil("node-gone", [](const kube::Json& n) { return n.is_null(); }))
      << "the Node of a destroyed VM must be deleted";
  EXPECT_GE(env_.emulator().RequestCount("delete nodes"), 1);
  EXPECT_TRUE(env_.WaitForEvent("node-gone", "Normal", "DeletingNode", "node-gone"));
}

// Issue 10 item 2: a Node's providerID is the only key once it has one. Its VM is destroyed and
// another VM takes over its guest hostname (and so would match by name): the Node is NotFound,
// its addresses are not refreshed from the other VM, and it is deleted once NotReady.
TEST_F(NodeE2eTest, NodeOfDestroyedVmIsNotResurrectedByAnotherVmWithItsHostname) {
  Start();
  Register(east(), "node-reuse");
  ASSERT_TRUE(env_.Initialised("node-reuse"));
  const std::string provider_id = kube::ProviderId(env_.GetNode("node-reuse"));
  const std::vector<Addr> before = Addresses("node-reuse");
  ASSERT_THAT(before, ::testing::Contains(Addr{"InternalIP", "10.0.0.28"}));

  ASSERT_TRUE(east().DestroyVm("node-reuse").ok());
  ASSERT_TRUE(east()
                  .SetGuest("node-heir", R"({"hostname": "node-reuse",
                    "nics": [{"network": "VM Network", "ips": ["10.0.0.99"]}]})")
                  .ok());
  // Once the cache has dropped the destroyed VM and knows the heir by the old hostname, a
  // name-only identity matches the heir (and only it: two would be refused as ambiguous)...
  ASSERT_TRUE(CacheSees([&] {
    auto md = env_.instances().GetInstanceMetadata({.name = "node-reuse"});
    if (!md.ok()) return false;
    for (const auto& a : md->node_addresses)
      if (a.address == "10.0.0.99") return true;
    return false;
  }));
  // ...but the Node's providerID names the destroyed VM: confirmed gone.
  const cloud::NodeIdentity id{.name = "node-reuse", .provider_id = provider_id};
  EXPECT_EQ(env_.instances().InstanceExists(id).value_or(true), false);
  EXPECT_TRUE(absl::IsNotFound(env_.instances().GetInstanceMetadata(id).status()));

  // An address refresh pass does not take the heir's addresses.
  auto* syncs = env_.registry().Find("cloud_node_controller_syncs_total");
  ASSERT_NE(syncs, nullptr);
  auto refreshes = [&] {
    return syncs->Value({"refresh", "success"}) + syncs->Value({"refresh", "failure"});
  };
  const double refreshed = refreshes();
  const int64_t passes = env_.node_controller().refresh_passes();
  env_.clock().Advance(env_.options().node_status_update_frequency);
  ASSERT_TRUE(env_.node_controller().WaitForRefreshPasses(passes + 1, absl::Seconds(20)));
  ASSERT_TRUE(Eventually([&] { return refreshes() > refreshed; }));
  EXPECT_EQ(Addresses("node-reuse"), before) << env_.GetNode("node-reuse").dump();
  EXPECT_GE(syncs->Value({"refresh", "failure"}), 1);

  // NotReady: the lifecycle controller deletes it.
  ASSERT_TRUE(
      env_.EditNode("node-reuse", [](kube::Json& n) { NodeE2eEnv::SetReady(n, false); }).ok());
  ASSERT_TRUE(NotReadyInStoreOrGone("node-reuse"));
  ASSERT_TRUE(PeriodsUntil("node-reuse", [](const kube::Json& n) { return n.is_null(); }))
      << "the Node of a destroyed VM must be deleted even though another VM has its hostname";
}

// Issue 10 item 9: two zone tags of one category on the VM's cluster. The Go provider takes the
// last one; we refuse, and the Event names the cluster (MOID, name, inventory path), the
// category and both tags.
TEST_F(NodeE2eTest, TwoZoneTagsOnOneObjectAreRefusedNamingObjectCategoryAndTags) {
  Start();
  Register(east(), "node-2zones");
  ASSERT_TRUE(env_.WaitForEvent("node-2zones", "Warning", "InitializationFailed",
                                "2 tags of zone category \"k8s-zone\""))
      << Dump(env_.EventsFor("node-2zones"));
  std::string message;
  for (const auto& e : env_.EventsFor("node-2zones"))
    if (e.reason == "InitializationFailed") message = e.message;
  // Type, MOID, name and inventory path of the object.
  EXPECT_THAT(message, ::testing::ContainsRegex("ClusterComputeResource [a-z-]+[0-9]+ \\(c2\\) "
                                                "at /dc1/host/c2 has 2 tags"));
  EXPECT_THAT(message, ::testing::HasSubstr("\"zone-x\""));
  EXPECT_THAT(message, ::testing::HasSubstr("\"zone-y\""));
  EXPECT_THAT(message, ::testing::HasSubstr("would silently take the last one"));
  kube::Json n = env_.GetNode("node-2zones");
  EXPECT_TRUE(kube::HasTaint(n, controllers::kUninitializedTaintKey)) << "never initialised";
  EXPECT_TRUE(kube::ProviderId(n).empty());
}

TEST_F(NodeE2eTest, PoweredOffVmGetsShutdownTaintUntilReady) {
  Start();
  Register(east(), "node-off");
  ASSERT_TRUE(env_.Initialised("node-off"));
  auto shutdown_tainted = [](const kube::Json& n) {
    return n.is_object() && kube::HasTaint(n, controllers::kShutdownTaintKey, "NoSchedule");
  };

  ASSERT_TRUE(east().PowerVm("node-off", false).ok());
  ASSERT_TRUE(CacheSees(
      [&] { return env_.instances().InstanceShutdown({.name = "node-off"}).value_or(false); }));
  ASSERT_TRUE(
      env_.EditNode("node-off", [](kube::Json& n) { NodeE2eEnv::SetReady(n, false); }).ok());
  ASSERT_TRUE(
      env_.StoreSees("node-off", [](const kube::Json& n) { return !kube::IsNodeReady(n); }));
  ASSERT_TRUE(PeriodsUntil("node-off", shutdown_tainted)) << env_.GetNode("node-off").dump();
  // A powered-off VM still exists: the Node stays.
  ASSERT_TRUE(env_.LifecyclePeriod());
  EXPECT_TRUE(env_.GetNode("node-off").is_object());

  // Powered on, the kubelet reports Ready again: the taint goes.
  ASSERT_TRUE(east().PowerVm("node-off", true).ok());
  ASSERT_TRUE(env_.EditNode("node-off", [](kube::Json& n) { NodeE2eEnv::SetReady(n, true); }).ok());
  ASSERT_TRUE(env_.StoreSees("node-off", [](const kube::Json& n) { return kube::IsNodeReady(n); }));
  ASSERT_TRUE(PeriodsUntil("node-off", [&](const kube::Json& n) {
    return n.is_object() && !shutdown_tainted(n);
  })) << env_.GetNode("node-off").dump();
}

// vCenter "east" answers 503 to everything (or drops every connection) for the whole test. The
// VM of a NotReady node is destroyed while east cannot be asked; for 30 simulated seconds of
// lifecycle periods nothing may be deleted, and an Event says why. Once east answers again the
// VM is confirmed gone and the node is deleted: the check above was not vacuous.
class NodeE2eFaultTest : public NodeE2eTest, public ::testing::WithParamInterface<const char*> {};

TEST_P(NodeE2eFaultTest, NothingIsDeletedWhileVCenterFails) {
  const std::string mode = GetParam();
  const std::string vm = "node-" + mode;
  Start();
  Register(east(), vm);
  Register(west(), "node-w1");
  ASSERT_TRUE(env_.Initialised(vm));
  ASSERT_TRUE(env_.Initialised("node-w1"));

  ASSERT_TRUE(east().SetFault(mode).ok());
  ASSERT_TRUE(CacheSees([&] { return !env_.vcenter(0).inventory().synced(); }))
      << "east's cache must notice that vCenter fails";
  ASSERT_TRUE(east().DestroyVm(vm).ok());  // debug API: not faulted
  for (const std::string& n : {vm, std::string("node-w1")}) {
    ASSERT_TRUE(env_.EditNode(n, [](kube::Json& j) { NodeE2eEnv::SetReady(j, false); }).ok());
    ASSERT_TRUE(env_.StoreSees(n, [](const kube::Json& j) { return !kube::IsNodeReady(j); }));
  }

  const absl::Time t0 = env_.clock().Now();
  while (env_.clock().Now() - t0 < absl::Seconds(30)) {
    ASSERT_TRUE(env_.LifecyclePeriod());
    ASSERT_TRUE(env_.GetNode(vm).is_object()) << "deleted while vCenter could not be asked";
    ASSERT_TRUE(env_.GetNode("node-w1").is_object());
  }
  EXPECT_GE(env_.lifecycle().passes(), 7);
  EXPECT_EQ(env_.emulator().RequestCount("delete nodes"), 0);
  EXPECT_TRUE(env_.WaitForEvent(vm, "Warning", "NodeCheckFailed", "nothing is deleted"))
      << Dump(env_.EventsFor(vm));
  EXPECT_TRUE(HasEvent(env_.EventsFor(vm), "Warning", "NodeCheckFailed", "vCenter east"))
      << Dump(env_.EventsFor(vm));
  // The healthy vCenter's NotReady node is a powered-on VM: no event, no taint, no deletion.
  EXPECT_FALSE(kube::HasTaint(env_.GetNode("node-w1"), controllers::kShutdownTaintKey));

  ASSERT_TRUE(east().SetFault("none").ok());
  ASSERT_TRUE(env_.vcenter(0).inventory().WaitForSync(absl::Seconds(30)));
  // A failed DELETE (transient API error) is tried again the next period, like the controller.
  for (int i = 0; i < 5 && env_.GetNode(vm).is_object(); ++i) ASSERT_TRUE(env_.LifecyclePeriod());
  EXPECT_TRUE(env_.GetNode(vm).is_null()) << "with vCenter back, the VM is confirmed gone";
  EXPECT_TRUE(env_.GetNode("node-w1").is_object());
}

INSTANTIATE_TEST_SUITE_P(Faults, NodeE2eFaultTest, ::testing::Values("503", "drop"));

TEST_F(NodeE2eTest, ConflictOnStatusPatchIsRetriedWithBackoff) {
  Start();
  env_.emulator().ForceConflicts("nodes", "", "node-conflict", 1);
  Register(east(), "node-conflict");
  // The first write (the status PATCH) answers 409: the sync fails, says so, and is retried
  // after the work queue's backoff on the FakeClock.
  ASSERT_TRUE(Eventually([&] {
    env_.clock().Advance(absl::Milliseconds(100));
    return !kube::HasTaint(env_.GetNode("node-conflict"), controllers::kUninitializedTaintKey);
  }));
  ExpectInitialised(east(), "node-conflict", "vsphere-vm.cpu-2.mem-4gb.os-ubuntu", "zone-a",
                    "region-1");
  EXPECT_TRUE(
      env_.WaitForEvent("node-conflict", "Warning", "InitializationFailed", "node-conflict"))
      << Dump(env_.EventsFor("node-conflict"));
}

TEST_F(NodeE2eTest, ConflictOnUpdateKeepsLabelsWrittenByOthers) {
  Start();
  // Right after the controller's status PATCH, another writer labels the Node (the controller's
  // copy is now stale) and the next Node write is forced to 409 as well.
  std::atomic<bool> fired{false};
  env_.client().SetAfterPatch([&](absl::string_view name, absl::string_view sub) {
    if (name != "node-conflict-put" || sub != "status" || fired.exchange(true)) return;
    ASSERT_TRUE(env_.EditNode("node-conflict-put",
                              [](kube::Json& n) {
                                kube::SetLabel(n, "team", "blue");
                                kube::SetLabel(n, "topology.kubernetes.io/zone", "stale-zone");
                              })
                    .ok());
    env_.emulator().ForceConflicts("nodes", "", "node-conflict-put", 1);
  });
  Register(east(), "node-conflict-put");
  ExpectInitialised(east(), "node-conflict-put", "vsphere-vm.cpu-2.mem-4gb.os-ubuntu", "zone-a",
                    "region-1");
  EXPECT_TRUE(fired.load());
  auto labels = kube::Labels(env_.GetNode("node-conflict-put"));
  EXPECT_EQ(labels["team"], "blue") << "a label written by someone else was lost";
  EXPECT_GE(env_.emulator().RequestCount("patch nodes"), 2);
  EXPECT_GE(env_.emulator().RequestCount("get nodes"), 1) << "the conflict re-reads the Node";
}

TEST_F(NodeE2eTest, AddressChangeInTheVmReachesTheNode) {
  Start();
  Register(east(), "node-move");
  Register(east(), "node-a");
  ASSERT_TRUE(env_.Initialised("node-move"));
  ASSERT_TRUE(env_.Initialised("node-a"));
  // A refresh pass queues the Nodes its informer knows as initialised. The informer may lag the
  // API server by a moment (ThreadSanitizer on a loaded machine: a few ms), and a Node it still
  // shows tainted is left to the next pass (it was initialised with fresh addresses a moment ago,
  // and VM changes reach it through the inventory listener, not the pass): wait for the informer.
  for (const char* name : {"node-move", "node-a"}) {
    ASSERT_TRUE(env_.StoreSees(name, [](const kube::Json& n) {
      return !kube::ProviderId(n).empty() &&
             !kube::HasTaint(n, controllers::kUninitializedTaintKey);
    })) << name;
  }

  // The periodic refresh of every node costs no vCenter request when nothing changed.
  auto* syncs = env_.registry().Find("cloud_node_controller_syncs_total");
  ASSERT_NE(syncs, nullptr);
  ASSERT_TRUE(east().ResetCounters().ok());
  const double before = syncs->Value({"refresh", "success"});
  env_.clock().Advance(env_.options().node_status_update_frequency);
  ASSERT_TRUE(env_.node_controller().WaitForRefreshPasses(1, absl::Seconds(20)));
  ASSERT_TRUE(Eventually([&] { return syncs->Value({"refresh", "success"}) >= before + 2; }));
  auto soap = east().SoapCounters();
  auto rest = east().RestCounters();
  ASSERT_TRUE(soap.ok() && rest.ok());
  for (const auto& [method, n] : *soap)
    EXPECT_TRUE(method == "WaitForUpdatesEx") << "refresh called " << method << " x" << n;
  EXPECT_TRUE(rest->empty());

  // A new IP in the guest: the inventory stream reports it and the Node follows, without
  // waiting for the next refresh period.
  ASSERT_TRUE(
      east()
          .SetGuest("node-move", R"({"nics": [{"network": "VM Network", "ips": ["10.0.0.127"]}]})")
          .ok());
  ASSERT_TRUE(env_.NodeBecomes("node-move", [](const kube::Json& n) {
    auto a = kube::NodeAddresses(n);
    return a.size() == 3 && a[1].address == "10.0.0.127";
  })) << env_.GetNode("node-move").dump();
  EXPECT_THAT(Addresses("node-move"),
              ElementsAre(Addr{"Hostname", "node-move"}, Addr{"InternalIP", "10.0.0.127"},
                          Addr{"ExternalIP", "10.0.0.127"}));
  EXPECT_THAT(Addresses("node-a"),
              ElementsAre(Addr{"Hostname", "node-a"}, Addr{"InternalIP", "10.0.0.11"},
                          Addr{"ExternalIP", "10.0.0.11"}));
}

}  // namespace
}  // namespace ccm::integration
