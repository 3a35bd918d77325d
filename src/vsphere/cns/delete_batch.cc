#include "vsphere/cns/delete_batch.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/call_deadline.h"

namespace ccm::vsphere::cns {

absl::StatusOr<Moref> DeleteBatch::Start(const Operation& op, const StartFn& start) {
  auto ask = std::make_shared<Ask>();
  ask->volume_id = op.volume_id;
  ask->delete_disk = op.delete_disk;
  const absl::Time deadline = CallDeadline();
  {
    absl::MutexLock l(&mu_);
    queued_.push_back(ask);
    while (!ask->answered) {
      if (!sending_) {
        SendBatch(start);
        continue;
      }
      auto ready = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return ask->answered || !sending_; };
      if (!mu_.AwaitWithDeadline(absl::Condition(&ready), deadline)) {
        std::erase(queued_, ask);  // if still queued; a call under way goes on for the others
        return absl::DeadlineExceededError(
            absl::StrCat(op.what,
                         ": the call's deadline passed while the deletes before it "
                         "were sent"));
      }
    }
  }
  // Refused as a whole: perhaps for another volume of the batch. This one is sent alone.
  if (!ask->task.ok() && ask->batch_size > 1) return start(op);
  return ask->task;
}

// The sender's turn: the oldest queued deletes with the first one's deleteDisk flag (at most
// max_volumes_ volumes) as one call; a batch of one is sent as its own operation.
void DeleteBatch::SendBatch(const StartFn& start) {
  sending_ = true;
  const bool delete_disk = queued_.front()->delete_disk;
  std::vector<std::shared_ptr<Ask>> batch;
  std::vector<std::string> ids;
  for (auto it = queued_.begin(); it != queued_.end();) {
    const std::shared_ptr<Ask>& a = *it;
    const bool known = std::find(ids.begin(), ids.end(), a->volume_id) != ids.end();
    if (a->delete_disk != delete_disk || (!known && ids.size() == max_volumes_)) {
      ++it;
      continue;
    }
    if (!known) ids.push_back(a->volume_id);
    batch.push_back(a);
    it = queued_.erase(it);
  }
  mu_.Unlock();
  const absl::StatusOr<Moref> task = start(DeleteOp(ids, delete_disk));
  mu_.Lock();
  for (const std::shared_ptr<Ask>& a : batch) {
    a->task = task;
    a->batch_size = ids.size();
    a->answered = true;
  }
  ++stats_.calls;
  stats_.deletes += batch.size();
  sending_ = false;
}

DeleteBatch::Stats DeleteBatch::stats() const {
  absl::MutexLock l(&mu_);
  return stats_;
}

void DeleteBatch::AwaitQueuedForTest(size_t n) const {
  absl::MutexLock l(&mu_);
  auto enough = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return queued_.size() >= n; };
  mu_.Await(absl::Condition(&enough));
}

}  // namespace ccm::vsphere::cns
