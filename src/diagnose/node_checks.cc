#include "diagnose/node_checks.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace ccm::diagnose {
namespace {

constexpr char kCheck[] = "nodes";

std::string Why(const absl::Status& s) { return std::string(s.message()); }

// The fix for a GetInstanceMetadata error: its zone or region, its addresses, or else.
std::string MetadataFix(const absl::Status& s) {
  if (absl::StrContains(s.message(), " category \"")) {
    return "tag the VM's host, cluster or datacenter with exactly one tag of each configured "
           "category (the nearest tagged object wins)";
  }
  if (absl::StrContains(s.message(), "IP address")) {
    return "the CPI reports the VM's IPs from VMware Tools: run Tools in the guest with an "
           "address on a network the config allows ([Nodes] internal/external network names or "
           "subnets), or start the kubelet with --node-ip";
  }
  return "see the message; the CPI's log and the Node's InitializationFailed Event say the same";
}

// Why a Node without providerID is not initialised.
void JudgeUninitialised(const NodeFacts& n, Report& report) {
  if (!n.uninitialized_taint) {
    report.Error(kCheck,
                 absl::StrCat(n.name,
                              ": no providerID and no uninitialized taint: its kubelet "
                              "runs without --cloud-provider=external"),
                 "start the kubelet with --cloud-provider=external (the CPI initialises only "
                 "the Nodes the kubelet taints), then delete the Node so it registers again");
    return;
  }
  const std::string head = absl::StrCat(n.name, ": not initialised: ");
  if (!n.match) {
    report.Error(kCheck, absl::StrCat(head, "no vCenter could be asked"),
                 "fix the vCenter errors above first");
  } else if (absl::IsNotFound(*n.match)) {
    report.Error(kCheck, absl::StrCat(head, Why(*n.match)),
                 "the CPI finds a VM by its BIOS UUID (the Node's systemUUID), its guest "
                 "hostname (the Node's name, VMware Tools running) or its IP: check that the "
                 "VM is in a configured datacenter and that one of them matches");
  } else if (n.match->code() == absl::StatusCode::kFailedPrecondition) {
    report.Error(kCheck, absl::StrCat(head, Why(*n.match)),
                 "make the identifier unique: rename or remove the other VMs, or give the Node "
                 "its VM's systemUUID");
  } else if (!n.match->ok()) {
    report.Error(kCheck, absl::StrCat(head, Why(*n.match)), "fix the vCenter errors above first");
  } else if (n.powered_off) {
    report.Warn(kCheck, absl::StrCat(head, "its VM ", n.vm, " is powered off"), "power the VM on");
  } else if (n.metadata && !n.metadata->ok()) {
    report.Error(kCheck, absl::StrCat(head, "its VM is ", n.vm, ", but ", Why(*n.metadata)),
                 MetadataFix(*n.metadata));
  } else {
    report.Warn(kCheck, absl::StrCat(head, "its VM is ", n.vm, ", found; the CPI has not run"),
                "check that the cloud-controller-manager runs and holds its lease (its log "
                "names the Node)");
  }
}

// An initialised Node's VM and zone; returns whether all is well.
bool JudgeInitialised(const NodeFacts& n, const NodeCheckContext& c, Report& report) {
  bool ok = true;
  if (n.match && absl::IsNotFound(*n.match)) {
    report.Warn(kCheck, absl::StrCat(n.name, ": its VM is gone (", n.provider_id, ")"),
                c.component == Component::kCpi
                    ? "the CPI deletes the Node; recreate the VM or remove the Node"
                    : "volumes cannot attach to it: remove the Node or recreate its VM");
    ok = false;
  }
  if (c.zones_configured && (n.zone.empty() || n.region.empty())) {
    report.Error(kCheck,
                 absl::StrCat(n.name, ": no zone or region label",
                              n.metadata && !n.metadata->ok()
                                  ? absl::StrCat(" (its VM's tags: ", Why(*n.metadata), ")")
                                  : ""),
                 absl::StrCat("tag its VM's host, cluster or datacenter with a tag of category ",
                              c.zone_category, " and one of category ", c.region_category,
                              "; the CPI labels the Node at initialisation"));
    ok = false;
  }
  return ok;
}

// A Node as the CSI driver needs it: its VM known (CSINode node ID or providerID) and, with
// topology, its CSINodeTopology answered (or, the Node-label way, its zone labels). Returns whether
// all is well.
bool JudgeCsiNode(const NodeFacts& n, const NodeCheckContext& c, Report& report) {
  if (n.provider_id.empty() && n.csi_node_id.empty()) {
    report.Error(
        kCheck,
        absl::StrCat(n.name,
                     ": no providerID and no node ID of csi.vsphere.vmware.com in its "
                     "CSINode: the CSI driver cannot attach volumes to it"),
        "the node plugin reports its VM UUID when it registers: check the "
        "vsphere-csi-node Pod on this Node (or run the CPI's diagnose for its providerID)");
    return false;
  }
  if (n.match && absl::IsNotFound(*n.match)) {
    report.Warn(kCheck, absl::StrCat(n.name, ": its VM is gone (", n.provider_id, ")"),
                "volumes cannot attach to it: remove the Node or recreate its VM");
    return false;
  }
  if (n.topology) {
    if (n.topology->status == "Error") {
      report.Error(kCheck,
                   absl::StrCat(n.name, ": CSINodeTopology Error: ", n.topology->error_message),
                   "tag the VM's ESXi host, its cluster or datacenter with one tag of each "
                   "topology category (or fix what the message names); the node plugin "
                   "registers once it is Success");
      return false;
    }
    if (n.topology->status != "Success") {
      report.Warn(kCheck, absl::StrCat(n.name, ": CSINodeTopology not answered yet"),
                  "the syncer answers it: check that the vsphere-syncer container runs and "
                  "leads (its log names the Node)");
      return false;
    }
    return true;
  }
  if (c.zones_configured && (n.zone.empty() || n.region.empty())) {
    report.Error(kCheck, absl::StrCat(n.name, ": no CSINodeTopology and no zone or region label"),
                 "the node plugin (without csi-vsphere.conf) creates its CSINodeTopology when "
                 "it registers: check its Pod and that crds.yaml is applied");
    return false;
  }
  return true;
}

}  // namespace

void JudgeNodes(const std::vector<NodeFacts>& nodes, const NodeCheckContext& c, Report& report) {
  if (nodes.empty()) {
    report.Warn(kCheck, "the cluster has no Node", "nothing to check; register the nodes first");
    return;
  }
  int healthy = 0;
  for (const NodeFacts& n : nodes) {
    if (c.component == Component::kCsi) {
      if (JudgeCsiNode(n, c, report)) ++healthy;
      continue;
    }
    if (n.provider_id.empty()) {
      JudgeUninitialised(n, report);
      continue;
    }
    if (JudgeInitialised(n, c, report)) ++healthy;
  }
  if (healthy > 0) {
    report.Ok(kCheck, c.component == Component::kCsi
                          ? absl::StrCat(healthy, " of ", nodes.size(), " Node",
                                         nodes.size() == 1 ? "" : "s", " with a known VM",
                                         c.zones_configured ? " and their topology" : "")
                          : absl::StrCat(healthy, " of ", nodes.size(), " Node",
                                         nodes.size() == 1 ? "" : "s", " initialised with a VM",
                                         c.zones_configured ? ", a zone and a region" : ""));
  }
}

}  // namespace ccm::diagnose
