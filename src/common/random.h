#pragma once
// Randomness is injected (jitter in backoff and leader election) so tests are deterministic.

#include <cstdint>
#include <random>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace ccm {

class Random {
 public:
  virtual ~Random() = default;
  // Uniform in [0, 1).
  virtual double Uniform() = 0;
  static Random& Real();
};

class RealRandom final : public Random {
 public:
  double Uniform() override;

 private:
  absl::Mutex mu_;
  std::mt19937_64 gen_ ABSL_GUARDED_BY(mu_){std::random_device{}()};
};

}  // namespace ccm
