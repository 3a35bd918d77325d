#include "kube/rate_limiter.h"

#include <vector>

#include "gtest/gtest.h"
#include "testing/fake_clock.h"

namespace ccm::kube {
namespace {

TEST(ItemExponentialRateLimiterTest, DoublesPerRetryUntilMaxAndForgetResets) {
  ItemExponentialRateLimiter l(absl::Milliseconds(5), absl::Seconds(1000));
  const std::vector<absl::Duration> want = {
      absl::Milliseconds(5),    absl::Milliseconds(10),  absl::Milliseconds(20),
      absl::Milliseconds(40),   absl::Milliseconds(80),  absl::Milliseconds(160),
      absl::Milliseconds(320),  absl::Milliseconds(640), absl::Milliseconds(1280),
      absl::Milliseconds(2560), absl::Milliseconds(5120)};
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(l.When("a"), want[i]) << "retry " << i;
    EXPECT_EQ(l.NumRequeues("a"), static_cast<int>(i + 1));
  }
  // Another item has its own history.
  EXPECT_EQ(l.When("b"), absl::Milliseconds(5));
  // 5ms * 2^18 = 1310.72s > 1000s: capped, and stays capped however many failures follow.
  for (int i = 11; i < 18; ++i) l.When("a");
  EXPECT_EQ(l.When("a"), absl::Seconds(1000));
  for (int i = 0; i < 100; ++i) l.When("a");
  EXPECT_EQ(l.When("a"), absl::Seconds(1000));
  l.Forget("a");
  EXPECT_EQ(l.NumRequeues("a"), 0);
  EXPECT_EQ(l.When("a"), absl::Milliseconds(5));
  EXPECT_EQ(l.NumRequeues("b"), 1);
}

TEST(TokenBucketTest, BurstThenWaitsGrowAndRefill) {
  FakeClock clock;
  TokenBucket b(10, 100, clock);
  for (int i = 0; i < 100; ++i) ASSERT_EQ(b.Reserve(), absl::ZeroDuration()) << i;
  EXPECT_EQ(b.Reserve(), absl::Milliseconds(100));
  EXPECT_EQ(b.Reserve(), absl::Milliseconds(200));
  // Reservations are paid back as time passes: 300ms later the balance is 0 again.
  clock.Advance(absl::Milliseconds(300));
  EXPECT_NEAR(b.Tokens(), 1.0, 1e-9);
  EXPECT_EQ(b.Reserve(), absl::ZeroDuration());
  // Refill is capped at burst.
  clock.Advance(absl::Hours(1));
  EXPECT_NEAR(b.Tokens(), 100.0, 1e-9);
}

TEST(TokenBucketTest, TryTakeNeverGoesNegative) {
  FakeClock clock;
  TokenBucket b(1.0 / 300, 25, clock);  // the event spam filter's bucket
  for (int i = 0; i < 25; ++i) ASSERT_TRUE(b.TryTake()) << i;
  EXPECT_FALSE(b.TryTake());
  clock.Advance(absl::Minutes(4));
  EXPECT_FALSE(b.TryTake());
  clock.Advance(absl::Minutes(1));
  EXPECT_TRUE(b.TryTake());
  EXPECT_FALSE(b.TryTake());
}

TEST(DefaultControllerRateLimiterTest, MaxOfItemBackoffAndOverallBucket) {
  FakeClock clock;
  auto l = DefaultControllerRateLimiter(clock);
  // 100 distinct items use up the burst; each is at its first backoff step.
  for (int i = 0; i < 100; ++i)
    ASSERT_EQ(l->When("item" + std::to_string(i)), absl::Milliseconds(5));
  // The bucket now dominates: the 101st item waits 100ms although its own backoff is 5ms.
  EXPECT_EQ(l->When("late"), absl::Milliseconds(100));
  EXPECT_EQ(l->NumRequeues("late"), 1);
  // Long after, the bucket is full again and the per-item backoff dominates.
  clock.Advance(absl::Hours(1));
  EXPECT_EQ(l->When("late"), absl::Milliseconds(10));
  l->Forget("late");
  EXPECT_EQ(l->NumRequeues("late"), 0);
  EXPECT_EQ(l->When("late"), absl::Milliseconds(5));
}

}  // namespace
}  // namespace ccm::kube
