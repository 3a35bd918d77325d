#pragma once
// diagnose, third group: the configured user's privileges on the objects each component works
// on, against the roles VMware documents (the CPI: read-only; the CSI driver: CNS-DATASTORE,
// CNS-HOST-CONFIG-STORAGE, CNS-VM, CNS-SEARCH-AND-SPBM and read-only). The I/O side fetches
// what the user has on each object (AuthorizationManager.FetchUserPrivilegeOnEntities, one
// call); this file lists what is missing where. Pure.

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "diagnose/report.h"
#include "diagnose/vcenter_checks.h"

namespace ccm::diagnose {

// The kinds of object checked, as the report names them.
inline constexpr char kRootFolder[] = "root folder";
inline constexpr char kDatacenterKind[] = "datacenter";
inline constexpr char kDatastoreKind[] = "datastore";
inline constexpr char kHostKind[] = "host";
inline constexpr char kNodeVmKind[] = "node VM";

struct PrivilegeNeed {
  std::string kind;  // one of the kinds above
  std::vector<std::string> privileges;
  std::string role;       // VMware's documented role that grants them
  bool optional = false;  // only for a feature not everyone uses: a warning
  std::string why;        // for an optional need
};
// `file_volumes`: the CSI driver serves file volumes here (configured, or claimed): the host
// storage privilege they need is then required, not optional.
std::vector<PrivilegeNeed> RequiredPrivileges(Component component, bool file_volumes = false);

struct EntityPrivileges {
  std::string kind;
  std::string name;
  std::vector<std::string> granted;
};

// `fetched` is the result of reading the privileges; `entities` what was read.
void JudgePrivileges(Component component, const std::string& vcenter_label, const std::string& user,
                     const absl::Status& fetched, const std::vector<EntityPrivileges>& entities,
                     Report& report, bool file_volumes = false);

// The vSphere client's name of a privilege ("Datastore > Low level file operations"), or the ID.
std::string PrivilegeLabel(const std::string& id);

}  // namespace ccm::diagnose
