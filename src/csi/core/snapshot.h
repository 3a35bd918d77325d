#pragma once
// CSI snapshots of CNS volumes: their IDs, names in CNS and the per-volume limit, as the
// reference driver forms them (so VolumeSnapshotContents made by either driver work with both).
//  - Snapshot ID: "<CSI volume ID>+<CNS snapshot ID>" (CNS asks for both IDs in every call).
//  - CNS description: "<CSI snapshot name>-<CNS volume ID>", the name of the operation record
//    too; a retried CreateSnapshot finds its snapshot by it.
//  - Limit: csi-vsphere.conf [Snapshot] global-max-snapshots-per-block-volume (default 3), or the
//    granular limit for volumes on vSAN / vVol datastores when set (> 0).

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ccm::csi {

struct SnapshotRef {
  std::string volume_id;        // the CSI volume ID (may be "<uuid>@<vCenter>")
  std::string cns_snapshot_id;  // as CNS spells it
  bool operator==(const SnapshotRef&) const = default;
};

std::string FormatSnapshotId(absl::string_view volume_id, absl::string_view cns_snapshot_id);
// InvalidArgument naming the ID unless it is exactly two non-empty parts around one '+'.
absl::StatusOr<SnapshotRef> ParseSnapshotId(absl::string_view snapshot_id);

std::string SnapshotDescription(absl::string_view name, absl::string_view cns_volume_id);

struct SnapshotLimits {
  int global = 3;
  int vsan = 0;  // 0: the global limit
  int vvol = 0;
};

struct SnapshotLimit {
  int max = 0;
  std::string key;  // the csi-vsphere.conf key it comes from, for messages
};
// The limit for a volume on the datastore of this URL ("ds:///vmfs/volumes/vsan:.../" is vSAN,
// ".../vvol:.../" a vVol datastore, as the reference tells them).
SnapshotLimit SnapshotLimitFor(const SnapshotLimits& limits, absl::string_view datastore_url);

}  // namespace ccm::csi
