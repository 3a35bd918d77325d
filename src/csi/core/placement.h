#pragma once
// Datastore choice for CreateVolume, and capacity per topology segment for GetCapacity: the
// reference's placement rules (vanilla controller, placementengine), from an in-memory view of
// the vCenters (every datastore with the hosts that mount it, every host with its topology
// segment), decided here without I/O.
//
// Which datastores qualify (a volume must attach on every node that may run its pod):
//  - without accessibility requirements: the datastores mounted by the hosts of ALL node VMs of
//    the cluster (GetSharedDatastoresInK8SCluster). Node VMs in two vCenters share no datastore.
//  - with requirements: for each requested segment (preferred first, then requisite), the
//    complete segments of the hosts that match it; a datastore qualifies for a complete segment
//    when EVERY host of that segment (nodes or not) mounts it and all those hosts are in the
//    datastore's vCenter (placementengine GetSharedDatastores: GetHostsForSegment, then the
//    datastores shared by those hosts). Within a segment, the preferred datastores of the
//    segment (tag category cns.vmware.topology-preferred-datastores, tag name = a value of the
//    segment) come first.
//  - `datastoreurl` narrows the candidates to that datastore (a URL), or to the members of a
//    datastore cluster (StoragePod) named by its name or MOID; the result must still qualify.
//  - a storage policy narrows them to the datastores SPBM finds compatible with it.
// Order: the requirement's order as above, then most free space first (ties: vCenter, URL);
// without requirements, most free space first. Each datastore appears once, at its first place;
// those with less free space than the volume are dropped. The controller tries the choices in
// order (CNS may still refuse one).
// accessible_topology of a choice: every complete segment whose hosts all mount the datastore.
//
// Errors (every message names the datastores and what is missing, never just "no datastore"):
//  - requirements while the config defines no topology: InvalidArgument (the reference:
//    "topology category names not specified");
//  - datastoreurl that is no datastore or datastore cluster of the vCenters: InvalidArgument;
//  - datastoreurl (or every member of the datastore cluster) not shared as required:
//    FailedPrecondition naming the datastore and the hosts that lack it;
//  - no node VM known, without requirements: FailedPrecondition saying so;
//  - no datastore shared as required: ResourceExhausted naming, per datastore, the hosts that
//    lack it (the spec's code for an unsatisfiable accessible topology);
//  - shared datastores exist but none satisfies the storage policy: FailedPrecondition naming
//    the policy and those datastores;
//  - none has room: ResourceExhausted naming the largest free space seen.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "csi/core/types.h"

namespace ccm::csi {

struct DatastoreCandidate {
  std::string vcenter;
  std::string datacenter;
  std::string name;
  std::string url;                      // "ds:///vmfs/volumes/<uuid>/"
  std::string moref;                    // "datastore-42"
  std::string type;                     // summary.type: VMFS, NFS, vsan, vvol, ...
  std::string datastore_cluster;        // the StoragePod it belongs to; empty for a plain one
  std::string datastore_cluster_moref;  // "group-p3"
  int64_t free_bytes = 0;
  std::vector<std::string> hosts;          // MOIDs of the hosts mounting it, sorted
  std::vector<std::string> preferred_for;  // topology values it is a preferred datastore of
  // Empty when the driver's vCenter user may create volumes there; else why not, e.g. "user
  // k8s@vsphere.local lacks Datastore.FileManagement" (the reference's csi-auth-check). Such a
  // datastore is never chosen, and placement errors name it.
  std::string no_privilege;
  // CNS manager suspended volume creation here (a custom value kDatastoreSuspended, as the
  // reference checks it): never chosen, and placement errors name it.
  bool suspended = false;
};

// An ESXi host of a configured vCenter.
struct HostRecord {
  std::string vcenter;
  std::string moid;                 // "host-21"
  std::string name;                 // "esx-1.example.com"
  std::optional<Segments> segment;  // complete segment; nullopt without (or incomplete) tags
  std::string problem;              // without a segment (topology configured): why, for messages
};

// The host a node VM runs on.
struct NodeHost {
  std::string node;  // the VM's name, for messages
  std::string vcenter;
  std::string host;  // MOID
};

struct PlacementRequest {
  int64_t size_mib = 0;
  // The datastoreurl parameter: a datastore URL, or a datastore cluster's name or MOID; empty =
  // any.
  std::string datastore_url;
  // Null, or both lists empty: no requirement.
  const TopologyRequirement* requirement = nullptr;
  bool topology_configured = false;
  // Every node VM's host: the no-requirement case needs them all.
  std::vector<NodeHost> node_hosts;
  // The Nodes whose VM is not known (no CSINode node ID, no providerID), for messages.
  std::vector<std::string> unknown_nodes;
  // Storage policy: SPBM's verdict per candidate (same index); null = no policy.
  const std::vector<bool>* compatible = nullptr;
  std::string policy_name;  // for messages
};

// Text of placement errors caused by the vCenter user's datastore privileges (diagnose tells
// them from placement problems): every datastore refused, or some left out beside another cause.
inline constexpr char kNoPrivilegeOnAny[] = "the vCenter user may not create volumes on any ";
inline constexpr char kSkippedForPrivileges[] = "; skipped for privileges: ";
// The custom value CNS manager gives a datastore it suspends volume creation on, and the text of
// placement errors naming such datastores.
inline constexpr char kDatastoreSuspended[] = "cns.vmware.com/datastoreSuspended";
inline constexpr char kNoneTakesNewVolumes[] = " takes new volumes now";
inline constexpr char kSuspendedForNewVolumes[] =
    "suspended for new volumes (custom value cns.vmware.com/datastoreSuspended, as CNS manager "
    "sets it): ";

struct PlacementChoice {
  size_t candidate = 0;  // index into the candidates
  // CreateVolume's accessible_topology (sorted, distinct); empty without topology.
  std::vector<Segments> accessible_topology;
};

absl::StatusOr<std::vector<PlacementChoice>> ChooseDatastores(
    const std::vector<DatastoreCandidate>& candidates, const std::vector<HostRecord>& hosts,
    const PlacementRequest& request);

// The complete segments from which `c` is fully accessible (every host of the segment mounts it),
// sorted: a volume's accessible topology.
std::vector<Segments> AccessibleSegments(const DatastoreCandidate& c,
                                         const std::vector<HostRecord>& hosts);

// GetCapacity for a segment (empty = the whole cluster): the free space of the distinct
// (vcenter, url) candidates accessible from it (from a complete segment matching it, by the
// rule above), summed, and the largest one (maximum_volume_size).
struct SegmentCapacity {
  int64_t available_bytes = 0;
  int64_t maximum_volume_bytes = 0;
};
SegmentCapacity CapacityForSegment(const std::vector<DatastoreCandidate>& candidates,
                                   const std::vector<HostRecord>& hosts, const Segments& segment);

// "ds:///vmfs/volumes/x/" and "ds:///vmfs/volumes/x" name the same datastore.
bool SameDatastoreUrl(const std::string& a, const std::string& b);

}  // namespace ccm::csi
