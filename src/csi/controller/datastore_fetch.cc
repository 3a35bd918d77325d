#include "csi/controller/datastore_fetch.h"

#include <map>

#include "absl/strings/numbers.h"
#include "common/status_macros.h"
#include "vsphere/soap.h"

namespace ccm::csi {
namespace {

using vsphere::Child;
using vsphere::Children;
using vsphere::ChildText;
using vsphere::Moref;
using vsphere::ParseMoref;

bool NotFalse(const pugi::xml_node& n, absl::string_view child) {
  return ChildText(n, child) != "false";  // unset counts as true (vCenter omits defaults)
}

}  // namespace

absl::StatusOr<std::vector<vsphere::Datacenter>> WatchedDatacenters(
    vsphere::Client& client, const std::vector<std::string>& specs) {
  CCM_ASSIGN_OR_RETURN(std::vector<vsphere::Datacenter> all, vsphere::ListDatacenters(client));
  if (specs.empty()) return all;
  std::vector<vsphere::Datacenter> out;
  for (const std::string& spec : specs) {
    CCM_ASSIGN_OR_RETURN(vsphere::Datacenter dc, vsphere::SelectDatacenter(all, spec));
    out.push_back(std::move(dc));
  }
  return out;
}

absl::StatusOr<DatastoreFetch> FetchDatastores(
    vsphere::Client& client, const std::vector<vsphere::Datacenter>& datacenters) {
  if (datacenters.empty()) return DatastoreFetch();
  vsphere::PropertyFilterSpec spec;
  spec.prop_set = {
      {"Datacenter", {"datastore"}, false},
      {"Datastore",
       {"name", "summary.url", "summary.type", "summary.freeSpace", "summary.accessible",
        "summary.maintenanceMode", "host", "parent", "customValue"},
       false},
      {"HostSystem", {"name"}, false},
  };
  // Datacenter -> its datastores; Datacenter -> hostFolder -> (folders, recursively) -> compute
  // resources and clusters -> their hosts.
  const std::vector<vsphere::TraversalSpec> select = {
      {"dcToDatastore", "Datacenter", "datastore"},
      {"dcToHostFolder", "Datacenter", "hostFolder", false, {"folderToChild"}},
      {"folderToChild", "Folder", "childEntity", false, {"folderToChild", "computeToHost"}},
      {"computeToHost", "ComputeResource", "host"},
  };
  for (const vsphere::Datacenter& dc : datacenters) {
    spec.object_set.push_back({dc.moref, false, select});
  }
  CCM_ASSIGN_OR_RETURN(std::vector<vsphere::ObjectContent> objects,
                       vsphere::RetrieveProperties(client, spec));
  return ParseDatastores(objects, datacenters);
}

DatastoreFetch ParseDatastores(const std::vector<vsphere::ObjectContent>& objects,
                               const std::vector<vsphere::Datacenter>& datacenters) {
  std::map<Moref, std::string> dc_names;
  for (const vsphere::Datacenter& dc : datacenters) dc_names[dc.moref] = dc.name;
  std::map<Moref, std::string> datacenter_of;  // datastore -> datacenter name
  for (const vsphere::ObjectContent& oc : objects) {
    if (oc.obj.type != "Datacenter") continue;
    for (const pugi::xml_node& m : Children(oc.Get("datastore"), "ManagedObjectReference")) {
      datacenter_of.emplace(ParseMoref(m), dc_names[oc.obj]);
    }
  }
  DatastoreFetch out;
  std::map<Moref, bool> seen;
  for (const vsphere::ObjectContent& oc : objects) {
    if (oc.obj.type == "HostSystem" && !seen[oc.obj]) {
      seen[oc.obj] = true;
      out.hosts.push_back({oc.obj, oc.GetText("name")});
    }
    if (oc.obj.type != "Datastore" || seen[oc.obj]) continue;
    seen[oc.obj] = true;
    DatastoreRecord r;
    r.moref = oc.obj;
    r.datacenter = datacenter_of[oc.obj];
    r.name = oc.GetText("name");
    r.url = oc.GetText("summary.url");
    r.type = oc.GetText("summary.type");
    if (!absl::SimpleAtoi(oc.GetText("summary.freeSpace"), &r.free_bytes)) r.free_bytes = 0;
    const std::string maintenance = oc.GetText("summary.maintenanceMode");
    r.usable = oc.GetText("summary.accessible") != "false" &&
               (maintenance.empty() || maintenance == "normal");
    r.parent = oc.GetMoref("parent");
    for (const pugi::xml_node& v : Children(oc.Get("customValue"), "CustomFieldValue")) {
      r.suspended |= ChildText(v, "value") == kDatastoreSuspended;
    }
    for (const pugi::xml_node& mount : Children(oc.Get("host"), "DatastoreHostMount")) {
      pugi::xml_node info = Child(mount, "mountInfo");
      if (!NotFalse(info, "mounted") || !NotFalse(info, "accessible")) continue;
      r.hosts.push_back(ParseMoref(Child(mount, "key")));
    }
    out.datastores.push_back(std::move(r));
  }
  return out;
}

}  // namespace ccm::csi
