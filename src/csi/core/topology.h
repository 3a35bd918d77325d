#pragma once
// Topology keys and the node's accessible topology.
//
// Which keys the reference publishes (syncer/cnsoperator/controller/csinodetopology
// getNodeTopologyInfo, and node.go for the older path):
//  - [Labels] topology-categories = "k8s-zone,k8s-rack" (comma-separated vSphere tag categories)
//    wins when set: one key per category, "topology.csi.vmware.com/<category>";
//  - else [Labels] zone and region (both set): the zone category's value under
//    "failure-domain.beta.kubernetes.io/zone" and the region's under ".../region", unless
//    [TopologyCategory "<category>"] label = "..." names another key (e.g.
//    "topology.kubernetes.io/zone");
//  - else no topology (empty segments).
// We publish exactly the same keys for the same csi-vsphere.conf, so StorageClasses'
// allowedTopologies and existing PVs' node affinity keep matching.
//
// Values: the reference's node plugin asks vCenter for its VM's tags; ours reads its Node object,
// whose zone and region labels our CCM sets from the same tags (topology.kubernetes.io/zone|region,
// and the failure-domain.beta.kubernetes.io spellings). A category that is neither the zone nor the
// region category is read from the Node label named like the published key
// ("topology.csi.vmware.com/<category>"), which an administrator (or an earlier registration of the
// reference driver) must have set.

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "csi/core/types.h"

namespace ccm::csi {

// The topology part of csi-vsphere.conf.
struct TopologyConfig {
  std::string zone_category;                           // [Labels] zone
  std::string region_category;                         // [Labels] region
  std::vector<std::string> topology_categories;        // [Labels] topology-categories, split
  std::map<std::string, std::string> category_labels;  // [TopologyCategory "<cat>"] label
};

// "k8s-zone, k8s-rack" -> {"k8s-zone", "k8s-rack"}: split on commas, trimmed, empties dropped.
std::vector<std::string> SplitTopologyCategories(absl::string_view value);

enum class TopologyMode { kNone, kZoneRegion, kCategories };
TopologyMode ModeOf(const TopologyConfig& config);

// The keys the driver publishes, in a stable order (zone then region; categories as configured).
// Empty for kNone.
std::vector<std::string> TopologyKeys(const TopologyConfig& config);

// NodeGetInfo's accessible_topology from the Node's labels. kNone: empty. Otherwise every key of
// TopologyKeys with its value; Unavailable naming the missing category and the labels looked at
// when the Node lacks one (the CCM has not initialised the Node yet: the registrar retries, and
// registering without topology would stick, as the kubelet reads it once).
absl::StatusOr<Segments> NodeTopology(const std::map<std::string, std::string>& node_labels,
                                      const TopologyConfig& config);

// A requested segment matches an accessible one when every key of the request is present with the
// same value (a request may name the region only). Empty request matches everything.
bool SegmentMatches(const Segments& requested, const Segments& accessible);

// "{k=v, k2=v2}" for messages.
std::string FormatSegments(const Segments& segments);

}  // namespace ccm::csi
