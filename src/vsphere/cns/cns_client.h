#pragma once
// CnsClient: the VolumeManager (volume_manager.h: the calls and their error contract) over the
// vim25 session of a vsphere::Client (its kCnsEndpoint: one cookie, retries, re-login and
// metrics for every vCenter service), each change waiting for its CNS task. Calls that change
// state are not sent again after a connection that broke without an answer (CallKind::kChange):
// the CSI layer's idempotency handles that case. Transport and session failures are
// Unavailable. Thread-safe.

#include <atomic>
#include <string>

#include "absl/status/statusor.h"
#include "vsphere/client.h"
#include "vsphere/cns/delete_batch.h"
#include "vsphere/cns/task.h"
#include "vsphere/cns/volume_manager.h"

namespace ccm::vsphere::cns {

struct CnsClientOptions {
  TaskWaitOptions task;
  CnsOperationObserver observer;  // optional
};

class CnsClient final : public VolumeManager {
 public:
  // `vim` must outlive the CnsClient.
  explicit CnsClient(Client& vim, CnsClientOptions options = {});

  absl::StatusOr<bool> SnapshotsSupported() override;
  absl::StatusOr<std::string> ApiVersion() override;
  absl::StatusOr<QueryResult> QueryVolume(const QueryFilter& filter) override;
  absl::StatusOr<SnapshotQueryResult> QuerySnapshots(const SnapshotQueryFilter& filter) override;
  absl::StatusOr<Moref> Start(const Operation& op) override;
  absl::StatusOr<VolumeOperationResult> Wait(const Moref& task, absl::string_view what) override;
  absl::StatusOr<std::vector<VolumeOperationResult>> WaitAll(const Moref& task,
                                                             absl::string_view what) override;
  void Report(const Operation& op, bool ok, absl::Duration elapsed) const override;
  // From the VM's config.hardware.device: a VirtualDisk whose vDiskId is the volume id.
  absl::StatusOr<std::string> AttachedDiskUuid(const Moref& vm,
                                               const std::string& volume_id) override;
  absl::Status KeepAfterVmDeletion(const std::string& volume_id, const Moref& datastore) override;
  // The deletes sent together (benchmarks, tests).
  const DeleteBatch& deletes() const { return deletes_; }

 private:
  absl::StatusOr<QueryResult> Query(const QueryFilter& filter);
  absl::StatusOr<Moref> StartOne(const Operation& op);
  // A snapshot call's error: Unimplemented (and snapshots marked missing) when vCenter does not
  // know the method; `s` annotated otherwise.
  absl::Status SnapshotCallError(const absl::Status& s, absl::string_view method,
                                 absl::string_view what);

  Client& vim_;
  const CnsClientOptions options_;
  TaskWaiter tasks_;
  DeleteBatch deletes_;  // concurrent CnsDeleteVolume calls sent as one
  std::atomic<bool> snapshots_missing_{false};
};

}  // namespace ccm::vsphere::cns
