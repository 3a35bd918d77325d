// VSphereInstances against govmomi's simulator: two vCenters, zone/region tags, IPv4+IPv6 NICs.
#include "cloud/vsphere/vsphere_instances.h"

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "cloud/core/uuid.h"
#include "fixtures/vcsim/simulator_suite.h"
#include "fixtures/vcsim/vcsim_process.h"
#include "gtest/gtest.h"
#include "testing/static_credentials.h"

namespace ccm::cloud {
namespace {

using ::ccm::testing::VcsimProcess;

constexpr char kSpec1[] = R"({
  "users": {"admin": "secret"},
  "datacenters": [{"name": "dc1",
    "clusters": [{"name": "c1", "hosts": 2, "resource_pools": ["rp1"]},
                 {"name": "c2", "hosts": 1}],
    "vms": [
      {"name": "node-1", "cluster": "c1", "uuid": "422e4956-ad22-1139-6d72-59cc8f26bc90",
       "hostname": "node-1", "guest_id": "ubuntu64Guest", "cpus": 4, "memory_mb": 8192,
       "nics": [{"network": "VM Network", "ips": ["10.0.0.11", "fd00::11", "fe80::1"]},
                {"network": "Storage", "ips": ["192.168.50.11"]}]},
      {"name": "node-2", "cluster": "c1", "hostname": "node-2", "guest_id": "rhel9_64Guest",
       "nics": [{"network": "VM Network", "ips": ["10.0.0.12"]}]},
      {"name": "node-off", "cluster": "c1", "hostname": "node-off",
       "nics": [{"network": "VM Network", "ips": ["10.0.0.13"]}]},
      {"name": "node-moves", "cluster": "c1", "hostname": "node-moves",
       "nics": [{"network": "VM Network", "ips": ["10.0.0.14"]}]}
    ],
    "generate_vms": {"count": 60, "prefix": "gen-", "cluster": "c1", "subnet": "10.1.0.0/16"}}],
  "tag_categories": [{"name": "k8s-zone"}, {"name": "k8s-region"}],
  "tags": [{"name": "zone-a", "category": "k8s-zone", "attach": ["/dc1/host/c1"]},
           {"name": "zone-b", "category": "k8s-zone", "attach": ["/dc1/host/c2"]},
           {"name": "region-1", "category": "k8s-region", "attach": ["/dc1"]}]
})";

constexpr char kSpec2[] = R"({
  "users": {"admin": "secret"},
  "datacenters": [{"name": "dc-west",
    "clusters": [{"name": "w1", "hosts": 1}],
    "vms": [{"name": "node-3", "cluster": "w1", "hostname": "node-3",
             "nics": [{"network": "VM Network", "ips": ["10.2.0.3"]}]}]}],
  "tag_categories": [{"name": "k8s-zone"}, {"name": "k8s-region"}],
  "tags": [{"name": "zone-w", "category": "k8s-zone", "attach": ["/dc-west/host/w1"]},
           {"name": "region-2", "category": "k8s-region", "attach": ["/dc-west"]}]
})";

VirtualCenterConfig VcConfig(const VcsimProcess& sim, const std::string& label) {
  VirtualCenterConfig vc;
  vc.label = label;
  const std::string hp = sim.host_port();
  vc.server = hp.substr(0, hp.rfind(':'));
  vc.port = std::stoi(hp.substr(hp.rfind(':') + 1));
  vc.ca_file = sim.info().ca_file;
  return vc;
}

class VSphereInstancesTest : public ccm::testing::SimulatorSuite<VSphereInstancesTest> {
 public:
  static std::vector<std::string> Specs() { return {kSpec1, kSpec2}; }

 protected:
  static ccm::testing::VcsimProcess& sim1() { return sim(0); }
  static ccm::testing::VcsimProcess& sim2() { return sim(1); }

