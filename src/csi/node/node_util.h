#pragma once
// Helpers shared by the node service's files (not part of its interface).

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "csi/node/mountinfo.h"

namespace ccm::csi::node {

// InvalidArgument "<field> is required" when `value` is empty.
absl::Status Require(absl::string_view value, absl::string_view field);

// The same message with code Internal: an OS or tool failure whose errno-derived code (NotFound
// for ENOENT, ...) would mean something else to the CO.
absl::Status AsInternal(const absl::Status& s, absl::string_view context);

// A mount of an NFS export (a file volume): no block device behind it.
bool IsNfsMount(const MountInfo& m);

// "read-only" or "read-write", as the node's messages say a mount's access.
inline const char* AccessWord(bool read_only) { return read_only ? "read-only" : "read-write"; }

}  // namespace ccm::csi::node
