#include "diagnose/privileges.h"

#include <algorithm>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace ccm::diagnose {
namespace {

constexpr char kRead[] = "System.Read";

std::string Names(const std::vector<std::string>& names) {
  constexpr size_t kShown = 5;
  if (names.size() <= kShown) return absl::StrJoin(names, ", ");
  std::vector<std::string> head(names.begin(), names.begin() + kShown);
  return absl::StrCat(absl::StrJoin(head, ", "), " and ", names.size() - kShown, " more");
}

std::string Labels(const std::vector<std::string>& ids) {
  std::vector<std::string> out;
  for (const std::string& id : ids) out.push_back(PrivilegeLabel(id));
  return absl::StrJoin(out, "; ");
}

// Objects of `need.kind` missing some of its privileges, grouped by what they miss.
std::map<std::vector<std::string>, std::vector<std::string>> Missing(
    const PrivilegeNeed& need, const std::vector<EntityPrivileges>& entities) {
  std::map<std::vector<std::string>, std::vector<std::string>> by_missing;
  for (const EntityPrivileges& e : entities) {
    if (e.kind != need.kind) continue;
    std::set<std::string> have(e.granted.begin(), e.granted.end());
    std::vector<std::string> missing;
    for (const std::string& p : need.privileges) {
      if (!have.count(p)) missing.push_back(p);
    }
    if (!missing.empty()) by_missing[missing].push_back(e.name);
  }
  return by_missing;
}

std::string Counts(const std::vector<EntityPrivileges>& entities) {
  std::map<std::string, int> n;
  for (const EntityPrivileges& e : entities) ++n[e.kind];
  std::vector<std::string> parts;
  for (const char* k : {kRootFolder, kDatacenterKind, kDatastoreKind, kHostKind, kNodeVmKind}) {
    if (n[k] == 0) continue;
    parts.push_back(n[k] == 1 ? absl::StrCat("1 ", k) : absl::StrCat(n[k], " ", k, "s"));
  }
  return absl::StrJoin(parts, ", ");
}

}  // namespace

std::vector<PrivilegeNeed> RequiredPrivileges(Component component, bool file_volumes) {
  std::vector<PrivilegeNeed> needs;
  if (component == Component::kCpi) {
    for (const char* kind : {kRootFolder, kDatacenterKind, kHostKind, kNodeVmKind}) {
      needs.push_back({kind, {kRead}, "Read-only (propagated)"});
    }
    return needs;
  }
  needs.push_back({kRootFolder,
                   {kRead, "Cns.Searchable", "StorageProfile.View"},
                   "CNS-SEARCH-AND-SPBM and Read-only"});
  needs.push_back({kDatacenterKind, {kRead}, "Read-only"});
  needs.push_back({kDatastoreKind, {"Datastore.FileManagement"}, "CNS-DATASTORE"});
  needs.push_back({kHostKind, {kRead}, "Read-only"});
  needs.push_back({kHostKind,
                   {"Host.Config.Storage"},
                   "CNS-HOST-CONFIG-STORAGE",
                   !file_volumes,
                   "vSAN file service volumes (ReadWriteMany / ReadOnlyMany)"});
  needs.push_back(
      {kNodeVmKind,
       {"VirtualMachine.Config.AddExistingDisk", "VirtualMachine.Config.AddRemoveDevice"},
       "CNS-VM"});
  return needs;
}

void JudgePrivileges(Component component, const std::string& vcenter_label, const std::string& user,
                     const absl::Status& fetched, const std::vector<EntityPrivileges>& entities,
                     Report& report, bool file_volumes) {
  const std::string check = absl::StrCat("privileges ", vcenter_label);
  if (!fetched.ok()) {
    report.Warn(check,
                absl::StrCat("cannot read the privileges of ", user, ": ", fetched.message()),
                "nothing to fix for the component; the user needs System.View to read them");
    return;
  }
  bool all = true;
  for (const PrivilegeNeed& need : RequiredPrivileges(component, file_volumes)) {
    for (const auto& [missing, names] : Missing(need, entities)) {
      all = false;
      std::string line = absl::StrCat(user, " lacks ", absl::StrJoin(missing, ", "), " on ",
                                      need.kind, " ", Names(names));
      std::string fix = absl::StrCat("grant the role ", need.role, " (", Labels(missing), ") to ",
                                     user, " on ", names.size() == 1 ? "it" : "them");
      if (need.optional) {
        report.Warn(check, absl::StrCat(line, ", needed for ", need.why), fix);
      } else {
        report.Error(check, need.why.empty() ? line : absl::StrCat(line, ", needed for ", need.why),
                     fix);
      }
    }
  }
  if (all) {
    report.Ok(check, absl::StrCat(user, " has every privilege the ",
                                  component == Component::kCpi ? "CPI" : "CSI driver", " needs on ",
                                  Counts(entities)));
  }
}

std::string PrivilegeLabel(const std::string& id) {
  static const std::map<std::string, std::string> kLabels = {
      {"System.Read", "Read-only"},
      {"Cns.Searchable", "Cns > Searchable"},
      {"StorageProfile.View", "Profile-driven storage > Profile-driven storage view"},
      {"Datastore.FileManagement", "Datastore > Low level file operations"},
      {"Host.Config.Storage", "Host > Configuration > Storage partition configuration"},
      {"VirtualMachine.Config.AddExistingDisk",
       "Virtual machine > Change Configuration > Add existing disk"},
      {"VirtualMachine.Config.AddRemoveDevice",
       "Virtual machine > Change Configuration > Add or remove device"},
  };
  auto it = kLabels.find(id);
  return it == kLabels.end() ? id : it->second;
}

}  // namespace ccm::diagnose
