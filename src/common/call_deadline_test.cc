#include "common/call_deadline.h"

#include <thread>

#include "gtest/gtest.h"

namespace ccm {
namespace {

TEST(CallDeadlineTest, ScopedPerThreadAndTheEarlierWinsWhenNested) {
  const absl::Time t = absl::FromUnixSeconds(1'000'000);
  EXPECT_EQ(CallDeadline(), absl::InfiniteFuture());
  {
    ScopedCallDeadline outer(t);
    EXPECT_EQ(CallDeadline(), t);
    {
      ScopedCallDeadline later(t + absl::Seconds(5));
      EXPECT_EQ(CallDeadline(), t) << "a nested scope cannot extend its caller's deadline";
      ScopedCallDeadline earlier(t - absl::Seconds(5));
      EXPECT_EQ(CallDeadline(), t - absl::Seconds(5));
    }
    EXPECT_EQ(CallDeadline(), t);
    absl::Time other = t;
    std::thread([&] { other = CallDeadline(); }).join();
    EXPECT_EQ(other, absl::InfiniteFuture()) << "another thread has its own";
  }
  EXPECT_EQ(CallDeadline(), absl::InfiniteFuture());
}

}  // namespace
}  // namespace ccm
