#pragma once
// Volume sizes. CNS takes sizes in MiB, so every request is rounded up to a whole MiB the way the
// reference's common/util.go RoundUpSize does; the byte count returned to the CO is that many MiB.

#include <cstdint>

#include "absl/status/statusor.h"
#include "csi/core/types.h"

namespace ccm::csi {

// CreateVolume: the size to create, in MiB.
//  - required_bytes set: rounded up to a MiB. OutOfRange when that exceeds limit_bytes (the spec's
//    "unsupported capacity": a limit that is not a whole MiB can be below the rounded size).
//  - required_bytes unset: the reference's default of 10 GiB, lowered to limit_bytes (rounded down
//    to a MiB) when the limit is smaller; OutOfRange when the limit is below 1 MiB.
//  - negative values, or limit_bytes set and below required_bytes: InvalidArgument.
absl::StatusOr<int64_t> CreateSizeMib(const CapacityRange& range);

// ControllerExpandVolume's decision for a volume of `current_mib`.
struct ExpandPlan {
  int64_t target_mib = 0;     // the size after the call (never below current_mib)
  bool needs_extend = false;  // false: already at least that big, nothing to ask CNS
  // The reference sets NodeExpansionRequired for everything but raw block volumes (the filesystem
  // must then be grown on the node); an unset access type (an older resizer) counts as mount.
  bool node_expansion_required = true;
};

// capacity_range is REQUIRED by the spec: `range` null, both fields unset, or a negative field is
// InvalidArgument; limit below required is InvalidArgument. A volume already at least
// required_bytes is not shrunk: success without an extend (the spec's idempotency rule; the
// reference does the same). OutOfRange when the rounded target, or a current size already above
// it, exceeds limit_bytes.
absl::StatusOr<ExpandPlan> PlanExpand(const CapacityRange* range, int64_t current_mib,
                                      AccessType access_type);

// NodeExpandVolume: capacity_range is OPTIONAL there; when present its fields must not be negative.
// Returns the required size rounded up to a MiB (0 when unset: grow to the device's size).
absl::StatusOr<int64_t> NodeExpandTargetMib(const CapacityRange* range);

// MiB -> bytes for responses (CreateVolume capacity_bytes and the expand responses).
int64_t MibToBytes(int64_t mib);

}  // namespace ccm::csi
