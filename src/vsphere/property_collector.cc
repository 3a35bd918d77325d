#include "vsphere/property_collector.h"

#include <set>

#include "absl/strings/str_cat.h"
#include "common/logging.h"
#include "common/status_macros.h"

namespace ccm::vsphere {
namespace {

std::string TraversalXml(const TraversalSpec& t) {
  std::string out = absl::StrCat("<selectSet xsi:type=\"TraversalSpec\">", TextXml("name", t.name),
                                 TextXml("type", t.type), TextXml("path", t.path),
                                 TextXml("skip", t.skip ? "true" : "false"));
  for (const std::string& s : t.select) {
    absl::StrAppend(&out, "<selectSet>", TextXml("name", s), "</selectSet>");
  }
  absl::StrAppend(&out, "</selectSet>");
  return out;
}

}  // namespace

std::string PropertyFilterSpecXml(const PropertyFilterSpec& spec, absl::string_view tag) {
  std::string out = absl::StrCat("<", tag, ">");
  for (const PropertySpec& p : spec.prop_set) {
    absl::StrAppend(&out, "<propSet>", TextXml("type", p.type),
                    TextXml("all", p.all ? "true" : "false"));
    for (const std::string& path : p.paths) absl::StrAppend(&out, TextXml("pathSet", path));
    absl::StrAppend(&out, "</propSet>");
  }
  for (const ObjectSpec& o : spec.object_set) {
    absl::StrAppend(&out, "<objectSet>", MorefXml("obj", o.obj),
                    TextXml("skip", o.skip ? "true" : "false"));
    for (const TraversalSpec& t : o.select_set) absl::StrAppend(&out, TraversalXml(t));
    absl::StrAppend(&out, "</objectSet>");
  }
  absl::StrAppend(&out, "</", tag, ">");
  return out;
}

pugi::xml_node ObjectContent::Get(absl::string_view path) const {
  for (const PropertyValue& p : props) {
    if (p.path == path) return p.val;
  }
  return pugi::xml_node();
}

std::string ObjectContent::GetText(absl::string_view path) const { return Get(path).child_value(); }

Moref ObjectContent::GetMoref(absl::string_view path) const { return ParseMoref(Get(path)); }

RetrievePage ParseRetrieveResult(std::shared_ptr<const pugi::xml_document> doc,
                                 const pugi::xml_node& returnval) {
  RetrievePage page;
  page.token = ChildText(returnval, "token");
  for (const pugi::xml_node& o : Children(returnval, "objects")) {
    ObjectContent oc;
    oc.obj = ParseMoref(Child(o, "obj"));
    oc.doc = doc;
    for (const pugi::xml_node& p : Children(o, "propSet")) {
      oc.props.push_back({ChildText(p, "name"), Child(p, "val")});
    }
    for (const pugi::xml_node& m : Children(o, "missingSet")) {
      pugi::xml_node f = Child(m, "fault");
      oc.missing.push_back(
          {ChildText(m, "path"), XsiType(Child(f, "fault")), ChildText(f, "localizedMessage")});
    }
    page.objects.push_back(std::move(oc));
  }
  return page;
}

absl::StatusOr<std::vector<ObjectContent>> RetrieveProperties(Client& client,
                                                              const PropertyFilterSpec& spec,
                                                              RetrieveOptions options) {
  CCM_ASSIGN_OR_RETURN(ServiceContent sc, client.GetServiceContent());
  std::string args = absl::StrCat(MorefXml("_this", sc.property_collector),
                                  PropertyFilterSpecXml(spec), "<options>");
  if (options.max_objects > 0)
    absl::StrAppend(&args, TextXml("maxObjects", absl::StrCat(options.max_objects)));
  absl::StrAppend(&args, "</options>");
  CCM_ASSIGN_OR_RETURN(SoapResponse r, client.Call("RetrievePropertiesEx", args));
  RetrievePage page = ParseRetrieveResult(r.doc, r.returnval());
  std::vector<ObjectContent> out = std::move(page.objects);
  std::set<std::string> seen_tokens;
  while (!page.token.empty()) {
    if (!seen_tokens.insert(page.token).second) {
      return absl::InternalError(
          absl::StrCat("ContinueRetrievePropertiesEx: token ", page.token, " repeated"));
    }
    CCM_ASSIGN_OR_RETURN(SoapResponse next,
                         client.Call("ContinueRetrievePropertiesEx",
                                     absl::StrCat(MorefXml("_this", sc.property_collector),
                                                  TextXml("token", page.token))));
    page = ParseRetrieveResult(next.doc, next.returnval());
    for (ObjectContent& o : page.objects) out.push_back(std::move(o));
  }
  return out;
}

absl::StatusOr<Moref> CreateContainerView(Client& client, const Moref& container,
                                          const std::vector<std::string>& types, bool recursive) {
  CCM_ASSIGN_OR_RETURN(ServiceContent sc, client.GetServiceContent());
  if (sc.view_manager.empty()) return absl::UnimplementedError("vCenter has no ViewManager");
  std::string args =
      absl::StrCat(MorefXml("_this", sc.view_manager), MorefXml("container", container));
  for (const std::string& t : types) absl::StrAppend(&args, TextXml("type", t));
  absl::StrAppend(&args, TextXml("recursive", recursive ? "true" : "false"));
  CCM_ASSIGN_OR_RETURN(SoapResponse r, client.Call("CreateContainerView", args));
  Moref view = ParseMoref(r.returnval());
  if (view.empty()) return absl::InternalError("CreateContainerView returned no view");
  return view;
}

std::string WaitForUpdatesExArgs(const Moref& collector, const std::string& version,
                                 int max_wait_seconds) {
  std::string args = MorefXml("_this", collector);
  if (!version.empty()) absl::StrAppend(&args, TextXml("version", version));
  if (max_wait_seconds > 0) {
    absl::StrAppend(&args, "<options>", TextXml("maxWaitSeconds", absl::StrCat(max_wait_seconds)),
                    "</options>");
  }
  return args;
}

absl::Status DestroyView(Client& client, const Moref& view) {
  return client.Call("DestroyView", MorefXml("_this", view)).status();
}

absl::StatusOr<std::vector<ObjectContent>> RetrieveAllOfType(Client& client,
                                                             const std::string& type,
                                                             const std::vector<std::string>& paths,
                                                             RetrieveOptions options,
                                                             Moref container) {
  if (container.empty()) {
    CCM_ASSIGN_OR_RETURN(ServiceContent sc, client.GetServiceContent());
    container = sc.root_folder;
  }
  CCM_ASSIGN_OR_RETURN(Moref view, CreateContainerView(client, container, {type}, true));
  PropertyFilterSpec spec;
  spec.prop_set.push_back({type, paths});
  spec.object_set.push_back({view, /*skip=*/true, {{"view", "ContainerView", "view", false, {}}}});
  absl::StatusOr<std::vector<ObjectContent>> out = RetrieveProperties(client, spec, options);
  absl::Status d = DestroyView(client, view);
  if (!d.ok()) VLOG(1, "DestroyView {}: {}", view.value, d);
  return out;
}

absl::StatusOr<RetrieveObjectsResult> RetrieveObjects(Client& client,
                                                      const std::vector<Moref>& objs,
                                                      const std::vector<PropertySpec>& props,
                                                      RetrieveOptions options) {
  RetrieveObjectsResult result;
  std::vector<Moref> remaining = objs;
  // Each ManagedObjectNotFound removes one object, so this ends; bound it anyway.
  for (size_t round = 0; round <= objs.size(); ++round) {
    if (remaining.empty()) return result;
    PropertyFilterSpec spec;
    spec.prop_set = props;
    for (const Moref& m : remaining) spec.object_set.push_back({m});
    absl::StatusOr<std::vector<ObjectContent>> r = RetrieveProperties(client, spec, options);
    if (r.ok()) {
      std::set<Moref> returned;
      for (const ObjectContent& o : *r) returned.insert(o.obj);
      // Objects deleted between listing and retrieval may also just be absent from the answer.
      for (const Moref& m : remaining) {
        if (!returned.count(m)) result.not_found.push_back(m);
      }
      result.objects = std::move(*r);
      return result;
    }
    std::optional<Moref> missing = MissingObjectOf(r.status());
    if (!missing) return r.status();
    size_t before = remaining.size();
    std::erase(remaining, *missing);
    if (remaining.size() == before) return r.status();  // not one of ours: a real error
    result.not_found.push_back(*missing);
  }
  return absl::InternalError("RetrieveObjects: too many ManagedObjectNotFound rounds");
}

void CancelWaitsUntilExited(Client& client, const std::function<Moref()>& waiting,
                            const absl::Notification& exited, absl::string_view log_name,
                            absl::Duration every) {
  while (!exited.HasBeenNotified()) {
    const Moref collector = waiting();
    if (!collector.empty()) {
      auto r = client.Call("CancelWaitForUpdates", MorefXml("_this", collector));
      if (!r.ok()) VLOG(2, "{}: CancelWaitForUpdates: {}", log_name, r.status());
    }
    if (exited.WaitForNotificationWithTimeout(every)) return;
  }
}

}  // namespace ccm::vsphere
