#include "diagnose/node_checks.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace ccm::diagnose::node_checks_test {
namespace {

using ::testing::HasSubstr;

NodeFacts Initialised(const std::string& name) {
  NodeFacts n;
  n.name = name;
  n.provider_id = "vsphere://4237a4c6-0000-0000-0000-000000000001";
  n.match = absl::OkStatus();
  n.zone = "zone-a";
  n.region = "region-1";
  return n;
}

NodeFacts Waiting(const std::string& name, absl::Status match) {
  NodeFacts n;
  n.name = name;
  n.uninitialized_taint = true;
  n.match = std::move(match);
  return n;
}

TEST(NodeChecksTest, EachNodeProblemHasItsLine) {
  struct Case {
    std::string name;
    std::vector<NodeFacts> nodes;
    NodeCheckContext context;
    std::vector<std::string> want;
    int errors, warnings;
  };
  NodeCheckContext cpi;
  NodeCheckContext zones{Component::kCpi, true, "k8s-zone", "k8s-region"};
  NodeCheckContext csi{Component::kCsi, false, "", ""};
  NodeFacts found = Waiting("node-4", absl::OkStatus());
  found.vm = "vm-44 (node-4) in vc1/dc1";
  NodeFacts off = found;
  off.powered_off = true;
  NodeFacts no_taint = Waiting("node-5", absl::OkStatus());
  no_taint.uninitialized_taint = false;
  NodeFacts no_zone = Initialised("node-6");
  no_zone.zone.clear();
  NodeFacts untagged = found;
  untagged.metadata =
      absl::FailedPreconditionError("no tag of zone category \"k8s-zone\" found on host-1");
  NodeFacts no_ip = found;
  no_ip.metadata = absl::FailedPreconditionError(
      "node-4: unable to find suitable IP address for node with IP family ipv4");
  NodeFacts untagged_labelled = no_zone;
  untagged_labelled.metadata = untagged.metadata;
  NodeFacts gone = Initialised("node-7");
  gone.match = absl::NotFoundError("no VM has its providerID's UUID");
  NodeCheckContext csi_zones{Component::kCsi, true, "", ""};
  NodeFacts by_csinode = no_taint;  // no providerID, known by its CSINode's node ID
  by_csinode.csi_node_id = "4237a4c6-0000-0000-0000-000000000005";
  NodeFacts topo_ok = by_csinode;
  topo_ok.topology = NodeFacts::Topology{"Success", ""};
  NodeFacts topo_error = by_csinode;
  topo_error.topology = NodeFacts::Topology{
      "Error", "no tag of category k8s-zone on HostSystem:host-47 (esx-3) or its 4 ancestors"};
  NodeFacts topo_pending = by_csinode;
  topo_pending.topology = NodeFacts::Topology{"", ""};
  const std::vector<Case> cases = {
      {"healthy",
       {Initialised("node-1"), Initialised("node-2")},
       zones,
       {"2 of 2 Nodes initialised with a VM, a zone and a region"},
       0,
       0},
      {"no VM matches",
       {Waiting("node-3", absl::NotFoundError("no VM matches node-3 (tried systemUUID x)"))},
       cpi,
       {"node-3: not initialised: no VM matches node-3 (tried systemUUID x)", "BIOS UUID"},
       1,
       0},
      {"several VMs match",
       {Waiting("node-3", absl::FailedPreconditionError("2 VMs have hostname node-3"))},
       cpi,
       {"node-3: not initialised: 2 VMs have hostname node-3", "make the identifier unique"},
       1,
       0},
      {"vCenter down",
       {Waiting("node-3", absl::UnavailableError("vc1: not synced"))},
       cpi,
       {"not initialised: vc1: not synced", "fix the vCenter errors above"},
       1,
       0},
      {"VM powered off", {off}, cpi, {"its VM vm-44 (node-4) in vc1/dc1 is powered off"}, 0, 1},
      {"VM found, CPI not running",
       {found},
       cpi,
       {"its VM is vm-44 (node-4) in vc1/dc1, found; the CPI has not run"},
       0,
       1},
      {"kubelet without --cloud-provider=external",
       {no_taint},
       cpi,
       {"node-5: no providerID and no uninitialized taint", "--cloud-provider=external"},
       1,
       0},
      {"no zone label",
       {Initialised("node-1"), no_zone},
       zones,
       {"node-6: no zone or region label", "category k8s-zone", "1 of 2 Nodes initialised"},
       1,
       0},
      {"VM gone", {gone}, cpi, {"node-7: its VM is gone"}, 0, 1},
      {"VM found, no zone tag",
       {untagged},
       zones,
       {"node-4: not initialised: its VM is vm-44 (node-4) in vc1/dc1, but no tag of zone "
        "category \"k8s-zone\" found on host-1",
        "exactly one tag of each configured category"},
       1,
       0},
      {"VM found, no IP",
       {no_ip},
       cpi,
       {"but node-4: unable to find suitable IP address", "run Tools in the guest"},
       1,
       0},
      {"initialised, no zone tag",
       {untagged_labelled},
       zones,
       {"node-6: no zone or region label (its VM's tags: no tag of zone category \"k8s-zone\" "
        "found on host-1)"},
       1,
       0},
      {"CSI: no providerID and no CSINode node ID",
       {no_taint},
       csi,
       {"node-5: no providerID and no node ID of csi.vsphere.vmware.com in its CSINode"},
       1,
       0},
      {"CSI: known by its CSINode", {by_csinode}, csi, {"1 of 1 Node with a known VM"}, 0, 0},
      {"CSI: topology answered",
       {topo_ok},
       csi_zones,
       {"1 of 1 Node with a known VM and their topology"},
       0,
       0},
      {"CSI: CSINodeTopology Error",
       {topo_error},
       csi_zones,
       {"node-5: CSINodeTopology Error: no tag of category k8s-zone on HostSystem:host-47"},
       1,
       0},
      {"CSI: CSINodeTopology pending",
       {topo_pending},
       csi_zones,
       {"node-5: CSINodeTopology not answered yet", "vsphere-syncer"},
       0,
       1},
      {"CSI: zones, neither CSINodeTopology nor labels",
       {by_csinode},
       csi_zones,
       {"node-5: no CSINodeTopology and no zone or region label"},
       1,
       0},
      {"CSI: zones, the Node-label way",
       {Initialised("node-8")},
       csi_zones,
       {"1 of 1 Node with a known VM and their topology"},
       0,
       0},
      {"no Nodes", {}, cpi, {"the cluster has no Node"}, 0, 1},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Report r;
    JudgeNodes(c.nodes, c.context, r);
    const std::string text = r.Text();
    for (const std::string& w : c.want) EXPECT_THAT(text, HasSubstr(w));
    EXPECT_EQ(r.Count(Level::kError), c.errors) << text;
    EXPECT_EQ(r.Count(Level::kWarning), c.warnings) << text;
  }
}

}  // namespace
}  // namespace ccm::diagnose::node_checks_test
