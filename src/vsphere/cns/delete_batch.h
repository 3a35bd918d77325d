#pragma once
// DeleteBatch: CnsDeleteVolume calls that arrive while one is being sent go out together, as one
// call naming all their volumes (CnsDeleteVolume takes a list; its task has a result per volume).
// A task costs about three vCenter requests with its wait, which the deletes that join share
// (issue 55: a namespace's worth of claims deleted at once).
//
// Each delete gets the shared task; VolumeManager::WaitOwn reads its own volume's result from it
// (a fault of one volume is that volume's alone). A call CNS refuses as a whole is sent again
// for each volume alone, so one bad volume never fails the deletes of the others. Deletes with
// different deleteDisk flags never share a call.

#include <cstddef>
#include <functional>

#include "absl/status/statusor.h"
#include "vsphere/cns/call_batch.h"
#include "vsphere/cns/volume_manager.h"
#include "vsphere/moref.h"

namespace ccm::vsphere::cns {

class DeleteBatch {
 public:
  // Sends one CnsDeleteVolume (the SOAP call; its task is not waited for here).
  using StartFn = std::function<absl::StatusOr<Moref>(const Operation&)>;

  explicit DeleteBatch(size_t max_volumes = 64) : calls_(max_volumes) {}

  // The task of a CnsDeleteVolume that names `op`'s volume (a DeleteOp). A caller leaves by its
  // call deadline (CallDeadline) with DeadlineExceeded while it waits to be sent.
  absl::StatusOr<Moref> Start(const Operation& op, const StartFn& start);

  // CnsDeleteVolume calls sent for batches, and the deletes they carried (asks).
  using Stats = CallBatchStats;
  Stats stats() const { return calls_.stats(); }
  // Blocks until `n` deletes wait to be sent (tests).
  void AwaitQueuedForTest(size_t n) const { calls_.AwaitQueuedForTest(n); }

 private:
  struct Sent {
    absl::StatusOr<Moref> task;
    size_t volumes = 0;  // how many volumes the call named
  };
  CallBatch<Sent> calls_;
};

}  // namespace ccm::vsphere::cns
