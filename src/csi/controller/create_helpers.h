#pragma once
// Pieces of CreateVolume shared by a new volume (controller_create.cc) and a restore from a
// snapshot (controller_restore.cc).

#include <cstdint>
#include <string>
#include <vector>

#include "csi/core/placement.h"
#include "csi/proto/csi.pb.h"

namespace ccm::csi::internal {

// The datastore of `vcenter` with this URL in the inventory view; null when unknown.
const DatastoreCandidate* FindDatastore(const InventorySnapshot& view, const std::string& vcenter,
                                        const std::string& url);

// The response's volume: ID, capacity, the reference's volume context (a file volume's when
// `file`), accessible topology.
void FillVolume(const std::string& volume_id, int64_t capacity_mib,
                const std::vector<Segments>& accessible, ::csi::v1::CreateVolumeResponse* resp,
                bool file = false);

}  // namespace ccm::csi::internal
