#pragma once
// CreateVolume parameters (the StorageClass's parameters plus what the external-provisioner adds),
// parsed the way the reference's common/util.go ParseStorageClassParams does for vanilla block
// volumes: keys compare case-insensitively; `datastoreurl` and `storagepolicyname` are the
// settings; `fstype` is deprecated and ignored with a warning (the filesystem comes from the volume
// capability, i.e. csi.storage.k8s.io/fstype); `csimigration: "true"` (volumes of migrated in-tree
// StorageClasses) also allows `datastore-migrationparam` and `diskformat-migrationparam: thin`.
// Any other key is InvalidArgument naming it, as in the reference.
//
// Keys under the sidecars' reserved prefix "csi.storage.k8s.io/" are accepted: the reference's
// own vanilla manifest does not run the provisioner with --extra-create-metadata, but we must
// (the syncer needs PVC names), and a newer sidecar may add keys there that are not ours to refuse.
// pv/name, pvc/name and pvc/namespace are kept for the CNS volume metadata.
// A key given twice (differing only in case) is InvalidArgument: the reference would take either
// one depending on Go's map order.

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace ccm::csi {

struct VolumeParameters {
  std::string datastore_url;        // "ds:///vmfs/volumes/<uuid>/"; empty = any shared datastore
  std::string storage_policy_name;  // SPBM policy; empty = the datastore's default
  std::string migration_datastore;  // in-tree `datastore` name (csimigration only)
  bool csi_migration = false;
  // From --extra-create-metadata; empty when the provisioner does not send them.
  std::string pv_name;
  std::string pvc_name;
  std::string pvc_namespace;
  // Accepted but ignored settings, one line each, for the log (e.g. the deprecated fstype).
  std::vector<std::string> warnings;
};

absl::StatusOr<VolumeParameters> ParseParameters(const std::map<std::string, std::string>& params);

}  // namespace ccm::csi
