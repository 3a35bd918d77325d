#pragma once
// Conflict-safe writes of a Node: a PUT carrying the resourceVersion it was computed from; on
// 409 the freshest Node is read again and the change re-applied (client-go's RetryOnConflict
// around Get + modify + Update). The re-read is the pause between attempts, so nothing sleeps.

#include <functional>

#include "absl/status/statusor.h"
#include "kube/client.h"

namespace ccm::controllers {

// Changes `node` in place; returns false when it needs no change (nothing is written then).
using NodeMutation = std::function<bool(kube::Json& node)>;

struct NodeWriteResult {
  kube::Json node;       // as stored, or as last read when no change was needed
  bool written = false;  // false: the (fresh) Node needed no change
};

// Applies `mutate` to `node` (the caller's latest copy) and PUTs it; on conflict GETs the Node
// and tries again, up to `attempts` writes. Errors: the last conflict, NotFound when the Node is
// gone, other API errors.
absl::StatusOr<NodeWriteResult> UpdateNodeWithRetry(kube::Client& client, kube::Json node,
                                                    const NodeMutation& mutate, int attempts = 5);

}  // namespace ccm::controllers
