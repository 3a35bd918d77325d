#pragma once
// SnapshotBatch: the look-ups of one volume's snapshots (the reference's check before a delete or
// an expansion, CreateSnapshot's idempotency and limit) that arrive while one is out go out
// together, as one CnsQuerySnapshots naming all their volumes. A CnsQuerySnapshots is a task on
// vCenter: with its wait it costs about three requests, which the look-ups that join share
// (issue 55: a DeleteVolume cost two tasks, the check and the delete).
//
// Each caller's answer comes from a query sent after it asked, so a snapshot made before the
// call is never missed (the same guarantee a query of its own gives). A batch whose answer cannot
// be told apart by volume (an entry with a fault, or one naming no volume of the batch), or that
// CNS refused as a whole for a reason other than vCenter being unreachable, is asked again one
// volume at a time: a bad volume never fails the look-ups of the others.

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "vsphere/cns/call_batch.h"
#include "vsphere/cns/types.h"

namespace ccm::vsphere::cns {

// One page of CnsQuerySnapshots (VolumeManager::QuerySnapshots).
using SnapshotQuery =
    std::function<absl::StatusOr<SnapshotQueryResult>(const SnapshotQueryFilter&)>;

// Every snapshot of one volume, all pages; NotFound (the entry's fault) when CNS does not know it.
absl::StatusOr<std::vector<Snapshot>> QuerySnapshotsOf(const std::string& volume_id,
                                                       const SnapshotQuery& query);

// The snapshots of several distinct volumes from one query (all pages), each volume's answer in
// the order of `volume_ids`; falls back to one query per volume as said above.
std::vector<absl::StatusOr<std::vector<Snapshot>>> QuerySnapshotsOfMany(
    const std::vector<std::string>& volume_ids, const SnapshotQuery& query);

class SnapshotBatch {
 public:
  explicit SnapshotBatch(size_t max_volumes = 64) : calls_(max_volumes) {}

  // As QuerySnapshotsOf, joined with the look-ups that wait beside it. A caller leaves by its
  // call deadline (CallDeadline) with DeadlineExceeded; the query it joined goes on for the others.
  absl::StatusOr<std::vector<Snapshot>> Of(const std::string& volume_id,
                                           const SnapshotQuery& query);

  // How many queries (calls) were sent, and how many look-ups (asks) they answered.
  using Stats = CallBatchStats;
  Stats stats() const { return calls_.stats(); }
  // Blocks until `n` look-ups wait for the next batch (tests).
  void AwaitQueuedForTest(size_t n) const { calls_.AwaitQueuedForTest(n); }

 private:
  CallBatch<absl::StatusOr<std::vector<Snapshot>>> calls_;
};

}  // namespace ccm::vsphere::cns
