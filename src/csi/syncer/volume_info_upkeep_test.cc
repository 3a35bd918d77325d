#include "csi/syncer/volume_info_upkeep.h"

#include <gtest/gtest.h>

namespace ccm::csi::syncer {
namespace {

TEST(PlanVolumeInfosTest, EachRule) {
  const std::set<std::string> vcenters = {"vc-a", "vc-b"};
  struct Case {
    const char* name;
    std::map<std::string, std::string> located;
    std::set<std::string> named;
    std::map<std::string, std::string> records;
    std::set<std::string> unnamed_before;
    std::vector<std::string> remove;
    std::vector<std::pair<std::string, std::string>> create;
    std::set<std::string> unnamed;
  } cases[] = {
      {"a PV's volume without a record gets one",
       {{"v1", "vc-a"}},
       {"v1"},
       {},
       {},
       {},
       {{"v1", "vc-a"}},
       {}},
      {"a right record stays", {{"v1", "vc-a"}}, {"v1"}, {{"v1", "vc-a"}}, {}, {}, {}, {}},
      {"a record naming the wrong vCenter is made again",
       {{"v1", "vc-b"}},
       {"v1"},
       {{"v1", "vc-a"}},
       {},
       {"v1"},
       {{"v1", "vc-b"}},
       {}},
      {"a record without a PV is noted first: its PV may be on its way",
       {},
       {},
       {{"v2", "vc-a"}},
       {},
       {},
       {},
       {"v2"}},
      {"and goes when the next full sync finds no PV either",
       {},
       {},
       {{"v2", "vc-a"}},
       {"v2"},
       {"v2"},
       {},
       {"v2"}},
      {"a PV that came meanwhile keeps it",
       {{"v2", "vc-a"}},
       {"v2"},
       {{"v2", "vc-a"}},
       {"v2"},
       {},
       {},
       {}},
      {"a record of a vCenter not configured is not ours to judge",
       {},
       {},
       {{"v3", "vc-gone"}},
       {"v3"},
       {},
       {},
       {}},
      {"a PV's volume CNS does not list (its vCenter down): its record stays",
       {},
       {"v4"},
       {{"v4", "vc-b"}},
       {"v4"},
       {},
       {},
       {}},
  };
  for (const Case& c : cases) {
    VolumeInfoPlan plan =
        PlanVolumeInfos(c.located, c.named, c.records, vcenters, c.unnamed_before);
    EXPECT_EQ(plan.remove, c.remove) << c.name;
    EXPECT_EQ(plan.create, c.create) << c.name;
    EXPECT_EQ(plan.unnamed, c.unnamed) << c.name;
  }
}

}  // namespace
}  // namespace ccm::csi::syncer
