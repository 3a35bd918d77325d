#include "diagnose/volume_checks.h"

#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "csi/core/placement.h"

namespace ccm::diagnose {
namespace {

std::string Seconds(absl::Duration d) {
  return d < absl::Seconds(1) ? "0s" : absl::FormatDuration(absl::Trunc(d, absl::Seconds(1)));
}

constexpr char kGrantDatastores[] =
    "grant the role CNS-DATASTORE (Datastore > Low level file operations) to the vCenter user "
    "on the datastores named (vSphere Client: datastore > Permissions > Add; the privileges "
    "line above lists them all)";

std::string CauseFix(const absl::Status& s);

constexpr char kResumeDatastores[] =
    "resume volume creation on the suspended datastores (CNS manager's resume, or clear their "
    "custom attribute value cns.vmware.com/datastoreSuspended), or name another datastore in the "
    "StorageClass";

// The fix for a CreateVolume error: for the datastores left out (suspended, or without the
// privileges) when that is the whole cause, else the cause's, and theirs beside it.
std::string CreateFix(const absl::Status& s) {
  if (absl::StrContains(s.message(), csi::kNoPrivilegeOnAny)) return kGrantDatastores;
  const bool suspended = absl::StrContains(s.message(), csi::kSuspendedForNewVolumes);
  const bool unprivileged = absl::StrContains(s.message(), csi::kSkippedForPrivileges);
  std::string fix = absl::StrContains(s.message(), csi::kNoneTakesNewVolumes) ? "" : CauseFix(s);
  for (const auto& [left_out, its_fix] :
       {std::pair{suspended, kResumeDatastores}, std::pair{unprivileged, kGrantDatastores}}) {
    if (left_out) absl::StrAppend(&fix, fix.empty() ? "" : "; or ", its_fix);
  }
  return fix;
}

// The fix for a CreateVolume error, by its code.
std::string CauseFix(const absl::Status& s) {
  if (s.code() == absl::StatusCode::kFailedPrecondition &&
      absl::StrContains(s.message(), "file volume")) {
    return "enable vSAN File Service on a vSAN cluster the node VMs' hosts belong to (vSphere "
           "Client: cluster > Configure > vSAN > Services > File Service), with NFSv4.1 "
           "shares; or use ReadWriteOnce claims";
  }
  switch (s.code()) {
    case absl::StatusCode::kInvalidArgument:
      return "correct the StorageClass parameters (a StorageClass cannot be edited: create a "
             "fixed one and use it in new claims)";
    case absl::StatusCode::kFailedPrecondition:
    case absl::StatusCode::kResourceExhausted:
      return "mount a datastore on every host that runs a node VM (or every host of the "
             "requested zone), or name such a datastore (or policy) in the StorageClass";
    case absl::StatusCode::kUnavailable:
      return "the controller's view of vCenter was not complete: fix the vCenter errors above "
             "and run diagnose again";
    default:
      return "see the message; the controller's log has the same line for each attempt";
  }
}

std::string Where(const CreateVerdict& v) {
  if (v.datastores.empty()) return "no datastore";
  if (v.datastores.size() == 1) return v.datastores.front();
  return absl::StrCat(v.datastores.front(), " (", v.datastores.size(), " datastores qualify)");
}

void JudgeClass(const StorageClassFacts& c, Report& report) {
  const std::string check = absl::StrCat("storageclass ", c.name);
  if (!c.unknown_topology.empty()) {
    report.Error(check,
                 absl::StrCat("allowedTopologies ", absl::StrJoin(c.unknown_topology, ", "),
                              ": no Node has it"),
                 "use the topology labels the Nodes carry (kubectl get nodes --show-labels); "
                 "the CPI sets zone and region from the vSphere tags");
  }
  if (!c.verdict) {
    report.Warn(check, "not checked: the controller's view of vCenter was not loaded",
                "fix the vCenter errors above");
  } else if (!c.verdict->status.ok()) {
    report.Error(check, absl::StrCat("CreateVolume would fail: ", c.verdict->status.message()),
                 CreateFix(c.verdict->status));
  } else if (c.unknown_topology.empty()) {
    report.Ok(check, absl::StrCat("a 1 GiB volume would go to ", Where(*c.verdict)));
  }
}

void JudgeClaim(const PvcFacts& p, Report& report) {
  const std::string check = absl::StrCat("pvc ", p.name);
  const std::string head =
      absl::StrCat("Pending for ", Seconds(p.age), " (StorageClass ", p.storage_class, ")");
  if (p.waiting_for_consumer) {
    report.Ok(check, absl::StrCat(head, ": waits for a Pod to use it (WaitForFirstConsumer)"));
  } else if (!p.verdict) {
    report.Warn(check, absl::StrCat(head, "; not checked: the controller's view was not loaded"),
                "fix the vCenter errors above");
  } else if (!p.verdict->status.ok()) {
    report.Error(check,
                 absl::StrCat(head, ": CreateVolume would fail: ", p.verdict->status.message()),
                 CreateFix(p.verdict->status));
  } else if (p.age < kStuckAfter) {
    report.Ok(check, absl::StrCat(head, ": being provisioned, on ", Where(*p.verdict)));
  } else {
    report.Warn(check,
                absl::StrCat(head, " though CreateVolume would place it on ", Where(*p.verdict),
                             p.last_failure.empty()
                                 ? ""
                                 : absl::StrCat("; last ProvisioningFailed: ", p.last_failure)),
                "check that csi-provisioner runs beside the controller and names "
                "csi.vsphere.vmware.com (its log names the claim)");
  }
}

// Whether the attachment is well; a line when not.
bool JudgeAttachment(const AttachmentFacts& a, Report& report) {
  constexpr char kCheck[] = "volumeattachments";
  const std::string head = absl::StrCat(a.name, " (", a.pv, " on Node ", a.node, ")");
  if (!a.node_exists) {
    report.Error(kCheck, absl::StrCat(head, ": the Node no longer exists"),
                 "if its VM is gone, check in vCenter that the disk is not attached elsewhere, "
                 "then remove the VolumeAttachment's finalizer; otherwise recreate the Node");
    return false;
  }
  if (a.deleting_for && *a.deleting_for >= kStuckAfter) {
    report.Error(kCheck,
                 absl::StrCat(head, ": detaching for ", Seconds(*a.deleting_for), ": ",
                              a.detach_error.empty() ? "no error reported" : a.detach_error),
                 "check csi-attacher's and the controller's logs; a VM that is gone or "
                 "unreachable in vCenter keeps its disks until it is back");
    return false;
  }
  if (!a.attached && !a.attach_error.empty()) {
    report.Error(kCheck, absl::StrCat(head, ": not attached: ", a.attach_error),
                 "the message is ControllerPublishVolume's: fix what it names");
    return false;
  }
  if (!a.attached && a.age >= kStuckAfter) {
    report.Warn(kCheck, absl::StrCat(head, ": not attached after ", Seconds(a.age), ", no error"),
                "check that csi-attacher runs beside the controller (its log names the "
                "VolumeAttachment)");
    return false;
  }
  return true;
}

}  // namespace

std::vector<std::string> TopologyNoNodeHas(
    const std::vector<TopologyTerm>& allowed,
    const std::vector<std::vector<std::pair<std::string, std::string>>>& node_labels) {
  std::set<std::string> keys;
  std::set<std::pair<std::string, std::string>> pairs;
  for (const auto& labels : node_labels) {
    for (const auto& kv : labels) {
      keys.insert(kv.first);
      pairs.insert(kv);
    }
  }
  std::vector<std::string> out;
  for (const TopologyTerm& term : allowed) {
    for (const auto& [key, values] : term) {
      if (!keys.contains(key)) {
        out.push_back(key);
        continue;
      }
      for (const std::string& v : values) {
        if (!pairs.contains({key, v})) out.push_back(absl::StrCat(key, "=", v));
      }
    }
  }
  return out;
}

void JudgeStorageClasses(const std::vector<StorageClassFacts>& classes, Report& report) {
  if (classes.empty()) {
    report.Ok("storageclasses", "no StorageClass names csi.vsphere.vmware.com as provisioner");
  }
  for (const StorageClassFacts& c : classes) JudgeClass(c, report);
}

void JudgePvcs(const std::vector<PvcFacts>& claims, Report& report) {
  if (claims.empty()) report.Ok("pvcs", "no claim of the driver is Pending");
  for (const PvcFacts& p : claims) JudgeClaim(p, report);
}

void JudgeAttachments(const std::vector<AttachmentFacts>& attachments, Report& report) {
  size_t healthy = 0;
  for (const AttachmentFacts& a : attachments) healthy += JudgeAttachment(a, report) ? 1 : 0;
  if (healthy == attachments.size()) {
    report.Ok("volumeattachments",
              absl::StrCat(attachments.size(), " VolumeAttachment",
                           attachments.size() == 1 ? "" : "s", " of the driver, none stuck"));
  }
}

}  // namespace ccm::diagnose
