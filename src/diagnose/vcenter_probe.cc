#include "diagnose/vcenter_probe.h"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "cloud/vsphere/vcenter.h"
#include "diagnose/net_probe.h"
#include "vsphere/client.h"
#include "vsphere/datacenter.h"
#include "vsphere/property_collector.h"
#include "vsphere/soap.h"
#include "vsphere/tagging.h"

namespace ccm::diagnose {
namespace {

using vsphere::Client;
using vsphere::Moref;

// DNS, TCP, the server's thumbprint and TLS as configured; false when a step failed.
bool ProbeConnection(const cloud::VirtualCenterConfig& vc, Client& client, absl::Duration timeout,
                     VcenterFacts& f) {
  absl::StatusOr<std::vector<std::string>> addrs = Resolve(vc.server);
  f.dns = addrs.status();
  if (!addrs.ok()) return false;
  f.addresses = *addrs;
  f.tcp = TcpConnect(vc.server, vc.port, timeout);
  if (!f.tcp->ok()) return false;
  absl::StatusOr<std::string> thumb = ServerThumbprint(vc.server, vc.port, timeout);
  if (thumb.ok()) f.server_thumbprint = *thumb;
  absl::Status probe = client.Probe(timeout);
  f.tls = probe.code() == absl::StatusCode::kFailedPrecondition ? probe : absl::OkStatus();
  if (!f.tls->ok()) return false;
  if (!probe.ok()) {
    f.credentials = absl::OkStatus();
    f.login =
        absl::UnavailableError(absl::StrCat("vCenter's API does not answer: ", probe.message()));
    return false;
  }
  return true;
}

// Credentials, login and what the server says it is; false when a step failed.
bool ProbeLogin(const cloud::VirtualCenterConfig& vc, vsphere::CredentialSource& creds,
                Client& client, VcenterFacts& f) {
  absl::StatusOr<vsphere::Credentials> c = creds.Get(vc.server);
  f.credentials = c.status();
  if (!c.ok()) return false;
  f.user = c->username;
  f.login = client.Login();
  if (!f.login->ok()) return false;
  absl::StatusOr<vsphere::ServiceContent> sc = client.GetServiceContent();
  if (sc.ok()) {
    f.api_version = sc->api_version;
    f.full_name = sc->full_name;
  }
  return true;
}

std::vector<vsphere::Datacenter> ProbeDatacenters(const cloud::VirtualCenterConfig& vc,
                                                  Client& client, VcenterFacts& f) {
  absl::StatusOr<std::vector<vsphere::Datacenter>> all = vsphere::ListDatacenters(client);
  f.datacenters = all.status();
  if (!all.ok()) return {};
  for (const vsphere::Datacenter& dc : *all) f.datacenter_paths.push_back(dc.path);
  if (vc.datacenters.empty()) return *all;
  std::vector<vsphere::Datacenter> used;
  for (const std::string& spec : vc.datacenters) {
    absl::StatusOr<vsphere::Datacenter> dc = vsphere::SelectDatacenter(*all, spec);
    f.datacenter_matches.push_back({spec, dc.status(), dc.ok() ? dc->path : ""});
    if (dc.ok()) used.push_back(*dc);
  }
  return used;
}

// Sessions of the logged-in user; returns the session's user name as vCenter spells it.
std::string ProbeSessions(Client& client, VcenterFacts& f) {
  absl::StatusOr<vsphere::ServiceContent> sc = client.GetServiceContent();
  if (!sc.ok()) {
    f.sessions = sc.status();
    return f.user;
  }
  absl::StatusOr<std::vector<vsphere::ObjectContent>> got = vsphere::RetrieveProperties(
      client, {{{"SessionManager", {"currentSession", "sessionList"}}}, {{sc->session_manager}}});
  f.sessions = got.status();
  if (!got.ok() || got->empty()) return f.user;
  const vsphere::ObjectContent& sm = got->front();
  std::string me = vsphere::ChildText(sm.Get("currentSession"), "userName");
  for (const pugi::xml_node& s : vsphere::Children(sm.Get("sessionList"), "UserSession")) {
    ++f.all_sessions;
    if (vsphere::ChildText(s, "userName") == me) ++f.user_sessions;
  }
  if (!sm.missing.empty() && f.all_sessions == 0) {
    f.sessions = absl::PermissionDeniedError(sm.missing.front().message);
  }
  return me.empty() ? f.user : me;
}

struct Named {
  std::string kind, name;
};

// Hosts, node VMs and (for the CSI driver) datastores below the datacenters, keyed by moref.
void CollectEntities(Client& client, Component component,
                     const std::vector<vsphere::Datacenter>& dcs,
                     const std::set<std::string>& node_uuids, std::map<Moref, Named>& out) {
  for (const vsphere::Datacenter& dc : dcs) {
    out[dc.moref] = {kDatacenterKind, dc.path};
    // With several datacenters, names are not unique ("datastore1" in each): say which.
    auto Qualified = [&](const vsphere::ObjectContent& o) {
      return dcs.size() > 1 ? absl::StrCat(dc.name, "/", o.GetText("name")) : o.GetText("name");
    };
    for (const auto& [type, kind] :
         {std::pair{"Datastore", kDatastoreKind}, std::pair{"HostSystem", kHostKind}}) {
      if (component == Component::kCpi && kind == kDatastoreKind) continue;  // not needed
      auto objs = vsphere::RetrieveAllOfType(client, type, {"name"}, {}, dc.moref);
      if (!objs.ok()) continue;
      for (const vsphere::ObjectContent& o : *objs) out[o.obj] = {kind, Qualified(o)};
    }
    if (node_uuids.empty()) continue;
    auto vms =
        vsphere::RetrieveAllOfType(client, "VirtualMachine", {"name", "config.uuid"}, {}, dc.moref);
    if (!vms.ok()) continue;
    for (const vsphere::ObjectContent& o : *vms) {
      if (node_uuids.count(absl::AsciiStrToLower(o.GetText("config.uuid")))) {
        out[o.obj] = {kNodeVmKind, Qualified(o)};
      }
    }
  }
}

// AuthorizationManager.FetchUserPrivilegeOnEntities for every object, in one call.
absl::StatusOr<std::vector<EntityPrivileges>> FetchPrivileges(
    Client& client, const std::string& user, const std::map<Moref, Named>& entities) {
  absl::StatusOr<vsphere::ServiceContent> sc = client.GetServiceContent();
  if (!sc.ok()) return sc.status();
  std::string args = vsphere::MorefXml("_this", sc->authorization_manager);
  for (const auto& [ref, named] : entities) args += vsphere::MorefXml("entities", ref);
  args += vsphere::TextXml("userName", user);
  absl::StatusOr<vsphere::SoapResponse> r = client.Call("FetchUserPrivilegeOnEntities", args);
  if (!r.ok()) return r.status();
  std::vector<EntityPrivileges> out;
  for (const pugi::xml_node& rv : vsphere::Children(r->body, "returnval")) {
    auto it = entities.find(vsphere::ParseMoref(vsphere::Child(rv, "entity")));
    if (it == entities.end()) continue;
    EntityPrivileges e{it->second.kind, it->second.name, {}};
    for (const pugi::xml_node& p : vsphere::Children(rv, "privileges")) {
      e.granted.push_back(p.text().get());
    }
    out.push_back(std::move(e));
  }
  return out;
}

// The configured tag categories, and the tags of the datacenters, clusters and hosts, through
// the component's own REST tagging client.
ZoneFacts ProbeZones(const cloud::VirtualCenterConfig& vc, vsphere::CredentialSource& creds,
                     const vsphere::ClientOptions& co, Client& client,
                     const std::vector<vsphere::Datacenter>& dcs,
                     const std::vector<std::string>& categories) {
  ZoneFacts f;
  f.wanted = categories;
  vsphere::TaggingOptions to;
  to.server = vc.server;
  to.url = co.url;
  to.http.tls = co.tls;
  to.http.connect_timeout = co.connect_timeout;
  to.http.timeout = co.timeout;
  vsphere::TaggingClient tagging(to, creds);
  absl::StatusOr<std::vector<vsphere::TagCategory>> all = tagging.ListCategories();
  f.listed = all.status();
  if (!all.ok()) return f;
  for (const vsphere::TagCategory& c : *all) f.existing.push_back(c.name);
  std::vector<Moref> refs;
  for (const vsphere::Datacenter& dc : dcs) {
    f.entities.push_back({"datacenter", dc.path, {}});
    refs.push_back(dc.moref);
    for (const auto& [type, kind] :
         {std::pair{"ClusterComputeResource", "cluster"}, std::pair{"HostSystem", kHostKind}}) {
      auto objs = vsphere::RetrieveAllOfType(client, type, {"name"}, {}, dc.moref);
      if (!objs.ok()) continue;
      for (const vsphere::ObjectContent& o : *objs) {
        f.entities.push_back({kind, absl::StrCat(dc.name, "/", o.GetText("name")), {}});
        refs.push_back(o.obj);
      }
    }
  }
  absl::StatusOr<std::vector<vsphere::ObjectTags>> tags = tagging.ListAttachedTags(refs);
  f.attached = tags.status();
  for (size_t i = 0; tags.ok() && i < tags->size() && i < f.entities.size(); ++i) {
    for (const vsphere::Tag& t : (*tags)[i].tags) {
      f.entities[i].tags.emplace_back(t.category_name, t.name);
    }
  }
  return f;
}

}  // namespace

bool CheckVcenter(const cloud::VirtualCenterConfig& vc, vsphere::CredentialSource& creds,
                  const VcenterCheckOptions& options, Report& report) {
  vsphere::ClientOptions co = cloud::ClientOptionsFor(vc);
  co.connect_timeout = options.timeout;
  co.timeout = options.timeout;
  co.soap_roundtrip_count = 1;
  Client client(co, &creds);
  VcenterFacts f;
  std::vector<vsphere::Datacenter> dcs;
  std::string user;
  const bool in =
      ProbeConnection(vc, client, options.timeout, f) && ProbeLogin(vc, creds, client, f);
  if (in) {
    dcs = ProbeDatacenters(vc, client, f);
    user = ProbeSessions(client, f);
  }
  JudgeVcenter(vc, f, options.component, report);
  if (!in || !f.datacenters->ok()) return false;
  std::set<std::string> uuids;
  for (const std::string& u : options.node_vm_uuids) uuids.insert(absl::AsciiStrToLower(u));
  std::map<Moref, Named> entities;
  absl::StatusOr<vsphere::ServiceContent> sc = client.GetServiceContent();
  if (sc.ok()) entities[sc->root_folder] = {kRootFolder, "/"};
  CollectEntities(client, options.component, dcs, uuids, entities);
  absl::StatusOr<std::vector<EntityPrivileges>> privs = FetchPrivileges(client, user, entities);
  JudgePrivileges(options.component, vc.label, user, privs.status(),
                  privs.ok() ? *privs : std::vector<EntityPrivileges>{}, report,
                  options.file_volumes);
  if (!options.tag_categories.empty()) {
    JudgeZones(vc.label, ProbeZones(vc, creds, co, client, dcs, options.tag_categories), report);
  }
  // A configured datacenter that is not there fails the component's own inventory too.
  return std::all_of(f.datacenter_matches.begin(), f.datacenter_matches.end(),
                     [](const DatacenterMatch& m) { return m.status.ok(); });
}

}  // namespace ccm::diagnose
