#pragma once
// Datastore choice for CreateVolume, and capacity per topology segment for GetCapacity.
//
// The I/O side lists the candidate datastores of every configured vCenter/datacenter (datastore
// cluster members included), each with its free space and the complete topology segments of the
// hosts that mount it (a datastore mounted by every host of zone-a has {zone=zone-a, region=r1}).
// Same names, and even the same URL (one NFS export mounted in two vCenters), occur in several
// vCenters or datacenters: a candidate is keyed on (vcenter, url), never on its name.
//
// Order (ChooseDatastores), as the reference's placementengine does it, made deterministic:
//  - with accessibility requirements: the preferred segments first, in their order, then the
//    requisite ones; within one segment the candidates reachable from it, most free space first
//    (ties: vcenter, then url). Each candidate appears once, at its first place. With requisite
//    segments, nothing outside them; with preferred only, the remaining candidates follow.
//  - without: every candidate (reachable from all of `cluster_segments` when the cluster has
//    topology: an unconstrained volume must be usable on any node), most free space first.
// Candidates with less free space than the volume are dropped. The controller tries the choices in
// order (CNS may still refuse one).
//
// Errors:
//  - accessibility requirements while the config defines no topology: InvalidArgument (as the
//    reference: "topology category names not specified");
//  - datastoreurl matching no candidate: InvalidArgument naming it;
//  - datastoreurl not reachable from the requested topology: InvalidArgument naming both (as the
//    reference);
//  - no candidate reachable from the requested topology: ResourceExhausted (the spec's code for an
//    unsatisfiable accessible topology; the reference answers Internal);
//  - no reachable candidate with enough free space: ResourceExhausted naming the largest free
//    space seen.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "csi/core/types.h"

namespace ccm::csi {

struct DatastoreCandidate {
  std::string vcenter;
  std::string datacenter;
  std::string name;
  std::string url;                // "ds:///vmfs/volumes/<uuid>/"
  std::string moref;              // "datastore-42"
  std::string datastore_cluster;  // the StoragePod it belongs to; empty for a plain datastore
  int64_t free_bytes = 0;
  std::vector<Segments> accessible;  // complete segments of the hosts mounting it; empty = none
};

struct PlacementRequest {
  int64_t size_mib = 0;
  std::string datastore_url;  // the datastoreurl parameter; empty = any
  // Null, or both lists empty: no requirement.
  const TopologyRequirement* requirement = nullptr;
  bool topology_configured = false;
  // Every distinct segment of the cluster's nodes (empty when the cluster has no topology).
  std::vector<Segments> cluster_segments;
};

struct PlacementChoice {
  size_t candidate = 0;  // index into the candidates
  // CreateVolume's accessible_topology: the datastore's segments (sorted, distinct); empty
  // without topology.
  std::vector<Segments> accessible_topology;
};

absl::StatusOr<std::vector<PlacementChoice>> ChooseDatastores(
    const std::vector<DatastoreCandidate>& candidates, const PlacementRequest& request);

// GetCapacity for a segment (empty = the whole cluster): the free space of the distinct
// (vcenter, url) candidates reachable from it, summed, and the largest one (maximum_volume_size).
struct SegmentCapacity {
  int64_t available_bytes = 0;
  int64_t maximum_volume_bytes = 0;
};
SegmentCapacity CapacityForSegment(const std::vector<DatastoreCandidate>& candidates,
                                   const Segments& segment);

}  // namespace ccm::csi
