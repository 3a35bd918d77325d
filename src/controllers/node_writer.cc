#include "controllers/node_writer.h"

#include "absl/strings/str_cat.h"
#include "controllers/node_patch.h"
#include "kube/errors.h"
#include "kube/objects.h"
#include "kube/resource.h"

namespace ccm::controllers {

absl::StatusOr<NodeWriteResult> UpdateNodeWithRetry(kube::Client& client, kube::Json node,
                                                    const NodeMutation& mutate, int attempts) {
  const std::string name = kube::Name(node);
  absl::Status last;
  bool stale = false;
  for (int i = 0; i < attempts; ++i) {
    if (stale) {
      absl::StatusOr<kube::Json> fresh = client.Get(kube::Nodes(), "", name);
      if (!fresh.ok()) return fresh.status();
      node = *std::move(fresh);
    }
    kube::Json wanted = node;
    if (!mutate(wanted)) return NodeWriteResult{std::move(node), false};
    const kube::Json patch = NodeJsonPatch(node, wanted);
    absl::StatusOr<kube::Json> stored =
        client.PatchForIdentity(kube::Nodes(), "", name, kube::PatchType::kJson, patch);
    if (stored.ok()) {
      // Every test held, so the stored Node is `wanted` at the version the server gave it.
      wanted["metadata"]["resourceVersion"] = (*stored)["metadata"].value("resourceVersion", "");
      return NodeWriteResult{std::move(wanted), true};
    }
    last = stored.status();
    stale = true;
    if (kube::IsConflict(last)) continue;
    if (!kube::IsInvalid(last)) return last;
    // 422: a failed "test" (a value we computed from changed meanwhile) or a real rejection.
    absl::StatusOr<kube::Json> fresh = client.Get(kube::Nodes(), "", name);
    if (!fresh.ok()) return fresh.status();
    if (PatchTestsHold(patch, *fresh)) return last;  // rejected for what it writes
    node = *std::move(fresh);
    stale = false;
  }
  return absl::AbortedError(absl::StrCat("update node ", name, ": still conflicting after ",
                                         attempts, " attempts: ", last.message()));
}

}  // namespace ccm::controllers
