#include "csi/server/volume_locks.h"

#include "gtest/gtest.h"

namespace ccm::csi {
namespace {

TEST(VolumeLocksTest, SecondLockOfTheSameKeyIsAbortedUntilReleased) {
  VolumeLocks locks;
  {
    auto first = locks.TryLock("pvc-1");
    ASSERT_TRUE(first.ok());
    auto again = locks.TryLock("pvc-1");
    ASSERT_EQ(again.status().code(), absl::StatusCode::kAborted);
    EXPECT_EQ(again.status().message(), "an operation on volume pvc-1 is already in progress");
    auto other = locks.TryLock("pvc-2");  // other volumes are independent
    EXPECT_TRUE(other.ok());
    EXPECT_EQ(locks.held(), 2u);
  }
  EXPECT_EQ(locks.held(), 0u);
  EXPECT_TRUE(locks.TryLock("pvc-1").ok());
}

TEST(VolumeLocksTest, MovedGuardReleasesOnce) {
  VolumeLocks locks;
  {
    auto g = locks.TryLock("v");
    ASSERT_TRUE(g.ok());
    VolumeLocks::Guard moved = *std::move(g);
    EXPECT_EQ(locks.held(), 1u);
  }
  EXPECT_EQ(locks.held(), 0u);
}

}  // namespace
}  // namespace ccm::csi
