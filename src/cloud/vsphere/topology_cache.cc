#include "cloud/vsphere/topology_cache.h"

#include <algorithm>
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

void TopologyCache::StoreChainsLocked(std::vector<vsphere::VmAncestry>& resolved) {
  for (auto& a : resolved) {
    Chain parents;
    if (a.vm_chain.size() > 1) parents.assign(a.vm_chain.begin() + 1, a.vm_chain.end());
    chains_[a.vm.ref] = {a.vm, InternLocked(std::move(a.host_chain)),
                         InternLocked(std::move(a.resource_pool_chain)),
                         InternLocked(std::move(parents))};
  }
}

namespace {
const vsphere::Moref& Head(const std::shared_ptr<const std::vector<vsphere::InventoryRef>>& c) {
  static const vsphere::Moref kNone;
  return c && !c->empty() ? c->front().ref : kNone;
}
}  // namespace

bool TopologyCache::SamePlacement(const Chains& c, const vsphere::VmFacts& f) {
  // The pool chain holds only ResourcePool / VirtualApp objects; compare when it has any.
  const bool pool_same = !c.pool || c.pool->empty() || Head(c.pool) == f.resource_pool;
  return Head(c.host) == f.host && Head(c.parents) == f.parent_folder && pool_same;
}

bool TopologyCache::FreshLocked(const Chains& c) const {
  const absl::Time now = clock_->Now();
  auto fresh = [&](const vsphere::InventoryRef& obj) ABSL_SHARED_LOCKS_REQUIRED(mu_) {
    auto it = tags_.find(obj.ref);
    return it != tags_.end() && now - it->second.fetched <= tag_ttl_;
  };
  if (!fresh(c.vm)) return false;
  for (const auto* chain : {c.host.get(), c.pool.get(), c.parents.get()})
    if (chain != nullptr && !std::all_of(chain->begin(), chain->end(), fresh)) return false;
  return true;
}

absl::Status TopologyCache::FillLocked(const vsphere::Moref& vm) {
  // 1. Ancestry for this VM and every inventory VM not resolved yet, in one batch. Where the VMs
  // sit (host, pool, folder) comes from the inventory cache, which the property-collector stream
  // keeps current: only the objects above them are fetched. A VM the cache does not know (not
  // synced, or not in it yet) is looked up in vCenter.
  std::vector<vsphere::VmPlacement> placed;
  bool vm_placed = false;
  size_t resolved_vms = 0;
  // FillLocked holds mu_; ForEachVm calls the lambda on this thread, before it returns.
  absl::Status walked =
      inventory_.ForEachVm([&](const vsphere::VmFacts& f) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        // Known and not moved (vMotion, pool or folder change): nothing to do.
        if (auto it = chains_.find(f.moref); it != chains_.end() && SamePlacement(it->second, f))
          return;
        if (f.moref == vm) vm_placed = true;
        placed.push_back({f.moref, f.name, f.host, f.resource_pool, f.parent_folder});
      });
  if (!walked.ok()) placed.clear();
  if (!placed.empty()) {
    CCM_ASSIGN_OR_RETURN(auto resolved, ancestry_.ResolvePlacements(placed));
    StoreChainsLocked(resolved);
    resolved_vms += resolved.size();
  }
  if (!chains_.count(vm) && !vm_placed) {
    CCM_ASSIGN_OR_RETURN(auto resolved, ancestry_.ResolveVms({vm}));
    StoreChainsLocked(resolved);
    resolved_vms += resolved.size();
  }
  if (!chains_.count(vm)) {
    return absl::NotFoundError(
        absl::StrCat("ancestry of ", vm.ToString(), ": VM no longer exists"));
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
  ++tags_generation_;  // zone answers from the old tags are resolved again when next asked for
  VLOG(2, "topology cache: {} VMs resolved, tags of {} objects fetched in one call", resolved_vms,
       objects.size());
  return absl::OkStatus();
}

absl::StatusOr<TopologyCache::Chains*> TopologyCache::FindOrFillLocked(const vsphere::VmFacts& vm) {
  auto it = chains_.find(vm.moref);
  if (it != chains_.end() && !SamePlacement(it->second, vm)) it = chains_.end();  // it moved
  if (it != chains_.end() && FreshLocked(it->second)) {
    ++stats_.hits;
  } else {
    ++stats_.misses;
    CCM_RETURN_IF_ERROR(FillLocked(vm.moref));
    it = chains_.find(vm.moref);
  }
  return &it->second;
}

absl::StatusOr<std::optional<ZoneRegion>> TopologyCache::ZoneRegionFor(
    const vsphere::VmFacts& vm, absl::string_view zone_category,
    absl::string_view region_category) {
  absl::MutexLock lock(&mu_);
  absl::StatusOr<Chains*> found = FindOrFillLocked(vm);
  if (!found.ok()) {
    if (absl::IsNotFound(found.status())) return found.status();  // the VM is gone
    return Annotate(found.status(), "zone tags");
  }
  std::shared_ptr<const ZoneAnswer>& z = (*found)->zone;
  if (!z || z->generation != tags_generation_ || z->zone_category != zone_category ||
      z->region_category != region_category) {
    z = std::make_shared<const ZoneAnswer>(
        ZoneAnswer{tags_generation_, std::string(zone_category), std::string(region_category),
                   ResolveZoneRegion(BuildLocked(**found), zone_category, region_category)});
  }
  return z->answer;
}

std::vector<AncestorChain> TopologyCache::BuildLocked(const Chains& c) const {
  // Inventory paths, for messages: the host and VM chains reach the root folder; the pool chain
  // stops below its compute resource, the second object of the host chain.
  auto paths_of = [](const Chain& chain, absl::string_view base) {
    std::vector<std::string> names;
    for (const auto& obj : chain) names.push_back(obj.name);
    const bool root = base.empty() && !chain.empty() && chain.back().ref.type == "Folder";
    return InventoryPaths(names, root, base);
  };
  const std::vector<Chain> chains = c.Expand();  // host, pool, VM
  std::vector<std::vector<std::string>> paths;
  for (size_t i = 0; i < chains.size(); ++i) {
    if (i == 1) {
      const std::vector<std::string>& host = paths.front();
      paths.push_back(host.size() > 1 && host[1] != "/" ? paths_of(chains[i], host[1])
                                                        : std::vector<std::string>());
    } else {
      paths.push_back(paths_of(chains[i], ""));
    }
  }
  std::vector<AncestorChain> out;
  for (size_t i = 0; i < chains.size(); ++i) {
    AncestorChain chain;
    for (size_t j = 0; j < chains[i].size(); ++j) {
      const auto& obj = chains[i][j];
      TaggedObject t;
      t.description = absl::StrCat(obj.ref.type, " ", obj.ref.value, " (", obj.name, ")");
      if (auto tags = tags_.find(obj.ref); tags != tags_.end()) t.tags = tags->second.tags;
      if (j < paths[i].size()) t.path = paths[i][j];
      chain.push_back(std::move(t));
    }
    out.push_back(std::move(chain));
  }
  return out;
}

TopologyStats TopologyCache::stats() const {
  absl::MutexLock lock(&mu_);
  return stats_;
}

}  // namespace ccm::cloud
