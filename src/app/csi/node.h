#pragma once
// vsphere-csi-driver's node mode: the Node service (src/csi/node) from the environment the
// reference's node DaemonSet sets, so its manifests run unchanged:
//   NODE_NAME             this node's name (required; the DaemonSet sets it from spec.nodeName)
//   MAX_VOLUMES_PER_NODE  NodeGetInfo's volume limit (unset: none reported), checked here
//   VSPHERE_CSI_CONFIG    csi-vsphere.conf, read only when present and only for its topology
//                         part ([Labels] zone/region, topology-categories); absent: no topology,
//                         as the reference's node without the file
//   KUBECONFIG            a kubeconfig for the API; unset: in-cluster config; neither: no API
//                         (node ID from product_serial, no topology)
// Ours (the defaults are the reference's fixed values):
//   CSI_DEVICE_BY_ID_DIR  where attached disks appear as wwn-0x<uuid> (/dev/disk/by-id)
//   CSI_DEVICE_WAIT       how long NodeStage/NodePublish wait for a disk link after a SCSI
//                         rescan, a Go-style duration ("10s")

#include <map>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "app/csi/options.h"
#include "csi/node/node_service.h"
#include "kube/client.h"

namespace ccm::app {

inline constexpr char kEnvDeviceByIdDir[] = "CSI_DEVICE_BY_ID_DIR";
inline constexpr char kEnvDeviceWait[] = "CSI_DEVICE_WAIT";
inline constexpr char kEnvKubeconfig[] = "KUBECONFIG";

// The Kubernetes API client from KUBECONFIG, else the in-cluster configuration; null (with a
// warning that ends with `without`, what the process does without it) when there is neither.
// Its rate: INCLUSTER_CLIENT_QPS / INCLUSTER_CLIENT_BURST (client_rate.h).
std::shared_ptr<kube::Client> ApiClientFromEnv(const std::map<std::string, std::string>& env,
                                               const std::string& without);

// The Node service's options from the environment. Errors (NODE_NAME unset, a bad
// MAX_VOLUMES_PER_NODE or CSI_DEVICE_WAIT, an unreadable or invalid csi-vsphere.conf that
// exists) name the variable or file to fix.
absl::StatusOr<csi::node::NodeServiceOptions> NodeServiceOptionsFromEnv(
    const CsiOptions& options, const std::map<std::string, std::string>& env);

}  // namespace ccm::app
