#pragma once
// The Node cache the cloud controllers share, set up the same way in the manager and in tests:
// - NodeCacheOptions(): Nodes trimmed to what the controllers read (kube::TrimNodeForCache) and
//   kept CBOR-encoded; with 1,000 Nodes this is most of the controller's heap otherwise.
// - ProviderIdIndex: spec.providerID -> Node name, kept current by the informer's events, so a
//   VM change finds its Node without decoding every cached Node.

#include <optional>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "kube/informer.h"

namespace ccm::controllers {

kube::InformerOptions NodeCacheOptions();

class ProviderIdIndex {
 public:
  // Registers its handler on `nodes` (call before nodes.Start(), or it first gets every cached
  // Node). Stop `nodes` before destroying the index: the handler refers to it.
  explicit ProviderIdIndex(kube::Informer& nodes);
  ProviderIdIndex(const ProviderIdIndex&) = delete;
  ProviderIdIndex& operator=(const ProviderIdIndex&) = delete;

  // The Node whose spec.providerID is exactly `provider_id`, if the cache has one.
  std::optional<std::string> NodeFor(const std::string& provider_id) const;

 private:
  void Apply(const kube::Json* old_node, const kube::Json* node);

  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, std::string> by_provider_id_ ABSL_GUARDED_BY(mu_);
};

}  // namespace ccm::controllers