  void SetUpTest() override {
    config_.vcenters = {VcConfig(sim1(), "east"), VcConfig(sim2(), "west")};
    config_.labels = {.region = "k8s-region", .zone = "k8s-zone"};
    for (const auto& vcc : config_.vcenters) {
      // Short waits: the "drop" fault below reaches the stream at its next call.
      vcs_.push_back(
          std::make_unique<VCenter>(vcc, &creds_, VCenterOptions{.max_wait_seconds = 2}));
      vcs_.back()->Start();
    }
    for (auto& vc : vcs_) ASSERT_TRUE(vc->inventory().WaitForSync(absl::Seconds(30)));
    std::vector<VCenter*> raw;
    for (auto& vc : vcs_) raw.push_back(vc.get());
    instances_ = std::make_unique<VSphereInstances>(config_, raw);
  }

  // Runs `act`, then waits (real time, at most 1 s) until a change of `moid` reported by `vc`'s
  // cache makes `done` true.
  void WaitForChange(VCenter& vc, const std::string& moid, const std::function<absl::Status()>& act,
                     const std::function<bool()>& done) {
    absl::Mutex mu;
    bool ok = false;
    int id = vc.inventory().AddListener([&](const std::string& m, vsphere::VmChangeKind) {
      if (m != moid) return;
      bool d = done();
      absl::MutexLock lock(&mu);
      ok = ok || d;
    });
    ASSERT_TRUE(act().ok());
    absl::MutexLock lock(&mu);
    EXPECT_TRUE(mu.AwaitWithTimeout(absl::Condition(&ok), absl::Seconds(1)))
        << "the cache did not see the change of " << moid << " within 1 s";
    vc.inventory().RemoveListener(id);
  }

  std::string Moid(VcsimProcess& sim, const std::string& name) {
    for (const auto& vm : sim.info().vms)
      if (vm.name == name) return vm.moid;
    return "";
  }

  vsphere::StaticCredentialSource creds_{{"admin", Secret("secret")}};
  Config config_;
  std::vector<std::unique_ptr<VCenter>> vcs_;
  std::unique_ptr<VSphereInstances> instances_;
};

TEST_F(VSphereInstancesTest, MetadataByHostnameWithZonesAndDualStack) {
  config_.vcenters[0].ip_families = {IpFamily::kIPv4, IpFamily::kIPv6};
  VCenter dual(config_.vcenters[0], &creds_);
  dual.Start();
  ASSERT_TRUE(dual.inventory().WaitForSync(absl::Seconds(30)));
  VSphereInstances inst(config_, {&dual});
  auto md = inst.GetInstanceMetadata({.name = "node-1"});
  ASSERT_TRUE(md.ok()) << md.status();
  EXPECT_EQ(md->provider_id, "vsphere://422e4956-ad22-1139-6d72-59cc8f26bc90");
  EXPECT_EQ(md->instance_type, "vsphere-vm.cpu-4.mem-8gb.os-ubuntu");
  EXPECT_EQ(md->zone, "zone-a");
  EXPECT_EQ(md->region, "region-1");
  EXPECT_EQ(DebugString(md->node_addresses),
            "Hostname=node-1 InternalIP=10.0.0.11 ExternalIP=10.0.0.11 InternalIP=fd00::11 "
            "ExternalIP=fd00::11");
}

TEST_F(VSphereInstancesTest, SystemUuidInSmbiosOrderAndSubnetRules) {
  config_.nodes.internal_network_subnet_cidrs = {*IpNet::Parse("192.168.50.0/24")};
  std::vector<VCenter*> raw;
  for (auto& vc : vcs_) raw.push_back(vc.get());
  VSphereInstances inst(config_, raw);
  auto md = inst.GetInstanceMetadata(
      {.name = "renamed", .system_uuid = "56492e42-22ad-3911-6d72-59cc8f26bc90"});
  ASSERT_TRUE(md.ok()) << md.status();
  EXPECT_EQ(md->provider_id, "vsphere://422e4956-ad22-1139-6d72-59cc8f26bc90");
  EXPECT_EQ(md->node_addresses[1].address, "192.168.50.11");
}

