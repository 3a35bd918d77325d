#include "vsphere/cns/delete_batch.h"

#include <string>
#include <vector>

#include "common/call_deadline.h"

namespace ccm::vsphere::cns {

absl::StatusOr<Moref> DeleteBatch::Start(const Operation& op, const StartFn& start) {
  auto send = [&](const std::vector<std::string>& ids, int delete_disk) {
    return std::vector<Sent>(ids.size(), Sent{start(DeleteOp(ids, delete_disk != 0)), ids.size()});
  };
  absl::StatusOr<Sent> sent =
      calls_.Submit(op.volume_id, op.delete_disk ? 1 : 0, CallDeadline(), send, op.what);
  if (!sent.ok()) return sent.status();
  // Refused as a whole: perhaps for another volume of the batch. This one is sent alone.
  if (!sent->task.ok() && sent->volumes > 1) return start(op);
  return sent->task;
}

}  // namespace ccm::vsphere::cns
