#pragma once
// Exponential backoff with optional jitter: delay(n) = min(initial * factor^n, max) * (1 +
// jitter*u).

#include "absl/time/time.h"
#include "common/random.h"

namespace ccm {

struct BackoffPolicy {
  absl::Duration initial = absl::Milliseconds(5);
  absl::Duration max = absl::Seconds(1000);
  double factor = 2.0;
  double jitter = 0.0;  // 0.1 = up to +10%
};

// `attempt` counts from 0. `random` may be null when jitter is 0.
absl::Duration BackoffDelay(const BackoffPolicy& p, int attempt, Random* random = nullptr);

}  // namespace ccm
