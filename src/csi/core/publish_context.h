#pragma once
// What the controller hands the node, with the reference's keys (common/constants.go): the
// CreateVolume volume_context {"type": "vSphere CNS Block Volume"}, and the ControllerPublishVolume
// publish_context {"type": ..., "diskUUID": <disk UUID without dashes, lower case>}. The node finds
// the disk as /dev/disk/by-id/wwn-0x<diskUUID> (osutils/linux_os_utils.go GetDiskPath).

#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ccm::csi {

using StringMap = std::map<std::string, std::string>;

// common/util.go FormatDiskUUID: spaces and dashes removed, lower case
// ("6000C298-595D-..." -> "6000c298595d...").
std::string FormatDiskUuid(absl::string_view uuid);

StringMap BlockVolumeContext();

// InvalidArgument when the disk UUID formats to something that is not 32 hex digits (CNS attach
// returned no usable UUID; the node could never find the disk).
absl::StatusOr<StringMap> BlockPublishContext(absl::string_view disk_uuid);

// The node's side: the formatted disk UUID from a publish context. InvalidArgument when the key is
// missing (as the reference's GetDiskID) or the value is not 32 hex digits after formatting; the
// check matters because the value becomes part of a path under /dev/disk/by-id.
absl::StatusOr<std::string> DiskUuidFromPublishContext(const StringMap& publish_context);

// "<by_id_dir>/wwn-0x<disk uuid>"; by_id_dir is /dev/disk/by-id unless tests point elsewhere.
std::string DiskLinkPath(absl::string_view by_id_dir, absl::string_view formatted_disk_uuid);

}  // namespace ccm::csi
