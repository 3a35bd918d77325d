#pragma once
// Volume capabilities this driver serves: CNS block volumes (First Class Disks), attached to one
// node VM at a time, used as a raw block device or with a Linux filesystem; and, for the
// multi-node modes, file volumes (vSAN file shares mounted over NFS; rules in file_volume.h).
//
// The reference (common/types.go BlockVolumeCaps, common/util.go validateVolumeCapabilities)
// accepts SINGLE_NODE_WRITER only for block volumes, treats any multi-node mode as a request for a
// vSAN file volume, and allows fs types ext4, ext3, xfs (and ntfs for Windows nodes) for
// SINGLE_NODE_WRITER. Differences, each deliberate:
//  - SINGLE_NODE_READER_ONLY is accepted too: a disk attached to one VM can be mounted read-only
//    (the node never formats a read-only volume);
//  - SINGLE_NODE_SINGLE_WRITER / SINGLE_NODE_MULTI_WRITER only when the driver advertises the
//    SINGLE_NODE_MULTI_WRITER capability (the spec forbids them otherwise; the reference does not
//    advertise it, so by default they are refused);
//  - ntfs is refused (no Windows node plugin); fs types compare case-insensitively (the reference's
//    node lower-cases them, its controller did not).

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "csi/core/types.h"

namespace ccm::csi {

struct CapabilityOptions {
  // The plugin advertises the SINGLE_NODE_MULTI_WRITER controller and node capability.
  bool single_node_multi_writer = false;
};

// One capability: access type set (mount or block), access mode set and supported, fs type
// supported for mount. InvalidArgument naming what is wrong.
absl::Status ValidateCapability(const VolumeCapability& cap, const CapabilityOptions& options = {});

// CreateVolume's list: at least one, each valid. The error names the capability's index.
absl::Status ValidateCapabilities(const std::vector<VolumeCapability>& caps,
                                  const CapabilityOptions& options = {});

// The filesystem a mount capability asks for, lower-cased, "ext4" when empty (the reference's
// GetVolumeCapabilityFsType default). InvalidArgument for a block capability or an unsupported
// type (nfs, nfs4, ntfs, anything else) naming the type and the supported ones. A multi-node
// capability is a file volume's: FileMountFsType.
absl::StatusOr<std::string> MountFsType(const VolumeCapability& cap);

// True for the modes under which the node must mount read-only (and never format).
bool IsReadOnlyMode(AccessMode mode);

// ValidateVolumeCapabilities: confirmed (every capability valid), or the reason it is not. Spec:
// not confirmed is a successful response without `confirmed` and with `message`, never an error;
// a missing or empty list is InvalidArgument and remains the caller's check (it precedes the
// volume look-up). Parameters are checked by the caller with ParseParameters.
struct Confirmation {
  bool confirmed = false;
  std::string message;  // why not, when not confirmed
};
Confirmation ConfirmCapabilities(const std::vector<VolumeCapability>& caps,
                                 const CapabilityOptions& options = {});

}  // namespace ccm::csi
