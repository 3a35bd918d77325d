#pragma once
// What placement decides on, as the Controller service sees it (a seam: DatastoreInventory is
// the real one, datastore_inventory.h has the contract; tests hand in a fixed view).

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "csi/core/placement.h"

namespace ccm::csi {

// The datastores and hosts placement decides on (datastore_inventory.h has the contract).
struct InventorySnapshot {
  std::vector<DatastoreCandidate> datastores;  // configuration, then (datacenter, name) order
  std::vector<HostRecord> hosts;
  std::map<std::string, std::string> unloaded;  // vCenter label -> why it is not in the view
  uint64_t generation = 0;
};

class PlacementView {
 public:
  using SnapshotPtr = std::shared_ptr<const InventorySnapshot>;
  virtual ~PlacementView() = default;
  // From memory; Unavailable only while no vCenter has been loaded.
  virtual absl::StatusOr<SnapshotPtr> Snapshot() const = 0;
  // The free space of the datastore at `url` in `vcenter` changed by `delta_bytes`.
  virtual void NoteChange(const std::string& vcenter, const std::string& url,
                          int64_t delta_bytes) = 0;
  // The view is stale: read it again now.
  virtual void RequestFullRefresh() = 0;
};

}  // namespace ccm::csi
