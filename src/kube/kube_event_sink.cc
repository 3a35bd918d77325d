#include "kube/kube_event_sink.h"

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "kube/kube_lease_lock.h"  // ParseApiTime
#include "kube/objects.h"

namespace ccm::kube {
namespace {

std::string FormatSecondsTime(absl::Time t) {
  return absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", t, absl::UTCTimeZone());
}

void PutIfSet(Json& j, const char* key, const std::string& v) {
  if (!v.empty()) j[key] = v;
}

std::string Str(const Json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : "";
}

// The event as written at the name and version the server stored it under (`id` is the
// answer's identity, ScanMetadata): what a sink returns without parsing the whole answer.
Event AsStored(const Event& written, const Json& id) {
  Event e = written;
  const Json meta = id.value("metadata", Json::object());
  e.name = meta.value("name", e.name);
  e.ns = meta.value("namespace", e.ns);
  e.resource_version = meta.value("resourceVersion", "");
  return e;
}

}  // namespace

Json EventToJson(const Event& e) {
  Json ref = Json::object();
  const ObjectReference& o = e.involved_object;
  PutIfSet(ref, "kind", o.kind);
  PutIfSet(ref, "namespace", o.ns);
  PutIfSet(ref, "name", o.name);
  PutIfSet(ref, "uid", o.uid);
  PutIfSet(ref, "apiVersion", o.api_version);
  PutIfSet(ref, "resourceVersion", o.resource_version);
  PutIfSet(ref, "fieldPath", o.field_path);
  Json source = Json::object();
  PutIfSet(source, "component", e.source_component);
  PutIfSet(source, "host", e.source_host);
  Json j = {{"apiVersion", "v1"},
            {"kind", "Event"},
            {"metadata", {{"name", e.name}, {"namespace", e.ns}}},
            {"involvedObject", ref},
            {"reason", e.reason},
            {"message", e.message},
            {"type", e.type},
            {"source", source},
            {"count", e.count},
            {"firstTimestamp", FormatSecondsTime(e.first_timestamp)},
            {"lastTimestamp", FormatSecondsTime(e.last_timestamp)}};
  PutIfSet(j, "reportingComponent", e.reporting_controller);
  PutIfSet(j, "reportingInstance", e.reporting_instance);
  if (!e.resource_version.empty()) j["metadata"]["resourceVersion"] = e.resource_version;
  return j;
}

absl::StatusOr<Event> EventFromJson(const Json& j) {
  if (!j.is_object()) return absl::InvalidArgumentError("event is not a JSON object");
  Event e;
  e.ns = Namespace(j);
  e.name = Name(j);
  e.resource_version = ResourceVersion(j);
  if (auto it = j.find("involvedObject"); it != j.end() && it->is_object()) {
    e.involved_object = {.kind = Str(*it, "kind"),
                         .ns = Str(*it, "namespace"),
                         .name = Str(*it, "name"),
                         .uid = Str(*it, "uid"),
                         .api_version = Str(*it, "apiVersion"),
                         .resource_version = Str(*it, "resourceVersion"),
                         .field_path = Str(*it, "fieldPath")};
  }
  e.reason = Str(j, "reason");
  e.message = Str(j, "message");
  e.type = Str(j, "type");
  if (auto it = j.find("source"); it != j.end() && it->is_object()) {
    e.source_component = Str(*it, "component");
    e.source_host = Str(*it, "host");
  }
  if (auto it = j.find("count"); it != j.end() && it->is_number_integer()) {
    e.count = it->get<int>();
  }
  CCM_ASSIGN_OR_RETURN(e.first_timestamp, ParseApiTime(Str(j, "firstTimestamp")));
  CCM_ASSIGN_OR_RETURN(e.last_timestamp, ParseApiTime(Str(j, "lastTimestamp")));
  e.reporting_controller = Str(j, "reportingComponent");
  e.reporting_instance = Str(j, "reportingInstance");
  return e;
}

Json EventPatchJson(const Event& e) {
  return {{"count", e.count},
          {"lastTimestamp", FormatSecondsTime(e.last_timestamp)},
          {"message", e.message}};
}

absl::StatusOr<Event> KubeEventSink::Create(const Event& event) {
  Json body = EventToJson(event);
  body["metadata"].erase("resourceVersion");
  absl::StatusOr<Json> created = client_.CreateForIdentity(CoreEvents(), event.ns, body);
  if (!created.ok()) {
    return Annotate(created.status(), absl::StrCat("create event ", event.ns, "/", event.name));
  }
  return AsStored(event, *created);
}

absl::StatusOr<Event> KubeEventSink::Patch(const Event& event) {
  absl::StatusOr<Json> patched = client_.PatchForIdentity(
      CoreEvents(), event.ns, event.name, PatchType::kStrategicMerge, EventPatchJson(event));
  if (!patched.ok()) {
    return Annotate(patched.status(), absl::StrCat("patch event ", event.ns, "/", event.name));
  }
  return AsStored(event, *patched);
}

}  // namespace ccm::kube
