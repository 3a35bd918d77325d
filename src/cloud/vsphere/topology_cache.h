#pragma once
// Ancestors of VMs and the tags attached to them, for zone/region resolution, fetched in batches:
// on a miss the cache resolves the ancestry of EVERY VM the inventory knows that it has not seen
// yet (a few level-by-level RetrievePropertiesEx rounds) and fetches the tags of every object of
// those chains in ONE list-attached-tags-on-objects call. So initialising 1,000 nodes costs a
// handful of vCenter requests instead of thousands (the reference logs in to the REST API and
// walks the ancestors once per node). Tags expire after a TTL and are then fetched again, again
// in one batch.
// Thread-safe; concurrent misses share one fetch.

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "cloud/core/zones.h"
#include "common/clock.h"
#include "vsphere/ancestry.h"
#include "vsphere/inventory_cache.h"
#include "vsphere/tagging.h"

namespace ccm::cloud {

struct TopologyStats {
  uint64_t hits = 0;
  uint64_t misses = 0;
  uint64_t batch_fetches = 0;  // tag batch calls
};

class TopologyCache {
 public:
  TopologyCache(vsphere::AncestryResolver& ancestry, vsphere::TaggingClient& tagging,
                vsphere::InventoryCache& inventory, absl::Duration tag_ttl, Clock* clock);

  // ResolveZoneRegion over the VM's chains (host, resource pool, VM; each object with its tags,
  // nearest first). `vm` is the inventory's view of the VM: chains resolved for another host,
  // pool or folder are resolved again. The answer is kept per VM until its tags are fetched again
  // or it moves: a Node sync then builds no chain (a few small strings per VM, not the chains).
  absl::StatusOr<std::optional<ZoneRegion>> ZoneRegionFor(const vsphere::VmFacts& vm,
                                                          absl::string_view zone_category,
                                                          absl::string_view region_category);
  TopologyStats stats() const;

 private:
  using Chain = std::vector<vsphere::InventoryRef>;
  struct ZoneAnswer {
    uint64_t generation;  // tags_generation_ it was resolved at
    std::string zone_category, region_category;
    absl::StatusOr<std::optional<ZoneRegion>> answer;
  };
  // A VM's chains. Chains above the VM are shared by every VM under the same host, pool or
  // folder (interned), so 1,000 VMs on 8 hosts hold 8 host chains, not 1,000.
  struct Chains {
    vsphere::InventoryRef vm;
    std::shared_ptr<const Chain> host, pool, parents;  // parents: the VM chain above the VM
    // host, pool and the VM chain (the VM itself first), each nearest first.
    std::vector<Chain> Expand() const;
    std::shared_ptr<const ZoneAnswer> zone;  // ZoneRegionFor's, cached
  };
  absl::StatusOr<Chains*> FindOrFillLocked(const vsphere::VmFacts& vm)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  std::vector<AncestorChain> BuildLocked(const Chains& c) const ABSL_SHARED_LOCKS_REQUIRED(mu_);
  std::shared_ptr<const Chain> InternLocked(Chain chain) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void StoreChainsLocked(std::vector<vsphere::VmAncestry>& resolved)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Resolves ancestry for `vm` and every other VM of the inventory not resolved yet, and tags
  // for every object of those chains that has none cached (or expired).
  absl::Status FillLocked(const vsphere::Moref& vm) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool FreshLocked(const Chains& c) const ABSL_SHARED_LOCKS_REQUIRED(mu_);
  // Whether the chains were built for where the VM sits now.
  static bool SamePlacement(const Chains& c, const vsphere::VmFacts& f);

  vsphere::AncestryResolver& ancestry_;
  vsphere::TaggingClient& tagging_;
  vsphere::InventoryCache& inventory_;
  const absl::Duration tag_ttl_;
  Clock* const clock_;
  mutable absl::Mutex mu_;
  std::map<vsphere::Moref, Chains> chains_ ABSL_GUARDED_BY(mu_);
  // Interned chains by their first object (weak: a chain no VM uses any more goes away).
  std::map<vsphere::Moref, std::weak_ptr<const Chain>> interned_ ABSL_GUARDED_BY(mu_);
  struct Tags {
    std::vector<AttachedTag> tags;
    absl::Time fetched;
  };
  std::map<vsphere::Moref, Tags> tags_ ABSL_GUARDED_BY(mu_);
  uint64_t tags_generation_ ABSL_GUARDED_BY(mu_) = 0;  // bumped whenever tags_ changes
  TopologyStats stats_ ABSL_GUARDED_BY(mu_);
};

}  // namespace ccm::cloud
