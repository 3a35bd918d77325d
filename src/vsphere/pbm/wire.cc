#include "vsphere/pbm/wire.h"

#include "absl/strings/str_cat.h"
#include "vsphere/soap.h"

namespace ccm::vsphere::pbm {

std::string RetrieveServiceContentArgs() { return MorefXml("_this", ServiceInstance()); }

std::string QueryProfileArgs(const Moref& profile_manager) {
  return absl::StrCat(MorefXml("_this", profile_manager),
                      "<resourceType><resourceType>STORAGE</resourceType></resourceType>");
}

std::string RetrieveContentArgs(const Moref& profile_manager, const std::vector<std::string>& ids) {
  std::string out = MorefXml("_this", profile_manager);
  for (const std::string& id : ids) {
    absl::StrAppend(&out, "<profileIds>", TextXml("uniqueId", id), "</profileIds>");
  }
  return out;
}

std::string CheckCompatibilityArgs(const Moref& placement_solver, const std::vector<Moref>& hubs,
                                   const std::string& profile_id) {
  std::string out = MorefXml("_this", placement_solver);
  for (const Moref& h : hubs) {
    absl::StrAppend(&out, "<hubsToSearch>", TextXml("hubType", h.type), TextXml("hubId", h.value),
                    "</hubsToSearch>");
  }
  absl::StrAppend(&out, "<profile>", TextXml("uniqueId", profile_id), "</profile>");
  return out;
}

absl::StatusOr<ServiceContent> ParseServiceContent(const pugi::xml_node& body) {
  pugi::xml_node rv = Child(body, "returnval");
  ServiceContent sc;
  sc.profile_manager = ParseMoref(Child(rv, "profileManager"));
  sc.placement_solver = ParseMoref(Child(rv, "placementSolver"));
  if (sc.profile_manager.empty() || sc.placement_solver.empty()) {
    return absl::InternalError(
        "PbmRetrieveServiceContent: the answer names no profileManager or placementSolver");
  }
  return sc;
}

std::vector<std::string> ParseProfileIds(const pugi::xml_node& body) {
  std::vector<std::string> out;
  for (const pugi::xml_node& rv : Children(body, "returnval")) {
    std::string id = ChildText(rv, "uniqueId");
    if (!id.empty()) out.push_back(std::move(id));
  }
  return out;
}

std::vector<Profile> ParseProfiles(const pugi::xml_node& body) {
  std::vector<Profile> out;
  for (const pugi::xml_node& rv : Children(body, "returnval")) {
    Profile p;
    p.id = ChildText(Child(rv, "profileId"), "uniqueId");
    p.name = ChildText(rv, "name");
    p.category = ChildText(rv, "profileCategory");
    if (!p.id.empty()) out.push_back(std::move(p));
  }
  return out;
}

std::vector<HubCompatibility> ParseCompatibility(const pugi::xml_node& body) {
  std::vector<HubCompatibility> out;
  for (const pugi::xml_node& rv : Children(body, "returnval")) {
    HubCompatibility h;
    pugi::xml_node hub = Child(rv, "hub");
    h.hub = Moref{ChildText(hub, "hubType"), ChildText(hub, "hubId")};
    if (h.hub.value.empty()) continue;
    std::vector<pugi::xml_node> errors = Children(rv, "error");
    h.compatible = errors.empty();
    if (!errors.empty()) {
      h.reason = ChildText(errors.front(), "localizedMessage");
      if (h.reason.empty()) h.reason = XsiType(Child(errors.front(), "fault"));
    }
    out.push_back(std::move(h));
  }
  return out;
}

}  // namespace ccm::vsphere::pbm
