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
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "vsphere/cns/volume_manager.h"
#include "vsphere/moref.h"

namespace ccm::vsphere::cns {

class DeleteBatch {
 public:
  // Sends one CnsDeleteVolume (the SOAP call; its task is not waited for here).
  using StartFn = std::function<absl::StatusOr<Moref>(const Operation&)>;

  explicit DeleteBatch(size_t max_volumes = 64) : max_volumes_(max_volumes) {}

  // The task of a CnsDeleteVolume that names `op`'s volume (a DeleteOp). A caller leaves by its
  // call deadline (CallDeadline) with DeadlineExceeded while it waits to be sent.
  absl::StatusOr<Moref> Start(const Operation& op, const StartFn& start);

  struct Stats {
    uint64_t calls = 0;    // CnsDeleteVolume calls sent for batches
    uint64_t deletes = 0;  // the deletes they carried
  };
  Stats stats() const;
  // Blocks until `n` deletes wait to be sent (tests).
  void AwaitQueuedForTest(size_t n) const;

 private:
  struct Ask {
    std::string volume_id;
    bool delete_disk = true;
    bool answered = false;
    size_t batch_size = 0;  // how many volumes the call named
    absl::StatusOr<Moref> task;
  };
  void SendBatch(const StartFn& start) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const size_t max_volumes_;
  mutable absl::Mutex mu_;
  std::vector<std::shared_ptr<Ask>> queued_ ABSL_GUARDED_BY(mu_);
  bool sending_ ABSL_GUARDED_BY(mu_) = false;
  Stats stats_ ABSL_GUARDED_BY(mu_);
};

}  // namespace ccm::vsphere::cns