TEST_F(VSphereInstancesTest, SecondVCenterAndProvidedNodeIp) {
  auto md = instances_->GetInstanceMetadata({.name = "node-3"});
  ASSERT_TRUE(md.ok()) << md.status();
  EXPECT_EQ(md->zone, "zone-w");
  EXPECT_EQ(md->region, "region-2");
  auto ip =
      instances_->GetInstanceMetadata({.name = "node-1", .provided_node_ip = "192.168.50.11"});
  ASSERT_TRUE(ip.ok()) << ip.status();
  EXPECT_NE(DebugString(ip->node_addresses).find("InternalIP=192.168.50.11"), std::string::npos)
      << DebugString(ip->node_addresses);
  auto bad = instances_->GetInstanceMetadata({.name = "node-1", .provided_node_ip = "10.9.9.9"});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("10.9.9.9"), std::string::npos) << bad.status();
}

TEST_F(VSphereInstancesTest, UnknownNodeIsConfirmedGoneOnlyWhenEveryVCenterAnswered) {
  auto e = instances_->InstanceExists({.name = "no-such-node"});
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_FALSE(*e);
  auto md = instances_->GetInstanceMetadata({.name = "no-such-node"});
  EXPECT_TRUE(absl::IsNotFound(md.status())) << md.status();

  // Break vCenter "west": its stream fails, its cache stops answering.
  ASSERT_TRUE(sim2().SetFault("drop").ok());
  absl::Time deadline = absl::Now() + absl::Seconds(20);
  while (vcs_[1]->inventory().synced() && absl::Now() < deadline)
    absl::SleepFor(absl::Milliseconds(20));
  ASSERT_FALSE(vcs_[1]->inventory().synced());
  auto unknown = instances_->InstanceExists({.name = "no-such-node"});
  EXPECT_FALSE(unknown.ok()) << "a vCenter that cannot be asked must never mean 'gone'";
  EXPECT_FALSE(absl::IsNotFound(unknown.status())) << unknown.status();
  EXPECT_FALSE(vcs_[1]->Health().ok());
  // A VM found on the healthy vCenter is still a fact.
  auto found = instances_->InstanceExists({.name = "node-2"});
  ASSERT_TRUE(found.ok()) << found.status();
  EXPECT_TRUE(*found);
  ASSERT_TRUE(sim2().SetFault("none").ok());
  EXPECT_TRUE(vcs_[1]->inventory().WaitForSync(absl::Seconds(30)));
}

TEST_F(VSphereInstancesTest, PowerOffAndDestroyAreSeenFromTheCache) {
  WaitForChange(
      *vcs_[0], Moid(sim1(), "node-off"), [&] { return sim1().PowerVm("node-off", false); },
      [&] { return instances_->InstanceShutdown({.name = "node-off"}).value_or(false); });
  auto off = instances_->InstanceShutdown({.name = "node-off"});
  ASSERT_TRUE(off.ok()) << off.status();
  EXPECT_TRUE(*off);
  auto on = instances_->InstanceShutdown({.name = "node-2"});
  ASSERT_TRUE(on.ok());
  EXPECT_FALSE(*on);
  WaitForChange(
      *vcs_[0], Moid(sim1(), "node-off"), [&] { return sim1().DestroyVm("node-off"); },
      [&] { return !instances_->InstanceExists({.name = "node-off"}).value_or(true); });
  auto gone = instances_->InstanceExists({.name = "node-off"});
  ASSERT_TRUE(gone.ok()) << gone.status();
  EXPECT_FALSE(*gone);
}

