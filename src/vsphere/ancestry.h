#pragma once
// Ancestry of inventory objects (for zone/region tags: nearest ancestor wins). Parents are fetched
// level by level, one RetrievePropertiesEx per level for all objects at once (a ManagedEntity
// propSet covers every type), and cached, so resolving 1000 VMs costs one call for the VMs plus
// one per inventory depth the first time, and just the VM call later.

#include <map>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "vsphere/client.h"
#include "vsphere/moref.h"

namespace ccm::vsphere {

struct InventoryRef {
  Moref ref;
  std::string name;
  bool operator==(const InventoryRef& o) const { return ref == o.ref && name == o.name; }
};

struct VmAncestry {
  InventoryRef vm;
  // Nearest first. host_chain: host, cluster/compute resource, host folder(s), datacenter,
  // folders above it, root folder.
  std::vector<InventoryRef> host_chain;
  // The VM's resource pool and its parent pools / vApps (stops before the compute resource).
  std::vector<InventoryRef> resource_pool_chain;
  // The VM itself, its folder(s), datacenter, folders above it, root folder.
  std::vector<InventoryRef> vm_chain;
  InventoryRef datacenter;  // empty ref if the VM is not below a datacenter
};

// Where a VM sits, as the inventory cache already knows it (no vCenter call needed for the VM).
struct VmPlacement {
  Moref vm;
  std::string name;
  Moref host;           // runtime.host
  Moref resource_pool;  // resourcePool
  Moref parent;         // parent folder (or vApp)
};

class AncestryResolver {
 public:
  // Cached names/parents of non-VM objects are trusted for `ttl` (hosts rarely move).
  explicit AncestryResolver(Client& client, absl::Duration ttl = absl::Minutes(10),
                            Clock* clock = nullptr);

  // Per VM (in input order; VMs that no longer exist are left out).
  absl::StatusOr<std::vector<VmAncestry>> ResolveVms(const std::vector<Moref>& vms);
  // Same, from placements already known (e.g. the inventory cache's, kept current by its
  // property-collector stream): only the objects above the VMs are fetched (and cached).
  absl::StatusOr<std::vector<VmAncestry>> ResolvePlacements(const std::vector<VmPlacement>& vms);
  // Any objects: each object's chain, itself first, up to the root.
  absl::StatusOr<std::map<Moref, std::vector<InventoryRef>>> ResolveChains(
      const std::vector<Moref>& objs);

  void Clear();
  int calls() const;  // RetrievePropertiesEx rounds issued (for tests / metrics)

 private:
  struct Entry {
    std::string name;
    Moref parent;
    absl::Time fetched;
  };
  // Makes sure every object in `start` and all their ancestors are cached.
  absl::Status Fill(std::vector<Moref> start);
  std::vector<InventoryRef> ChainLocked(const Moref& start) const ABSL_SHARED_LOCKS_REQUIRED(mu_);
  VmAncestry AncestryLocked(const VmPlacement& p) const ABSL_SHARED_LOCKS_REQUIRED(mu_);

  Client& client_;
  const absl::Duration ttl_;
  Clock* const clock_;
  mutable absl::Mutex mu_;
  std::map<Moref, Entry> cache_ ABSL_GUARDED_BY(mu_);
  int calls_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace ccm::vsphere
