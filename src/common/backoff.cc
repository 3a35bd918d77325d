#include "common/backoff.h"

#include <cmath>

namespace ccm {

absl::Duration BackoffDelay(const BackoffPolicy& p, int attempt, Random* random) {
  if (attempt < 0) attempt = 0;
  const double scale = std::pow(p.factor, attempt);
  absl::Duration d = p.initial;
  // Guard the multiplication against overflow: anything past max is max.
  if (!std::isfinite(scale) || absl::FDivDuration(p.max, p.initial) <= scale) {
    d = p.max;
  } else {
    d = p.initial * scale;
    if (d > p.max) d = p.max;
  }
  if (p.jitter > 0 && random != nullptr) d += d * (p.jitter * random->Uniform());
  return d;
}

}  // namespace ccm
