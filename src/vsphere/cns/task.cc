#include "vsphere/cns/task.h"

#include "absl/strings/str_cat.h"
#include "common/backoff.h"
#include "common/status_macros.h"
#include "vsphere/property_collector.h"

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

absl::StatusOr<TaskInfo> WaitForTask(Client& vim, const Moref& task, const TaskWaitOptions& o) {
  Clock& clock = vim.options().clock ? *vim.options().clock : Clock::Real();
  const absl::Time deadline = clock.Now() + o.timeout;
  const BackoffPolicy poll{o.first_poll, o.max_poll, 2.0, 0.0};
  for (int attempt = 0;; ++attempt) {
    CCM_ASSIGN_OR_RETURN(RetrieveObjectsResult r,
                         RetrieveObjects(vim, {task}, {PropertySpec{"Task", {"info"}, false}}));
    if (r.objects.empty()) return TaskVanishedError(task);
    const ObjectContent& oc = r.objects.front();
    CCM_ASSIGN_OR_RETURN(TaskInfo info, ParseTaskInfo(oc.doc, oc.Get("info")));
    if (info.done()) return info;
    if (clock.Now() >= deadline) {
      return absl::DeadlineExceededError(absl::StrCat("task ", task.ToString(), " still ",
                                                      info.state, " after ",
                                                      absl::FormatDuration(o.timeout)));
    }
    clock.SleepFor(BackoffDelay(poll, attempt), nullptr);
  }
}

}  // namespace ccm::vsphere::cns
