#pragma once
// The [Nodes] section of vsphere.conf in typed form (CIDRs parsed once at load), used by the
// address selection. Filled by cloud/config; read by cloud/core/addresses.

#include <string>
#include <vector>

#include "common/ip.h"

namespace ccm::cloud {

struct NodesConfig {
  std::vector<IpNet> internal_network_subnet_cidrs;          // internal-network-subnet-cidr
  std::vector<IpNet> external_network_subnet_cidrs;          // external-network-subnet-cidr
  std::string internal_vm_network_name;                      // internal-vm-network-name
  std::string external_vm_network_name;                      // external-vm-network-name
  std::vector<IpNet> exclude_internal_network_subnet_cidrs;  // exclude-internal-network-subnet-cidr
  std::vector<IpNet> exclude_external_network_subnet_cidrs;  // exclude-external-network-subnet-cidr
  bool operator==(const NodesConfig&) const = default;
};

}  // namespace ccm::cloud
