#include "testing/fake_clock.h"

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

TEST(FakeClockTest, WokenSleepersStopCountingAtOnce) {
  FakeClock clock;
  std::thread t([&] { EXPECT_TRUE(clock.SleepFor(absl::Seconds(10), nullptr)); });
  ASSERT_TRUE(clock.WaitForSleepers(1));
  clock.Advance(absl::Seconds(10));
  // Whether or not the thread has run yet, it is no longer asleep.
  EXPECT_EQ(clock.sleepers(), 0);
  t.join();
}

TEST(FakeClockTest, AdvanceToNextWakeupMovesToTheEarliestDeadline) {
  FakeClock clock;
  const absl::Time start = clock.Now();
  absl::Notification stop;
  std::thread a([&] { clock.SleepFor(absl::Seconds(8), &stop); });
  std::thread b([&] { clock.SleepFor(absl::Seconds(5), &stop); });
  ASSERT_TRUE(clock.WaitForSleepers(2));
  EXPECT_EQ(clock.AdvanceToNextWakeup(), absl::Seconds(5));
  EXPECT_EQ(clock.Now(), start + absl::Seconds(5));
  EXPECT_EQ(clock.sleepers(), 1);
  EXPECT_EQ(clock.AdvanceToNextWakeup(), absl::Seconds(3));
  EXPECT_EQ(clock.sleepers(), 0);
  a.join();
  b.join();
  EXPECT_EQ(clock.AdvanceToNextWakeup(), absl::ZeroDuration());  // nobody sleeps
  EXPECT_EQ(clock.Now(), start + absl::Seconds(8));
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

}  // namespace
}  // namespace ccm
