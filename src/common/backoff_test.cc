#include "common/backoff.h"

#include "gtest/gtest.h"
#include "testing/fixed_random.h"

namespace ccm {
namespace {

TEST(BackoffTest, GrowsAndCaps) {
  BackoffPolicy p{.initial = absl::Milliseconds(5), .max = absl::Seconds(1), .factor = 2.0};
  struct Case {
    int attempt;
    absl::Duration want;
  } cases[] = {
      {-1, absl::Milliseconds(5)}, {0, absl::Milliseconds(5)},   {1, absl::Milliseconds(10)},
      {2, absl::Milliseconds(20)}, {7, absl::Milliseconds(640)}, {8, absl::Seconds(1)},
      {1000, absl::Seconds(1)},
  };
  for (const auto& c : cases) EXPECT_EQ(BackoffDelay(p, c.attempt), c.want) << c.attempt;
}

TEST(BackoffTest, JitterAddsUpToFraction) {
  BackoffPolicy p{
      .initial = absl::Seconds(1), .max = absl::Seconds(10), .factor = 2, .jitter = 0.5};
  FixedRandom half(0.5);
  EXPECT_EQ(BackoffDelay(p, 0, &half), absl::Milliseconds(1250));
  EXPECT_EQ(BackoffDelay(p, 0, nullptr), absl::Seconds(1));
}

}  // namespace
}  // namespace ccm
