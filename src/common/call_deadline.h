#pragma once
// The deadline of the work the current thread does for a caller (issue 43): a CSI RPC's gRPC
// deadline (the sidecars' --timeout). The RPC handler sets it for its thread with
// ScopedCallDeadline; the vCenter clients read it for every request they send and every task
// they wait for, so no vCenter call outlives the RPC that asked for it. What is past the
// deadline fails with DeadlineExceeded; the work already started in vCenter (a CNS task) is
// found again by the retry through the operation record.
//
// Ambient rather than passed through every signature: the vCenter layers sit several calls
// below the RPC, and the bound must hold for all of them (a forgotten parameter would leave one
// call unbounded). Only the vCenter clients read it; Kubernetes API calls are not bounded by it
// (the operation record must still be written after the RPC's deadline).

#include "absl/time/time.h"

namespace ccm {

// This thread's call deadline; absl::InfiniteFuture() when none is set.
absl::Time CallDeadline();

// Sets this thread's call deadline for the scope (the earlier one wins when nested).
class ScopedCallDeadline {
 public:
  explicit ScopedCallDeadline(absl::Time deadline);
  ~ScopedCallDeadline();
  ScopedCallDeadline(const ScopedCallDeadline&) = delete;
  ScopedCallDeadline& operator=(const ScopedCallDeadline&) = delete;

 private:
  absl::Time previous_;
};

}  // namespace ccm
