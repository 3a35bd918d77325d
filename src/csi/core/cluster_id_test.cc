#include "csi/core/cluster_id.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace ccm::csi {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

TEST(ClusterIdTest, Decisions) {
  constexpr char kWhere[] = "vmware-system-csi/vsphere-csi-cluster-id";
  struct Case {
    const char* name;
    std::string configured;
    std::optional<std::string> configmap;
    std::string want;
    bool create;
  } cases[] = {
      {"the file's", "c1", std::nullopt, "c1", false},
      {"the ConfigMap's", "", "gen-1", "gen-1", false},
      {"both the same", "gen-1", "gen-1", "gen-1", false},
      {"neither: generated and created", "", std::nullopt, "new-uuid", true},
  };
  for (const Case& c : cases) {
    auto d = DecideClusterId(c.configured, c.configmap, "new-uuid", kWhere);
    ASSERT_TRUE(d.ok()) << c.name << ": " << d.status();
    EXPECT_EQ(d->cluster_id, c.want) << c.name;
    EXPECT_EQ(d->create, c.create) << c.name;
  }
  auto conflict = DecideClusterId("c1", "gen-1", "new-uuid", kWhere);
  EXPECT_EQ(conflict.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(conflict.status().message(),
              AllOf(HasSubstr("\"c1\""), HasSubstr("\"gen-1\""), HasSubstr(kWhere),
                    HasSubstr("the ConfigMap wins")));
  EXPECT_FALSE(DecideClusterId("", std::string(), "x", kWhere).ok());
}

}  // namespace
}  // namespace ccm::csi
