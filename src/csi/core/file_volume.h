#pragma once
// File volumes: vSAN file shares (CNS volume type FILE) served over NFSv4.1, for the multi-node
// access modes (ReadWriteMany, ReadOnlyMany). The reference's rules (common/util.go
// IsFileVolumeRequest and validateVolumeCapabilities, osutils/linux_os_utils.go PublishFileVol,
// vsphereutil.go CreateFileVolumeUtil, config.go GetDefaultNetPermission):
//  - any MULTI_NODE_* mode in a request makes it a file volume request, and then every capability
//    must be multi-node, a mount (raw block is refused), fs type nfs, nfs4, ext4 or empty (the
//    external-provisioner's ext4 default is mounted as nfs4);
//  - the node mounts the export with "hard", "sec=sys", "vers=4", "minorversion=1" after the
//    capability's mount flags, and "ro" first for a read-only publish;
//  - the share's access rules are the [NetPermissions] sections (allowRoot = !rootsquash), or one
//    rule giving every address READ_WRITE with root not squashed when there is none.

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "csi/core/publish_context.h"
#include "csi/core/types.h"

namespace ccm::csi {

bool IsMultiNodeMode(AccessMode mode);

// True when any capability has a multi-node access mode.
bool IsFileVolumeRequest(const std::vector<VolumeCapability>& caps);

// One capability of a file volume request: InvalidArgument naming what is wrong.
absl::Status ValidateFileCapability(const VolumeCapability& cap);

// The filesystem type to mount a file volume with: "nfs4" for empty or ext4, "nfs" or "nfs4" as
// asked (lower-cased). InvalidArgument for anything else, or a block capability.
absl::StatusOr<std::string> FileMountFsType(const VolumeCapability& cap);

// The mount options of a file volume's NFS mount, in the reference's order.
std::vector<std::string> FileMountOptions(const VolumeCapability& cap, bool read_only);

// One access rule of a vSAN file share (VsanFileShareNetPermission).
struct ShareAccess {
  std::string ips;          // an address, a CIDR or "*"
  std::string permissions;  // READ_WRITE, READ_ONLY, NO_ACCESS
  bool allow_root = false;
  bool operator==(const ShareAccess&) const = default;
};
struct NetRule {  // a [NetPermissions] section as the config read it
  std::string ips;
  std::string permissions;
  bool root_squash = false;
};
std::vector<ShareAccess> ShareAccessFrom(const std::vector<NetRule>& rules);

// CreateVolume's volume_context of a file volume: {"type": "vSphere CNS File Volume"}.
StringMap FileVolumeContext();

// ControllerPublishVolume's publish_context: the type and the NFSv4.1 access point among the
// share's access points (key "NFSv4.1"). FailedPrecondition naming the keys there are when
// vSAN gave no NFSv4.1 access point.
absl::StatusOr<StringMap> FilePublishContext(
    const std::vector<std::pair<std::string, std::string>>& access_points);

// True when a volume or publish context names a file volume.
bool IsFileVolumeContext(const StringMap& context);

// The node's side: the export from a publish context, checked to be "<host>:/<path>" without
// whitespace or commas (it becomes mount(2)'s source). InvalidArgument naming the problem.
absl::StatusOr<std::string> ExportFromPublishContext(const StringMap& publish_context);

}  // namespace ccm::csi
