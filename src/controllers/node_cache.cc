#include "controllers/node_cache.h"

#include "kube/objects.h"

namespace ccm::controllers {

kube::InformerOptions NodeCacheOptions() {
  kube::InformerOptions o;
  o.transform = kube::TrimNodeForCache;
  o.keep = &kube::NodeCacheRule();
  o.compact_store = true;
  return o;
}

ProviderIdIndex::ProviderIdIndex(kube::Informer& nodes) {
  nodes.AddEventHandler({[this](const kube::Json& n) { Apply(nullptr, &n); },
                         [this](const kube::Json& o, const kube::Json& n) { Apply(&o, &n); },
                         [this](const kube::Json& n) { Apply(&n, nullptr); }});
}

void ProviderIdIndex::Apply(const kube::Json* old_node, const kube::Json* node) {
  absl::MutexLock l(&mu_);
  if (old_node != nullptr) {
    // Only drop the entry if it still points at this Node (two Nodes must not share an ID, but
    // a broken cluster must not make the index forget the other one).
    auto it = by_provider_id_.find(kube::ProviderId(*old_node));
    if (it != by_provider_id_.end() && it->second == kube::Name(*old_node))
      by_provider_id_.erase(it);
  }
  if (node != nullptr && !kube::ProviderId(*node).empty()) {
    by_provider_id_[kube::ProviderId(*node)] = kube::Name(*node);
  }
}

std::optional<std::string> ProviderIdIndex::NodeFor(const std::string& provider_id) const {
  absl::MutexLock l(&mu_);
  auto it = by_provider_id_.find(provider_id);
  if (it == by_provider_id_.end()) return std::nullopt;
  return it->second;
}

}  // namespace ccm::controllers
