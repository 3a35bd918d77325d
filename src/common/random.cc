#include "common/random.h"

namespace ccm {

Random& Random::Real() {
  static RealRandom* r = new RealRandom();
  return *r;
}

double RealRandom::Uniform() {
  absl::MutexLock lock(&mu_);
  return std::uniform_real_distribution<double>(0.0, 1.0)(gen_);
}

}  // namespace ccm
