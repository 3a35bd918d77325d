#pragma once
// diagnose, Kubernetes group: every Node as the components see it. The I/O side reads the Nodes
// and asks the production matching (cloud::VSphereInstances for the CPI) about each; this file
// says, per Node, whether it is initialised and why not, and whether it carries what the CSI
// node plugin needs (providerID, zone labels). Healthy Nodes are counted in one line. Pure.

#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "diagnose/report.h"
#include "diagnose/vcenter_checks.h"

namespace ccm::diagnose {

struct NodeFacts {
  std::string name;
  std::string provider_id;
  bool uninitialized_taint = false;  // node.cloudprovider.kubernetes.io/uninitialized
  // The VM the production matching finds (CPI: for a Node without providerID; CSI: the
  // providerID's VM), and its description ("vm-42 (node-1) in vc1/dc1"). nullopt: not asked.
  std::optional<absl::Status> match;
  std::string vm;
  bool powered_off = false;
  // CPI: what its GetInstanceMetadata says for the matched VM (addresses, zone and region):
  // an error here is why the CPI cannot initialise the Node (or label it). nullopt: not asked.
  std::optional<absl::Status> metadata;
  std::string zone, region;  // topology.kubernetes.io/zone and /region labels
  // CSI: the node ID csi.vsphere.vmware.com reported in the Node's CSINode ("" if none), and its
  // CSINodeTopology (nullopt: none; status "", Success or Error, and the syncer's message).
  std::string csi_node_id;
  struct Topology {
    std::string status, error_message;
  };
  std::optional<Topology> topology;
};

struct NodeCheckContext {
  Component component = Component::kCpi;
  bool zones_configured = false;  // [Labels] zone and region set
  std::string zone_category, region_category;
};

void JudgeNodes(const std::vector<NodeFacts>& nodes, const NodeCheckContext& context,
                Report& report);

}  // namespace ccm::diagnose
