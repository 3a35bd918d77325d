#pragma once
// CSI node IDs as the reference defines them (node.go NodeGetInfo): the Kubernetes node name
// ($NODE_NAME), or, with the "use-csinode-id" feature state (on in the reference's current vanilla
// manifests), the VM's UUID read from /sys/class/dmi/id/product_serial. Its controller resolves a
// name through the Node object and a UUID directly to the VM.
//
// Ours: NodeGetInfo answers the VM UUID, like the reference's current default; the node plugin
// takes it from its Node's spec.providerID ("vsphere://<uuid>", written by our CCM) so it needs
// neither vCenter credentials nor /sys, and falls back to product_serial when providerID is not
// set yet. The controller accepts both forms, so VolumeAttachments made under either setting (or by
// the reference) keep resolving.

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ccm::csi {

struct NodeRef {
  enum class Kind { kVmUuid, kNodeName };
  Kind kind = Kind::kVmUuid;
  std::string value;  // lower-case UUID, or the node name as given
  bool operator==(const NodeRef&) const = default;
};

// A UUID (any case) is a VM UUID, lower-cased; anything else is a node name (a node name that is
// itself a UUID would be taken as a VM UUID; Kubernetes nodes are named after hosts, not UUIDs).
// InvalidArgument for an empty ID.
absl::StatusOr<NodeRef> ParseNodeId(absl::string_view node_id);

// The VM UUID in "vsphere://<uuid>" (prefix in any case). InvalidArgument otherwise.
absl::StatusOr<std::string> VmUuidFromProviderId(absl::string_view provider_id);

// The VM UUID in product_serial's "VMware-56 4d 39 5e d8 07 e1 8a-cb 25 b7 9f 65 eb 2b 9f"
// (surrounding white space ignored), as the reference's GetSystemUUID reads it, lower-cased:
// "564d395e-d807-e18a-cb25-b79f65eb2b9f". InvalidArgument without the "VMware-" prefix or without
// exactly 32 hex digits.
absl::StatusOr<std::string> VmUuidFromProductSerial(absl::string_view product_serial);

}  // namespace ccm::csi
