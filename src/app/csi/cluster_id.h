#pragma once
// The cluster-id the controller and the syncer file volumes under (csi/core/cluster_id.h): the one
// in csi-vsphere.conf, else the one in ConfigMap vsphere-csi-cluster-id of the driver's namespace
// (CSI_NAMESPACE), created immutable with a new UUID when absent. Two processes starting at once
// (the controller and the syncer) agree: the ConfigMap's name is unique, the second create fails
// and the value is read back. Errors name the ConfigMap and what to fix.

#include <string>

#include "absl/status/statusor.h"
#include "kube/client.h"

namespace ccm::app {

absl::StatusOr<std::string> ResolveClusterId(kube::Client& client, const std::string& ns,
                                             const std::string& configured);

// A random (version 4) UUID, lower case.
std::string NewUuid();

}  // namespace ccm::app
