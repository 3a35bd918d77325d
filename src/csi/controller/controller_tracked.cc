// ControllerService::RunTracked: a CNS change at most once across retries and restarts, through
// the operation store (operation_store.h).
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/logging.h"
#include "common/status_macros.h"
#include "csi/controller/controller_service.h"
#include "vsphere/cns/task.h"

namespace ccm::csi {
namespace {

namespace cns = vsphere::cns;

void Record(OperationStore& store, OperationRecord& r) {
  if (absl::Status s = store.Put(r); !s.ok()) {
    // The operation goes on: without its record, a retry after a restart may repeat it (the
    // reference behaves the same when it cannot store its CnsVolumeOperationRequest).
    LOG_WARN("operation {}: cannot record {} ({}): {}", r.name, r.status, r.task_id, s.message());
  }
}

// CNS refuses a repeated attach or detach (ResourceInUse, or the disk found where it should be)
// and finds a repeated delete done (NotFound): their records may be read from the store's watch.
// A repeated create, extend or snapshot would make a second object or change.
bool RepeatIsHarmless(const std::string& method) {
  return method == "CnsAttachVolume" || method == "CnsDetachVolume" || method == "CnsDeleteVolume";
}

}  // namespace

absl::StatusOr<cns::VolumeOperationResult> ControllerService::RunTracked(
    const std::string& name, VCenterEndpoint& vc, const cns::Operation& op,
    const OperationRecord* known) {
  OperationStore& store = cloud_->operations();
  absl::StatusOr<std::optional<OperationRecord>> prior =
      known != nullptr              ? absl::StatusOr<std::optional<OperationRecord>>(*known)
      : RepeatIsHarmless(op.method) ? store.GetCached(name)
                                    : store.Get(name);
  if (!prior.ok()) {
    LOG_WARN("operation {}: cannot read its record: {}", name, prior.status().message());
  }
  OperationRecord r;
  r.name = name;
  r.vcenter = vc.label;
  if (prior.ok() && prior->has_value()) r.error_count = (*prior)->error_count;
  absl::StatusOr<cns::VolumeOperationResult> result;
  bool resumed = false;
  const absl::Time start = absl::Now();
  if (prior.ok() && prior->has_value() && (*prior)->status == kTaskInProgress &&
      !(*prior)->task_id.empty() && (*prior)->vcenter == vc.label) {
    // Started by an earlier attempt (a timed-out call, a controller restarted meanwhile).
    r = **prior;
    LOG_INFO("operation {}: waiting for task {} started earlier", name, r.task_id);
    result = vc.cns->WaitOwn({"Task", r.task_id}, op);
    resumed = !cns::IsTaskVanished(result.status());
    if (!resumed) {
      LOG_WARN("operation {}: task {} is gone from vCenter: starting it again", name, r.task_id);
    }
  }
  if (!resumed) {
    // A record without a task ID would not let a retry resume anything: it is written once CNS
    // took the task (a create's RecordFirst wrote one before, saying it was never sent).
    absl::StatusOr<vsphere::Moref> task = vc.cns->Start(op);
    if (!task.ok()) {
      vc.cns->Report(op, false, absl::Now() - start);
      // A create's record written before the call: CNS refused it, so it ended (and is cleaned
      // up in time). Without an answer (Unavailable, DeadlineExceeded) it may have been taken:
      // the record stays without a task, and the retry asks CNS for the name.
      const absl::StatusCode code = task.status().code();
      if (known != nullptr && known->task_id.empty() && code != absl::StatusCode::kUnavailable &&
          code != absl::StatusCode::kDeadlineExceeded) {
        r.status = kTaskError;
        r.error = std::string(task.status().message());
        r.invoked = absl::Now();
        ++r.error_count;
        Record(store, r);
      }
      return task.status();
    }
    r.invoked = absl::Now();
    r.task_id = task->value;
    r.status = kTaskInProgress;
    r.error.clear();
    Record(store, r);
    result = vc.cns->WaitOwn(*task, op);
  }
  // A task that named no result for its volume: what CNS has now decides it.
  if (cns::IsNoVolumeResult(result.status())) result = vc.cns->Settle(op);
  vc.cns->Report(op, result.ok(), absl::Now() - start);
  if (result.ok()) {
    r.status = kTaskSuccess;
    if (!result->volume_id.empty()) r.volume_id = result->volume_id;
    if (!result->snapshot.snapshot_id.empty()) r.snapshot_id = result->snapshot.snapshot_id;
  } else if (result.status().code() == absl::StatusCode::kUnavailable ||
             result.status().code() == absl::StatusCode::kDeadlineExceeded) {
    return result;  // outcome unknown: the record stays "InProgress" with its task for the retry
  } else {
    r.status = kTaskError;
    r.error = std::string(result.status().message());
    ++r.error_count;
  }
  Record(store, r);
  return result;
}

bool ControllerService::RecordFirst(CreatePlan& plan) {
  OperationStore& store = cloud_->operations();
  if (cloud_->vcenters().size() != 1 || !store.durable()) return false;
  OperationRecord r;
  r.name = plan.name;
  r.vcenter = cloud_->vcenters().front().label;
  r.status = kTaskInProgress;
  r.invoked = absl::Now();
  // One request: the record is created, or an earlier attempt's is there.
  absl::StatusOr<bool> created = store.CreateIfAbsent(r);
  if (!created.ok()) {
    LOG_WARN("CreateVolume {}: cannot record it before sending it, asking CNS for the name: {}",
             plan.name, created.status().message());
    return false;
  }
  if (!*created) return false;  // an earlier attempt's record
  plan.record = std::move(r);
  return true;
}

}  // namespace ccm::csi
