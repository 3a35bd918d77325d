#pragma once
// FixedRandom: a Random whose value the test picks.

#include "common/random.h"

namespace ccm {

// Returns the same value every time; tests pick it.
class FixedRandom final : public Random {
 public:
  explicit FixedRandom(double v = 0.0) : v_(v) {}
  double Uniform() override { return v_; }

 private:
  double v_;
};

}  // namespace ccm
