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

}  // namespace

void JudgeNodes(const std::vector<NodeFacts>& nodes, const NodeCheckContext& c, Report& report) {
  if (nodes.empty()) {
    report.Warn(kCheck, "the cluster has no Node", "nothing to check; register the nodes first");
    return;
  }
  int healthy = 0;
  for (const NodeFacts& n : nodes) {
    if (n.provider_id.empty()) {
      if (c.component == Component::kCpi) {
        JudgeUninitialised(n, report);
      } else {
        report.Error(kCheck,
                     absl::StrCat(n.name,
                                  ": no providerID: the CSI driver cannot attach "
                                  "volumes to it"),
                     "the CPI sets it: run the CPI's diagnose for this Node");
      }
      continue;
    }
    if (JudgeInitialised(n, c, report)) ++healthy;
  }
  if (healthy > 0) {
    report.Ok(kCheck, absl::StrCat(healthy, " of ", nodes.size(), " Node",
                                   nodes.size() == 1 ? "" : "s", " initialised with a VM",
                                   c.zones_configured ? ", a zone and a region" : ""));
  }
}

}  // namespace ccm::diagnose
