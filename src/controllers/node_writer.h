#pragma once
// Conflict-safe writes of a Node: a JSON patch guarded by tests of exactly the values it was
// computed from (node_patch.h), so other writers' labels neither conflict with it nor get lost.
// On a 409, or a 422 from a failed test, the freshest Node is read again and the change
// re-applied (client-go's RetryOnConflict around Get + modify + write). The re-read is the pause
// between attempts, so nothing sleeps.

#include <functional>

#include "absl/status/statusor.h"
#include "kube/client.h"

namespace ccm::controllers {

// Changes `node` in place; returns false when it needs no change (nothing is written then).
using NodeMutation = std::function<bool(kube::Json& node)>;

struct NodeWriteResult {
  // As written (the Node it was computed from, changed, at the stored resourceVersion; the
  // answer is not parsed), or as last read when no change was needed.
  kube::Json node;
  bool written = false;  // false: the (fresh) Node needed no change
};

// Applies `mutate` to a copy of `node` (the caller's latest copy) and patches the difference; on
// conflict GETs the Node and tries again, up to `attempts` writes. Errors: the last conflict,
// NotFound when the Node is gone, a 422 the fresh Node does not explain, other API errors.
absl::StatusOr<NodeWriteResult> UpdateNodeWithRetry(kube::Client& client, kube::Json node,
                                                    const NodeMutation& mutate, int attempts = 5);

}  // namespace ccm::controllers
