#pragma once
// Helpers shared by the node service's files (not part of its interface).

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "csi/core/types.h"
#include "csi/proto/csi.pb.h"

namespace ccm::csi::node {

// The plain capability core/ decides on.
VolumeCapability ToCapability(const ::csi::v1::VolumeCapability& cap);

// InvalidArgument "<field> is required" when `value` is empty.
absl::Status Require(absl::string_view value, absl::string_view field);

// The path as the kernel prints it in mountinfo: absolute, symlinks of existing parts resolved,
// no "." / ".." / trailing '/'. InvalidArgument for a relative path.
absl::StatusOr<std::string> CanonicalPath(absl::string_view path, absl::string_view field);

// The same message with code Internal: an OS or tool failure whose errno-derived code (NotFound
// for ENOENT, ...) would mean something else to the CO.
absl::Status AsInternal(const absl::Status& s, absl::string_view context);

}  // namespace ccm::csi::node
