#include "csi/core/feature_states.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ccm::csi {
namespace {

using ::testing::ElementsAre;
using Data = std::map<std::string, std::string>;

TEST(FeatureStatesTest, GoBoolForms) {
  struct Case {
    const char* in;
    std::optional<bool> want;
  };
  for (const Case& c : std::vector<Case>{{"true", true},
                                         {"True", true},
                                         {"TRUE", true},
                                         {"t", true},
                                         {"1", true},
                                         {"false", false},
                                         {"F", false},
                                         {"0", false},
                                         {"yes", std::nullopt},
                                         {"tRuE", std::nullopt},
                                         {" true", std::nullopt},
                                         {"", std::nullopt}}) {
    EXPECT_EQ(ParseGoBool(c.in), c.want) << c.in;
  }
}

TEST(FeatureStatesTest, EnabledAsTheReferenceDecides) {
  struct Case {
    const char* name;
    Data data;
    const char* feature;
    bool want;
  };
  const std::vector<Case> cases = {
      {"absent", {}, kFssHighPvNodeDensity, false},
      {"true", {{kFssHighPvNodeDensity, "true"}}, kFssHighPvNodeDensity, true},
      {"false", {{kFssHighPvNodeDensity, "false"}}, kFssHighPvNodeDensity, false},
      {"not a boolean is off", {{kFssTriggerCsiFullSync, "yes"}}, kFssTriggerCsiFullSync, false},
      {"released is on without the ConfigMap", {}, "block-volume-snapshot", true},
      {"released is on even when set false", {{"list-volumes", "false"}}, "list-volumes", true},
  };
  for (const Case& c : cases) EXPECT_EQ(FeatureEnabled(c.data, c.feature), c.want) << c.name;
}

TEST(FeatureStatesTest, ReplaceDescribesWhatChanged) {
  FeatureStates fss;
  EXPECT_THAT(fss.Replace({{kFssHighPvNodeDensity, "false"}, {kFssTriggerCsiFullSync, "false"}}),
              ::testing::IsEmpty());
  EXPECT_THAT(fss.Replace({{kFssHighPvNodeDensity, "true"}, {kFssTriggerCsiFullSync, "false"}}),
              ElementsAre("high-pv-node-density: off -> on"));
  EXPECT_TRUE(fss.Enabled(kFssHighPvNodeDensity));
  EXPECT_THAT(fss.Replace({{kFssHighPvNodeDensity, "true"}, {kFssTriggerCsiFullSync, "maybe"}}),
              ElementsAre("trigger-csi-fullsync: \"maybe\" is not a boolean (off)"));
  EXPECT_THAT(fss.Replace({}), ElementsAre("high-pv-node-density: on -> off"));
  EXPECT_FALSE(fss.Enabled(kFssHighPvNodeDensity));
}

}  // namespace
}  // namespace ccm::csi
