#pragma once
// A Node as kubelet v1.24 registers it with --cloud-provider=external: its labels and
// annotations, the uninitialized taint, a Ready status with capacity, nodeInfo (the SMBIOS UUID),
// daemon endpoints and container images, and no addresses (the cloud provider's to set). With a
// --node-ip, the annotation alpha.kubernetes.io/provided-node-ip.

#include <string>

#include "nlohmann/json.hpp"

namespace ccm::peers {

struct KubeletNodeOptions {
  std::string name;
  std::string bios_uuid;  // the VM's BIOS UUID; the Node reports it in SMBIOS byte order
  std::string node_ip;    // kubelet's --node-ip, "" when not given
  int images = 20;        // container images in status.images
};

nlohmann::json KubeletNode(const KubeletNodeOptions& o);

// The status conditions of a kubelet that stopped posting (the node lifecycle controller's
// Unknown), for a Node the CPI's lifecycle controller must look at.
nlohmann::json NotReadyConditions();

}  // namespace ccm::peers
