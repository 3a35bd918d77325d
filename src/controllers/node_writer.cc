#include "controllers/node_writer.h"

#include "absl/strings/str_cat.h"
#include "kube/errors.h"
#include "kube/objects.h"
#include "kube/resource.h"

namespace ccm::controllers {

absl::StatusOr<NodeWriteResult> UpdateNodeWithRetry(kube::Client& client, kube::Json node,
                                                    const NodeMutation& mutate, int attempts) {
  const std::string name = kube::Name(node);
  absl::Status last;
  for (int i = 0; i < attempts; ++i) {
    if (i > 0) {
      absl::StatusOr<kube::Json> fresh = client.Get(kube::Nodes(), "", name);
      if (!fresh.ok()) return fresh.status();
      node = *std::move(fresh);
    }
    if (!mutate(node)) return NodeWriteResult{std::move(node), false};
    absl::StatusOr<kube::Json> stored = client.Update(kube::Nodes(), node);
    if (stored.ok()) return NodeWriteResult{*std::move(stored), true};
    last = stored.status();
    if (!kube::IsConflict(last)) return last;
  }
  return absl::AbortedError(absl::StrCat("update node ", name, ": still conflicting after ",
                                         attempts, " attempts: ", last.message()));
}

}  // namespace ccm::controllers