TEST_F(VSphereInstancesTest, ManyNodesCostAHandfulOfRequests) {
  ASSERT_TRUE(sim1().ResetCounters().ok());
  int done = 0;
  for (int i = 0; i < 60; ++i) {
    auto md = instances_->GetInstanceMetadata({.name = absl::StrCat("gen-", i + 1)});
    ASSERT_TRUE(md.ok()) << md.status();
    EXPECT_EQ(md->zone, "zone-a");
    ++done;
  }
  auto soap = sim1().SoapCounters();
  auto rest = sim1().RestCounters();
  ASSERT_TRUE(soap.ok() && rest.ok());
  int soap_total = 0, rest_total = 0;
  for (const auto& [m, n] : *soap) soap_total += (m == "WaitForUpdatesEx") ? 0 : n;
  for (const auto& [p, n] : *rest) rest_total += n;
  EXPECT_EQ(done, 60);
  EXPECT_LE(soap_total, 12) << "ancestry must be fetched in batches";
  int batches = 0;
  for (const auto& [p, n] : *rest)
    if (p.find("list-attached-tags-on-objects") != std::string::npos) batches += n;
  EXPECT_EQ(batches, 1) << "tags of all VMs' ancestors must come in one batch";
  // One login, the batch, and one look-up per tag and category never seen before (2 + 2).
  EXPECT_LE(rest_total, 6);
}

// After a vMotion to a host of another zone, the VM's zone follows from the inventory cache's
// new placement (no stale ancestor chain).
TEST_F(VSphereInstancesTest, ZoneFollowsTheVmAfterVMotion) {
  auto before = instances_->GetInstanceMetadata({.name = "node-moves"});
  ASSERT_TRUE(before.ok()) << before.status();
  EXPECT_EQ(before->zone, "zone-a");
  const std::string moid = Moid(sim1(), "node-moves");
  const std::string host_before = vcs_[0]->inventory().FindByMoid(moid)->host.value;
  WaitForChange(
      *vcs_[0], moid, [&] { return sim1().RelocateVm("node-moves", "/dc1/host/c2"); },
      [&] {
        auto f = vcs_[0]->inventory().FindByMoid(moid);
        return f.ok() && f->host.value != host_before;
      });
  auto after = instances_->GetInstanceMetadata({.name = "node-moves"});
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_EQ(after->zone, "zone-b");
  EXPECT_EQ(after->region, "region-1");
}

// A zone tag moved from one cluster to another reaches the zone once the cached tags expire: the
// chains built from the old tags are not served again. Within the TTL the cache answers.
TEST_F(VSphereInstancesTest, ZoneFollowsATagChangeOnceTheTagsExpire) {
  VCenter expiring(config_.vcenters[0], &creds_,
                   VCenterOptions{.max_wait_seconds = 2, .tag_ttl = absl::ZeroDuration()});
  expiring.Start();
  ASSERT_TRUE(expiring.inventory().WaitForSync(absl::Seconds(30)));
  Config one = config_;
  one.vcenters = {config_.vcenters[0]};
  VSphereInstances fresh(one, {&expiring});
  auto before = fresh.GetInstanceMetadata({.name = "node-2"});
  ASSERT_TRUE(before.ok()) << before.status();
  EXPECT_EQ(before->zone, "zone-a");
  auto cached = instances_->GetInstanceMetadata({.name = "node-2"});
  ASSERT_TRUE(cached.ok()) << cached.status();

  struct Restore {  // the simulator is shared by the suite's tests
    VcsimProcess& sim;
    ~Restore() {
      EXPECT_TRUE(sim.AttachTag("zone-b", "/dc1/host/c1", false).ok());
      EXPECT_TRUE(sim.AttachTag("zone-a", "/dc1/host/c1", true).ok());
    }
  } restore{sim1()};
  ASSERT_TRUE(sim1().AttachTag("zone-a", "/dc1/host/c1", false).ok());
  ASSERT_TRUE(sim1().AttachTag("zone-b", "/dc1/host/c1", true).ok());

  auto after = fresh.GetInstanceMetadata({.name = "node-2"});
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_EQ(after->zone, "zone-b");
  EXPECT_EQ(after->region, "region-1");
  auto still = instances_->GetInstanceMetadata({.name = "node-2"});
  ASSERT_TRUE(still.ok()) << still.status();
  EXPECT_EQ(still->zone, "zone-a") << "within the 10 minute TTL the cached tags answer";
}

}  // namespace
}  // namespace ccm::cloud
