#include "vsphere/datacenter.h"

#include <map>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "common/status_macros.h"
#include "vsphere/property_collector.h"

namespace ccm::vsphere {

absl::StatusOr<std::vector<Datacenter>> ListDatacenters(Client& client) {
  CCM_ASSIGN_OR_RETURN(ServiceContent sc, client.GetServiceContent());
  PropertyFilterSpec spec;
  spec.prop_set = {{"Folder", {"name", "parent"}},
                   {"Datacenter", {"name", "parent", "vmFolder", "hostFolder"}}};
  spec.object_set.push_back(
      {sc.root_folder, false, {{"folders", "Folder", "childEntity", false, {"folders"}}}});
  absl::StatusOr<std::vector<ObjectContent>> objs = RetrieveProperties(client, spec);
  if (!objs.ok()) return Annotate(objs.status(), "list datacenters");
  struct Node {
    std::string name;
    Moref parent;
  };
  std::map<Moref, Node> nodes;
  for (const ObjectContent& o : *objs) nodes[o.obj] = {o.GetText("name"), o.GetMoref("parent")};
  std::vector<Datacenter> out;
  for (const ObjectContent& o : *objs) {
    if (o.obj.type != "Datacenter") continue;
    Datacenter dc{o.obj, o.GetText("name"), "", o.GetMoref("vmFolder"), o.GetMoref("hostFolder")};
    std::vector<std::string> parts = {dc.name};
    Moref p = o.GetMoref("parent");
    // Walk up to (not including) the root folder; bounded in case of a cycle.
    for (int depth = 0; depth < 64 && !p.empty() && !(p == sc.root_folder); ++depth) {
      auto it = nodes.find(p);
      if (it == nodes.end()) break;
      parts.insert(parts.begin(), it->second.name);
      p = it->second.parent;
    }
    dc.path = absl::StrCat("/", absl::StrJoin(parts, "/"));
    out.push_back(std::move(dc));
  }
  return out;
}

absl::StatusOr<Datacenter> SelectDatacenter(const std::vector<Datacenter>& all,
                                            absl::string_view spec) {
  spec = absl::StripAsciiWhitespace(spec);
  if (spec.empty()) return absl::InvalidArgumentError("empty datacenter name");
  absl::string_view moid = spec;
  bool explicit_moid = absl::ConsumePrefix(&moid, "Datacenter:");
  if (!explicit_moid && absl::StartsWith(spec, "/")) {
    for (const Datacenter& dc : all) {
      if (dc.path == spec) return dc;
    }
    return absl::NotFoundError(absl::StrCat("datacenter path ", spec, " not found"));
  }
  if (!explicit_moid) {
    std::vector<const Datacenter*> by_name;
    for (const Datacenter& dc : all) {
      if (dc.name == spec) by_name.push_back(&dc);
    }
    if (by_name.size() == 1) return *by_name[0];
    if (by_name.size() > 1) {
      return absl::InvalidArgumentError(absl::StrCat("datacenter name ", spec, " is ambiguous (",
                                                     by_name[0]->path, ", ", by_name[1]->path,
                                                     "): use the inventory path"));
    }
  }
  for (const Datacenter& dc : all) {
    if (dc.moref.value == moid) return dc;
  }
  return absl::NotFoundError(absl::StrCat("datacenter ", spec, " not found"));
}

absl::StatusOr<Datacenter> FindDatacenter(Client& client, absl::string_view spec) {
  CCM_ASSIGN_OR_RETURN(std::vector<Datacenter> all, ListDatacenters(client));
  return SelectDatacenter(all, spec);
}

absl::StatusOr<std::vector<std::string>> DatacenterPaths(
    Client& client, const std::vector<std::string>& configured) {
  if (!configured.empty()) return configured;
  CCM_ASSIGN_OR_RETURN(std::vector<Datacenter> all, ListDatacenters(client));
  std::vector<std::string> paths;
  for (const Datacenter& dc : all) paths.push_back(dc.path);
  return paths;
}

}  // namespace ccm::vsphere
