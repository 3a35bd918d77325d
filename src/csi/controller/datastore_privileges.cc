#include "csi/controller/datastore_privileges.h"

#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "vsphere/soap.h"

namespace ccm::csi {

std::map<vsphere::Moref, std::vector<std::string>> MissingBlockVolumePrivileges(
    const vsphere::SoapResponse& answer, const std::vector<vsphere::Moref>& entities) {
  std::map<vsphere::Moref, std::set<std::string>> granted;
  for (const pugi::xml_node& rv : vsphere::Children(answer.body, "returnval")) {
    std::set<std::string>& g = granted[vsphere::ParseMoref(vsphere::Child(rv, "entity"))];
    for (const pugi::xml_node& p : vsphere::Children(rv, "privileges")) g.insert(p.text().get());
  }
  std::map<vsphere::Moref, std::vector<std::string>> out;
  for (const vsphere::Moref& e : entities) {
    std::vector<std::string>& missing = out[e];
    const std::set<std::string>& g = granted[e];
    for (const char* p : kBlockVolumePrivileges) {
      if (!g.count(p)) missing.push_back(p);
    }
  }
  return out;
}

absl::StatusOr<std::map<vsphere::Moref, std::string>> CheckDatastorePrivileges(
    vsphere::Client& client, const std::string& user,
    const std::vector<vsphere::Moref>& datastores) {
  std::map<vsphere::Moref, std::string> out;
  if (datastores.empty()) return out;
  absl::StatusOr<vsphere::ServiceContent> sc = client.GetServiceContent();
  if (!sc.ok()) return sc.status();
  std::string args = vsphere::MorefXml("_this", sc->authorization_manager);
  for (const vsphere::Moref& ds : datastores) args += vsphere::MorefXml("entities", ds);
  args += vsphere::TextXml("userName", user);
  absl::StatusOr<vsphere::SoapResponse> r = client.Call("FetchUserPrivilegeOnEntities", args);
  if (!r.ok()) return r.status();
  for (const auto& [ds, missing] : MissingBlockVolumePrivileges(*r, datastores)) {
    out[ds] = missing.empty()
                  ? ""
                  : absl::StrCat("user ", user, " lacks ", absl::StrJoin(missing, " and "));
  }
  return out;
}

}  // namespace ccm::csi
