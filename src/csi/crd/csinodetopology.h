#pragma once
// The CSINodeTopology custom resource (csinodetopologies.cns.vmware.com/v1alpha1, cluster-scoped,
// no status subresource), with the reference's field names: spec {nodeID, nodeuuid}, status
// {status, errorMessage, topologyLabels[{key, value}]}. Decisions are in csi/core/node_topology.h.

#include <string>

#include "csi/core/node_topology.h"
#include "kube/client.h"
#include "kube/resource.h"

namespace ccm::csi {

const kube::Resource& CsiNodeTopologies();
inline constexpr char kCsiNodeTopologyCrd[] = "csinodetopologies.cns.vmware.com";

struct CsiNodeTopology {
  std::string name;              // the Node's name
  std::string resource_version;  // metadata.resourceVersion
  std::string node_id;           // spec.nodeID (the Node's name)
  std::string node_uuid;         // spec.nodeuuid (the VM UUID the node plugin reported)
  NodeTopologyStatus status;
};

// Tolerant: a member of the wrong type reads as empty.
CsiNodeTopology ParseCsiNodeTopology(const kube::Json& obj);

// A new object for the Node `node` (uid: the Node's, for the owner reference that lets the
// garbage collector delete it with the Node, as the reference sets it).
kube::Json NewCsiNodeTopology(const std::string& node, const std::string& node_uid,
                              const std::string& node_uuid);

// `obj` with its status replaced by `status` (for an Update, the object's resourceVersion kept).
kube::Json WithStatus(kube::Json obj, const NodeTopologyStatus& status);

}  // namespace ccm::csi
