#pragma once
// Plain values for the CSI messages the pure core decides on. The gRPC layer converts the
// protobuf messages to these and back; nothing here includes a protobuf or gRPC header.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace ccm::csi {

// csi.v1 VolumeCapability.AccessMode.Mode, same numbers as csi.proto so the conversion is a cast.
enum class AccessMode : int {
  kUnknown = 0,
  kSingleNodeWriter = 1,
  kSingleNodeReaderOnly = 2,
  kMultiNodeReaderOnly = 3,
  kMultiNodeSingleWriter = 4,
  kMultiNodeMultiWriter = 5,
  kSingleNodeSingleWriter = 6,
  kSingleNodeMultiWriter = 7,
};

// The csi.proto enum name ("SINGLE_NODE_WRITER"), for messages; "mode <n>" for other values.
std::string AccessModeName(AccessMode mode);

// Which member of VolumeCapability's access_type oneof is set.
enum class AccessType { kUnset, kMount, kBlock };

struct VolumeCapability {
  AccessType access_type = AccessType::kUnset;
  std::string fs_type;                   // MountVolume.fs_type; empty = plugin default
  std::vector<std::string> mount_flags;  // MountVolume.mount_flags
  bool has_access_mode = false;          // the access_mode message is present
  AccessMode mode = AccessMode::kUnknown;
};

// csi.v1 CapacityRange; 0 means "not set", as in protobuf.
struct CapacityRange {
  int64_t required_bytes = 0;
  int64_t limit_bytes = 0;
};

// csi.v1 Topology.segments: key -> value, e.g. {"topology.kubernetes.io/zone": "zone-a"}.
using Segments = std::map<std::string, std::string>;

// csi.v1 TopologyRequirement: the external-provisioner fills both lists (with --strict-topology
// for WaitForFirstConsumer, the selected node's segment only).
struct TopologyRequirement {
  std::vector<Segments> requisite;
  std::vector<Segments> preferred;
};

}  // namespace ccm::csi
