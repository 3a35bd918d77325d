#pragma once
// Where a file volume (a vSAN file share) may go, as the reference decides (vanilla
// controller.go createFileVolume, authmanager.go getFSEnabledClusterToDsURLsMap): the vSAN
// datastores of clusters with vSAN file services enabled, then narrowed as a block volume is:
// datastoreurl, the topology requirement (a datastore reachable from a requested segment), the
// storage policy. All candidates go to CNS in one create spec and CNS picks one of them.
// Beyond the reference: targetvSANFileShareDatastoreURLs (honoured by its 2.x releases) and
// targetvSANFileShareClusters (its supervisor flavour's key) narrow the candidates when set, and
// an empty result names every vSAN datastore with the reason it was left out.

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "csi/core/placement.h"
#include "csi/core/topology.h"

namespace ccm::csi {

// A compute cluster of one vCenter, as VsanClusterGetConfig and its datastore list show it.
struct FileServiceCluster {
  std::string moid;  // "domain-c7"
  std::string name;
  bool vsan = false;
  bool file_service = false;
  std::vector<std::string> datastores;  // MOIDs
};

// A vCenter's csi-vsphere.conf targets (empty: no restriction).
struct FileShareTargets {
  std::vector<std::string> datastore_urls;
  std::vector<std::string> clusters;  // names or MOIDs
};

struct FilePlacementRequest {
  std::string datastore_url;                         // the datastoreurl parameter
  const TopologyRequirement* requirement = nullptr;  // null: any
  const std::vector<bool>* compatible = nullptr;     // per datastore; null: no policy
  std::string policy_name;
};

// The indices of `datastores` a file share may be created on, in their order. FailedPrecondition
// (the reference's code) naming each vSAN datastore and why it was left out, and what to
// enable, when none is left; `clusters` holds the vCenters that were asked (a vCenter missing
// from it is left out and named).
absl::StatusOr<std::vector<size_t>> ChooseFileShareDatastores(
    const std::vector<DatastoreCandidate>& datastores, const std::vector<HostRecord>& hosts,
    const std::map<std::string, std::vector<FileServiceCluster>>& clusters,
    const std::map<std::string, FileShareTargets>& targets, const FilePlacementRequest& req);

}  // namespace ccm::csi
