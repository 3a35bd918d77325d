#include "app/csi/client_rate.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ccm::app {
namespace {

using ::testing::HasSubstr;

TEST(ClientRateTest, TheReferencesDefaultsBoundsAndWarnings) {
  struct Case {
    std::map<std::string, std::string> env;
    double qps;
    int burst;
    size_t warnings;
  };
  const std::vector<Case> cases = {
      {{}, 50, 50, 0},  // unset
      {{{"INCLUSTER_CLIENT_QPS", "100"}, {"INCLUSTER_CLIENT_BURST", "100"}}, 100, 100, 0},
      {{{"INCLUSTER_CLIENT_QPS", "7.5"}}, 7.5, 50, 0},  // a float qps
      {{{"INCLUSTER_CLIENT_QPS", "5"}, {"INCLUSTER_CLIENT_BURST", "1000"}}, 5, 1000, 0},
      {{{"INCLUSTER_CLIENT_QPS", "4"}, {"INCLUSTER_CLIENT_BURST", "1001"}}, 50, 50, 2},
      {{{"INCLUSTER_CLIENT_QPS", "fast"}, {"INCLUSTER_CLIENT_BURST", "1.5"}}, 50, 50, 2},
      {{{"INCLUSTER_CLIENT_QPS", ""}}, 50, 50, 0},  // empty: unset
  };
  for (const Case& c : cases) {
    ClientRate r = InClusterClientRate(c.env);
    EXPECT_EQ(r.qps, c.qps);
    EXPECT_EQ(r.burst, c.burst);
    EXPECT_EQ(r.warnings.size(), c.warnings);
  }
  ClientRate bad = InClusterClientRate({{"INCLUSTER_CLIENT_BURST", "lots"}});
  ASSERT_EQ(bad.warnings.size(), 1u);
  EXPECT_THAT(bad.warnings[0], HasSubstr("INCLUSTER_CLIENT_BURST=\"lots\""));
}

}  // namespace
}  // namespace ccm::app
