#include "cloud/vsphere/topology_cache.h"

#include <set>

#include "absl/strings/str_cat.h"
#include "common/logging.h"
#include "common/status_macros.h"

namespace ccm::cloud {

TopologyCache::TopologyCache(vsphere::AncestryResolver& ancestry, vsphere::TaggingClient& tagging,
                             vsphere::InventoryCache& inventory, absl::Duration tag_ttl,
                             Clock* clock)
    : ancestry_(ancestry),
      tagging_(tagging),
      inventory_(inventory),
      tag_ttl_(tag_ttl),
      clock_(clock ? clock : &Clock::Real()) {}

std::vector<TopologyCache::Chain> TopologyCache::Chains::Expand() const {
  static const Chain kEmpty;
  Chain v{vm};
  const Chain& up = parents ? *parents : kEmpty;
  v.insert(v.end(), up.begin(), up.end());
  return {host ? *host : kEmpty, pool ? *pool : kEmpty, std::move(v)};
}

std::shared_ptr<const TopologyCache::Chain> TopologyCache::InternLocked(Chain chain) {
  if (chain.empty()) return std::make_shared<const Chain>();
  std::weak_ptr<const Chain>& slot = interned_[chain.front().ref];
  if (auto have = slot.lock(); have && *have == chain) return have;
  auto made = std::make_shared<const Chain>(std::move(chain));
  slot = made;
  return made;
}

bool TopologyCache::FreshLocked(const Chains& c) const {
  const absl::Time now = clock_->Now();
  for (const Chain& chain : c.Expand()) {
    for (const auto& obj : chain) {
      auto it = tags_.find(obj.ref);
      if (it == tags_.end() || now - it->second.fetched > tag_ttl_) return false;
    }
  }
  return true;
}

absl::Status TopologyCache::FillLocked(const vsphere::Moref& vm) {
  // 1. Ancestry for this VM and every inventory VM not resolved yet (one batch).
  std::vector<vsphere::Moref> missing_vms;
  if (!chains_.count(vm)) missing_vms.push_back(vm);
  if (auto all = inventory_.Snapshot(); all.ok()) {
    for (const auto& f : *all)
      if (!chains_.count(f.moref) && !(f.moref == vm)) missing_vms.push_back(f.moref);
  }
  if (!missing_vms.empty()) {
    CCM_ASSIGN_OR_RETURN(auto resolved, ancestry_.ResolveVms(missing_vms));
    for (auto& a : resolved) {
      Chain parents;
      if (a.vm_chain.size() > 1) parents.assign(a.vm_chain.begin() + 1, a.vm_chain.end());
      chains_[a.vm.ref] = {a.vm, InternLocked(std::move(a.host_chain)),
                           InternLocked(std::move(a.resource_pool_chain)),
                           InternLocked(std::move(parents))};
    }
  }
  if (!chains_.count(vm)) {
    return absl::NotFoundError(absl::StrCat("ancestry of ", vm.ToString(), ": VM no longer exists"));
  }
  // 2. Tags for every object of every known chain that has none or expired ones (one batch).
  const absl::Time now = clock_->Now();
  std::set<vsphere::Moref> wanted;
  for (const auto& [ref, c] : chains_)
    for (const Chain& chain : c.Expand())
      for (const auto& obj : chain) {
        auto it = tags_.find(obj.ref);
        if (it == tags_.end() || now - it->second.fetched > tag_ttl_) wanted.insert(obj.ref);
      }
  if (wanted.empty()) return absl::OkStatus();
  std::vector<vsphere::Moref> objects(wanted.begin(), wanted.end());
  ++stats_.batch_fetches;
  CCM_ASSIGN_OR_RETURN(auto attached, tagging_.ListAttachedTags(objects));
  for (const auto& o : attached) {
    Tags t{{}, now};
    for (const auto& tag : o.tags) t.tags.push_back({tag.name, tag.category_name});
    tags_[o.object] = std::move(t);
  }
  for (const auto& o : objects)  // objects vCenter did not list have no tags
    if (!tags_.count(o) || tags_[o].fetched != now) tags_[o] = Tags{{}, now};
  VLOG(2, "topology cache: {} VMs resolved, tags of {} objects fetched in one call",
       missing_vms.size(), objects.size());
  return absl::OkStatus();
}

absl::StatusOr<std::vector<AncestorChain>> TopologyCache::ChainsFor(const vsphere::Moref& vm) {
  absl::MutexLock lock(&mu_);
  auto it = chains_.find(vm);
  if (it != chains_.end() && FreshLocked(it->second)) {
    ++stats_.hits;
  } else {
    ++stats_.misses;
    CCM_RETURN_IF_ERROR(FillLocked(vm));
    it = chains_.find(vm);
  }
  std::vector<AncestorChain> out;
  for (const Chain& chain : it->second.Expand()) {
    AncestorChain c;
    for (const auto& obj : chain) {
      TaggedObject t;
      t.description = absl::StrCat(obj.ref.type, " ", obj.ref.value, " (", obj.name, ")");
      t.tags = tags_[obj.ref].tags;
      c.push_back(std::move(t));
    }
    out.push_back(std::move(c));
  }
  return out;
}

TopologyStats TopologyCache::stats() const {
  absl::MutexLock lock(&mu_);
  return stats_;
}

}  // namespace ccm::cloud
