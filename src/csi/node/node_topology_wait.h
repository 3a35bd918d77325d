#pragma once
// The node plugin's side of CSINodeTopology (csi/core/node_topology.h), as the reference's
// GetNodeTopologyLabels: create the object for this Node (owner: the Node) or, when it exists,
// set its spec to this node's VM UUID and reset status.status so the syncer answers again; then
// watch it (fieldSelector metadata.name=<node>) until the syncer writes Success or Error, up to
// `timeout` (NODEGETINFO_WATCH_TIMEOUT_MINUTES).
//
// Answers: the segments on Success (empty: no topology configured); Internal with the syncer's
// message on Error; Unavailable naming the syncer when nothing came within `timeout` or the API
// failed; NotFound when the CRD csinodetopologies.cns.vmware.com is not installed (the caller
// then registers without topology, as before the CRD existed).
// Needs on csinodetopologies: create, get, patch, watch; on nodes: get (the reference's node
// ClusterRole).

#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "csi/core/types.h"
#include "kube/client.h"

namespace ccm::csi::node {

absl::StatusOr<Segments> NodeTopologyFromCrd(kube::Client& client, const std::string& node,
                                             const std::string& node_uuid, absl::Duration timeout);

}  // namespace ccm::csi::node
