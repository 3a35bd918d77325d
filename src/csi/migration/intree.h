#pragma once
// Pure rules about in-tree vSphere volumes (the VCP's kubernetes.io/vsphere-volume) under CSI
// migration, as the reference driver has them.

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "nlohmann/json.hpp"

namespace ccm::csi {

// "[datastore1] kubevols/pvc-1.vmdk" (the datastore may carry a folder, "[dc1/ds1] ..." : its
// last segment is the name).
struct VmdkPath {
  std::string datastore;  // "datastore1"
  std::string file;       // "kubevols/pvc-1.vmdk"
};
absl::StatusOr<VmdkPath> ParseVmdkPath(absl::string_view volume_path);

// The disk's URL for CnsCreateVolume's backingDiskUrlPath:
// https://<vcenter>/folder/<file>?dcPath=<datacenter>&dsName=<datastore>, the query values
// escaped as a URL path segment (as Go's url.PathEscape, which the reference uses).
std::string BackingDiskUrlPath(absl::string_view vcenter_host, const VmdkPath& disk,
                               absl::string_view datacenter);
std::string PathEscape(absl::string_view s);

// A PersistentVolume the syncer registers with CNS (the reference's rule): an in-tree
// vsphereVolume PV that is static (no pv.kubernetes.io/provisioned-by), or that the in-tree
// provisioner made and kube-controller-manager marked pv.kubernetes.io/migrated-to:
// csi.vsphere.vmware.com.
bool IsMigratedInTreePv(const nlohmann::json& pv);
std::string InTreeVolumePath(const nlohmann::json& pv);  // spec.vsphereVolume.volumePath
// The VMDK paths of a Pod's inline in-tree volumes (spec.volumes[].vsphereVolume.volumePath).
std::vector<std::string> PodInTreeVolumePaths(const nlohmann::json& pod);
std::string InTreeStoragePolicyName(const nlohmann::json& pv);  // ...storagePolicyName

}  // namespace ccm::csi
