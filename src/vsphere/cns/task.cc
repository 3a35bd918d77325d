#include "vsphere/cns/task.h"

#include "absl/strings/str_cat.h"
#include "vsphere/soap.h"

namespace ccm::vsphere::cns {
namespace {

constexpr absl::string_view kTaskVanishedPayload = "type.ccm/vsphere.TaskVanished";

}  // namespace

absl::Status TaskVanishedError(const Moref& task) {
  absl::Status s = absl::UnavailableError(
      absl::StrCat("task ", task.ToString(), " vanished before it finished; outcome unknown"));
  s.SetPayload(kTaskVanishedPayload, absl::Cord(task.value));
  return s;
}

bool IsTaskVanished(const absl::Status& s) {
  return s.code() == absl::StatusCode::kUnavailable &&
         s.GetPayload(kTaskVanishedPayload).has_value();
}

absl::StatusOr<std::optional<TaskInfo>> DoneTaskInfo(const ObjectUpdate& u) {
  TaskInfo t;
  for (const PropertyChange& c : u.changes) {
    if (c.name == "info.state") {
      t.state = c.val.text().as_string();
    } else if (c.name == "info.error" && c.val) {
      t.error_fault = XsiType(Child(c.val, "fault"));
      t.error_message = ChildText(c.val, "localizedMessage");
    } else if (c.name == "info.result") {
      t.result = c.val;
    }
  }
  if (t.state.empty() || t.state == "queued" || t.state == "running") return std::nullopt;
  if (!t.done()) {
    return absl::InternalError(
        absl::StrCat("malformed task info of ", u.obj.value, ": unknown state \"", t.state, "\""));
  }
  if (t.state == "error" && t.error_fault.empty()) t.error_fault = "UnknownFault";
  t.doc = u.doc;
  return std::optional<TaskInfo>(std::move(t));
}

}  // namespace ccm::vsphere::cns
