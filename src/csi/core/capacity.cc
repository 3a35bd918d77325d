#include "csi/core/capacity.h"

#include <algorithm>
#include <limits>

#include "absl/strings/str_cat.h"
#include "csi/core/constants.h"

namespace ccm::csi {
namespace {

// The largest size whose byte count still fits the int64 capacity_bytes of the responses.
constexpr int64_t kMaxMib = std::numeric_limits<int64_t>::max() / kMiB;

int64_t RoundUpMib(int64_t bytes) { return bytes / kMiB + (bytes % kMiB > 0 ? 1 : 0); }

absl::Status CheckNotNegative(const CapacityRange& range) {
  if (range.required_bytes < 0 || range.limit_bytes < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("capacity range must not be negative (required_bytes ", range.required_bytes,
                     ", limit_bytes ", range.limit_bytes, ")"));
  }
  return absl::OkStatus();
}

absl::Status CheckOrdered(const CapacityRange& range) {
  if (range.limit_bytes > 0 && range.limit_bytes < range.required_bytes) {
    return absl::InvalidArgumentError(absl::StrCat("capacity range limit_bytes ", range.limit_bytes,
                                                   " is below required_bytes ",
                                                   range.required_bytes));
  }
  return absl::OkStatus();
}

absl::Status OverLimit(int64_t mib, int64_t limit_bytes) {
  return absl::OutOfRangeError(absl::StrCat("volumes are sized in whole MiB: ", mib, " MiB (",
                                            MibToBytes(mib), " bytes) exceeds limit_bytes ",
                                            limit_bytes));
}

}  // namespace

int64_t MibToBytes(int64_t mib) { return mib * kMiB; }

absl::StatusOr<int64_t> CreateSizeMib(const CapacityRange& range) {
  if (absl::Status s = CheckNotNegative(range); !s.ok()) return s;
  if (absl::Status s = CheckOrdered(range); !s.ok()) return s;
  if (range.required_bytes == 0) {
    int64_t mib = kDefaultVolumeSizeBytes / kMiB;
    if (range.limit_bytes > 0) {
      // Round the limit down: rounding up would exceed it.
      mib = std::min(mib, range.limit_bytes / kMiB);
      if (mib == 0) {
        return absl::OutOfRangeError(absl::StrCat("capacity range limit_bytes ", range.limit_bytes,
                                                  " is below the smallest volume (1 MiB)"));
      }
    }
    return mib;
  }
  int64_t mib = RoundUpMib(range.required_bytes);
  if (mib > kMaxMib) {
    return absl::OutOfRangeError(
        absl::StrCat("required_bytes ", range.required_bytes, " is too large"));
  }
  if (range.limit_bytes > 0 && MibToBytes(mib) > range.limit_bytes) {
    return OverLimit(mib, range.limit_bytes);
  }
  return mib;
}

absl::StatusOr<ExpandPlan> PlanExpand(const CapacityRange* range, int64_t current_mib,
                                      AccessType access_type) {
  if (range == nullptr) return absl::InvalidArgumentError("capacity range is required");
  if (absl::Status s = CheckNotNegative(*range); !s.ok()) return s;
  if (range->required_bytes == 0 && range->limit_bytes == 0) {
    return absl::InvalidArgumentError("capacity range sets neither required_bytes nor limit_bytes");
  }
  if (absl::Status s = CheckOrdered(*range); !s.ok()) return s;
  int64_t wanted = RoundUpMib(range->required_bytes);
  if (wanted > kMaxMib) {
    return absl::OutOfRangeError(
        absl::StrCat("required_bytes ", range->required_bytes, " is too large"));
  }
  ExpandPlan plan;
  plan.target_mib = std::max(wanted, current_mib);
  plan.needs_extend = wanted > current_mib;
  plan.node_expansion_required = access_type != AccessType::kBlock;
  if (range->limit_bytes > 0 && MibToBytes(plan.target_mib) > range->limit_bytes) {
    return OverLimit(plan.target_mib, range->limit_bytes);
  }
  return plan;
}

absl::StatusOr<int64_t> NodeExpandTargetMib(const CapacityRange* range) {
  if (range == nullptr) return 0;
  if (absl::Status s = CheckNotNegative(*range); !s.ok()) return s;
  if (absl::Status s = CheckOrdered(*range); !s.ok()) return s;
  int64_t mib = RoundUpMib(range->required_bytes);
  if (mib > kMaxMib) {
    return absl::OutOfRangeError(
        absl::StrCat("required_bytes ", range->required_bytes, " is too large"));
  }
  return mib;
}

}  // namespace ccm::csi
