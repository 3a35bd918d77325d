#pragma once
// What the provider needs to know about a Node to find its VM (copied out of the Node object by
// the controllers, so this layer includes no Kubernetes header).

#include <string>

namespace ccm::cloud {

struct NodeIdentity {
  std::string name;  // metadata.name (usually the guest hostname, or an IP)
  // spec.providerID; empty until initialised. When set it is the ONLY key to the VM (exists,
  // shutdown, metadata): system_uuid, name and IP are used only for a Node without one.
  std::string provider_id;
  std::string system_uuid;       // status.nodeInfo.systemUUID (SMBIOS byte order, usually)
  std::string provided_node_ip;  // annotation alpha.kubernetes.io/provided-node-ip, if any
};

}  // namespace ccm::cloud
