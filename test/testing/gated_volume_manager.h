// A VolumeManager that passes every call to another and can hold one task's answer: the call is
// done in vCenter, and its caller waits until the test lets it go. How a test puts a worker's
// answer between two steps of something else (a full sync) without timing.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "vsphere/cns/volume_manager.h"

namespace ccm::testing {

class GatedVolumeManager final : public vsphere::cns::VolumeManager {
 public:
  explicit GatedVolumeManager(vsphere::cns::VolumeManager& next) : next_(next) {}

  // The answer to the next task started for an operation `which` accepts is given only after
  // Release().
  void HoldAnswerTo(std::function<bool(const vsphere::cns::Operation&)> which) {
    absl::MutexLock l(&mu_);
    which_ = std::move(which);
  }
  // Whether a held answer is waiting (within `timeout`).
  bool WaitUntilHeld(absl::Duration timeout = absl::Seconds(30)) {
    absl::MutexLock l(&mu_);
    return mu_.AwaitWithTimeout(absl::Condition(&holding_), timeout);
  }
  void Release() {
    absl::MutexLock l(&mu_);
    holding_ = false;
    released_ = true;
  }

  absl::StatusOr<bool> SnapshotsSupported() override { return next_.SnapshotsSupported(); }
  absl::StatusOr<std::string> ApiVersion() override { return next_.ApiVersion(); }
  absl::StatusOr<vsphere::cns::QueryResult> QueryVolume(
      const vsphere::cns::QueryFilter& f) override {
    return next_.QueryVolume(f);
  }
  absl::StatusOr<vsphere::cns::SnapshotQueryResult> QuerySnapshots(
      const vsphere::cns::SnapshotQueryFilter& f) override {
    return next_.QuerySnapshots(f);
  }
  absl::StatusOr<vsphere::Moref> Start(const vsphere::cns::Operation& op) override {
    absl::StatusOr<vsphere::Moref> task = next_.Start(op);
    absl::MutexLock l(&mu_);
    if (task.ok() && which_ && which_(op)) {
      which_ = nullptr;
      held_task_ = *task;
    }
    return task;
  }
  absl::StatusOr<vsphere::cns::VolumeOperationResult> Wait(const vsphere::Moref& task,
                                                           absl::string_view what) override {
    auto r = next_.Wait(task, what);
    Hold(task);
    return r;
  }
  absl::StatusOr<std::vector<vsphere::cns::VolumeOperationResult>> WaitAll(
      const vsphere::Moref& task, absl::string_view what) override {
    auto r = next_.WaitAll(task, what);
    Hold(task);
    return r;
  }
  void Report(const vsphere::cns::Operation& op, bool ok, absl::Duration elapsed) const override {
    next_.Report(op, ok, elapsed);
  }
  absl::StatusOr<std::string> AttachedDiskUuid(const vsphere::Moref& vm,
                                               const std::string& volume_id) override {
    return next_.AttachedDiskUuid(vm, volume_id);
  }
  absl::Status KeepAfterVmDeletion(const std::string& volume_id,
                                   const vsphere::Moref& datastore) override {
    return next_.KeepAfterVmDeletion(volume_id, datastore);
  }

 private:
  void Hold(const vsphere::Moref& task) {
    absl::MutexLock l(&mu_);
    if (!held_task_.has_value() || !(*held_task_ == task)) return;
    held_task_.reset();
    holding_ = true;
    released_ = false;
    mu_.Await(absl::Condition(&released_));
  }

  vsphere::cns::VolumeManager& next_;
  absl::Mutex mu_;
  std::function<bool(const vsphere::cns::Operation&)> which_ ABSL_GUARDED_BY(mu_);
  std::optional<vsphere::Moref> held_task_ ABSL_GUARDED_BY(mu_);
  bool holding_ ABSL_GUARDED_BY(mu_) = false;
  bool released_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace ccm::testing
