#include "common/clock.h"

#include <thread>

#include "gtest/gtest.h"

namespace ccm {
namespace {

TEST(FakeClockTest, SleeperWakesOnlyWhenTimePasses) {
  FakeClock clock;
  absl::Notification woke;
  std::thread t([&] {
    EXPECT_TRUE(clock.SleepFor(absl::Seconds(10), nullptr));
    woke.Notify();
  });
  ASSERT_TRUE(clock.WaitForSleepers(1));
  clock.Advance(absl::Seconds(9));
  EXPECT_FALSE(woke.HasBeenNotified());
  EXPECT_EQ(clock.sleepers(), 1);
  clock.Advance(absl::Seconds(1));
  woke.WaitForNotification();
  t.join();
  EXPECT_EQ(clock.sleepers(), 0);
}

TEST(FakeClockTest, CancelEndsSleep) {
  FakeClock clock;
  absl::Notification cancel;
  bool result = true;
  std::thread t([&] { result = clock.SleepFor(absl::Hours(1), &cancel); });
  ASSERT_TRUE(clock.WaitForSleepers(1));
  cancel.Notify();
  t.join();
  EXPECT_FALSE(result);
}

TEST(RealClockTest, CancelledSleepReturnsFalse) {
  RealClock clock;
  absl::Notification cancel;
  cancel.Notify();
  EXPECT_FALSE(clock.SleepFor(absl::Hours(1), &cancel));
  EXPECT_TRUE(clock.SleepFor(absl::ZeroDuration(), nullptr));
}

}  // namespace
}  // namespace ccm
