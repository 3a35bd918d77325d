// The node tests' leak check: after the suite, no loop device is backed by a file of this
// process and nothing is mounted under its directories. (The mounts could not outlive the
// process anyway, being in its private namespace; the check proves each test cleaned up.)
#include "gtest/gtest.h"
#include "integration/csi/loop_device.h"
#include "integration/csi/node_env.h"

namespace ccm::csi::testing {
namespace {

class NoLeftovers : public ::testing::Environment {
 public:
  void SetUp() override { ASSERT_TRUE(EnterPrivateMountNamespace().ok()); }
  void TearDown() override {
    EXPECT_TRUE(LoopDevicesBackedUnder(TestDirPrefix()).empty())
        << ::testing::PrintToString(LoopDevicesBackedUnder(TestDirPrefix()));
    EXPECT_TRUE(MountsUnder(TestDirPrefix()).empty())
        << ::testing::PrintToString(MountsUnder(TestDirPrefix()));
  }
};

::testing::Environment* const kEnv = ::testing::AddGlobalTestEnvironment(new NoLeftovers());

}  // namespace
}  // namespace ccm::csi::testing
