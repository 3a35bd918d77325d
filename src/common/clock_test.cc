#include "common/clock.h"

#include <thread>

#include "gtest/gtest.h"

namespace ccm {
namespace {

TEST(RealClockTest, CancelledSleepReturnsFalse) {
  RealClock clock;
  absl::Notification cancel;
  cancel.Notify();
  EXPECT_FALSE(clock.SleepFor(absl::Hours(1), &cancel));
  EXPECT_TRUE(clock.SleepFor(absl::ZeroDuration(), nullptr));
}

}  // namespace
}  // namespace ccm
