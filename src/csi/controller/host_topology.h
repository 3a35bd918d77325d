#pragma once
// The topology segment of an ESXi host, and the accessible topology of a datastore, from vSphere
// tags. Pure: the inventory fetches each host's ancestor chain and every chain object's tags in
// batches and hands them here.
//
// A host's value for a category is the tag of that category on the nearest object of its chain
// (host, cluster, host folders, datacenter, ...), as the CCM resolves a node's zone, so a host and
// the Node of a VM on it agree. A host lacking a value for some category has no complete segment
// and makes no datastore reachable (the reference's placement engine skips such hosts too).

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "csi/core/topology.h"
#include "csi/core/types.h"
#include "vsphere/tagging.h"

namespace ccm::csi {

// The tag categories to read and the segment key each one fills, in the same order.
struct TopologyCategories {
  std::vector<std::string> categories;
  std::vector<std::string> keys;
  bool empty() const { return categories.empty(); }
};

// kCategories: the configured categories; kZoneRegion: zone then region; kNone: empty. The keys
// are TopologyKeys(config), which lists them in that order.
TopologyCategories CategoriesOf(const TopologyConfig& config);

// One object of a chain with its tags, nearest object first.
struct TaggedRef {
  std::string description;  // "HostSystem:host-21 (esx-1)", for messages
  std::vector<vsphere::Tag> tags;
};

// The complete segment of a host, nullopt when some category has no tag on the chain.
// FailedPrecondition when the nearest object with a category carries two tags of it (guessing
// would publish a datastore in the wrong zone), naming the object, the category and the tags.
absl::StatusOr<std::optional<Segments>> SegmentOfChain(const std::vector<TaggedRef>& chain,
                                                       const TopologyCategories& categories);

// A host's segment, or why it has none: "no tag of category k8s-zone on HostSystem:host-21
// (esx-1) or its 3 ancestors" (the first object of the chain is named), or SegmentOfChain's
// ambiguity message.
struct HostTopology {
  std::optional<Segments> segment;
  std::string problem;     // empty with a segment
  bool ambiguous = false;  // two tags of a category on one object (worth a warning)
};
HostTopology HostTopologyOf(const std::vector<TaggedRef>& chain,
                            const TopologyCategories& categories);

// The distinct segments of the hosts mounting a datastore, sorted; hosts without a complete
// segment are left out.
std::vector<Segments> DistinctSegments(const std::vector<std::optional<Segments>>& hosts);

}  // namespace ccm::csi
