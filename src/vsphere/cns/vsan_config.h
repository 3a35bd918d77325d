#pragma once
// vSAN's cluster configuration as the CSI driver needs it for file volumes:
// VsanVcClusterConfigSystem.VsanClusterGetConfig (govmomi vsan.Client; the vsanHealth endpoint
// and "urn:vsan" namespace, as CNS), read for VsanConfigInfoEx.enabled (a vSAN cluster) and
// fileServiceConfig.enabled (vSAN file services), as the reference's authmanager.go does.

#include <string>

#include "absl/status/statusor.h"
#include "pugixml.hpp"
#include "vsphere/client.h"
#include "vsphere/moref.h"

namespace ccm::vsphere::cns {

struct VsanClusterConfig {
  bool vsan_enabled = false;
  bool file_service_enabled = false;  // fileServiceConfig present and enabled
  bool operator==(const VsanClusterConfig&) const = default;
};

// VsanVcClusterConfigSystem:vsan-cluster-config-system.
const Moref& VsanClusterConfigSystemRef();

std::string VsanClusterGetConfigArgs(const Moref& cluster);
// Internal error naming the problem for an answer that is not a VsanConfigInfoEx.
absl::StatusOr<VsanClusterConfig> ParseVsanClusterConfig(const pugi::xml_node& returnval);

// One request. Transport and session failures are Unavailable; a fault keeps its name
// (NotFound for a cluster that is gone).
absl::StatusOr<VsanClusterConfig> GetVsanClusterConfig(Client& client, const Moref& cluster);

}  // namespace ccm::vsphere::cns
