#include "csi/core/node_topology.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace ccm::csi {
namespace {

using ::testing::HasSubstr;

TEST(NodeGetInfoWatchTimeoutTest, ReadsAsTheReference) {
  struct Case {
    std::optional<std::string> env;
    int minutes;
    bool warns;
  } cases[] = {
      {std::nullopt, 1, false}, {"", 1, false},   {"1", 1, false}, {"2", 2, false},
      {" 2 ", 2, false},        {"0", 1, true},   {"-1", 1, true}, {"3", 1, true},
      {"1m", 1, true},          {"two", 1, true},
  };
  for (const Case& c : cases) {
    WatchTimeout t = NodeGetInfoWatchTimeout(c.env);
    EXPECT_EQ(t.minutes, c.minutes) << c.env.value_or("<unset>");
    EXPECT_EQ(!t.warning.empty(), c.warns) << c.env.value_or("<unset>");
    if (c.warns) {
      EXPECT_THAT(t.warning, HasSubstr(kEnvNodeGetInfoWatchTimeout));
    }
  }
}

TEST(NodeTopologyAnswerTest, SuccessErrorAndPending) {
  NodeTopologyStatus ok{kNodeTopologySuccess, "", {{"topology.csi.vmware.com/k8s-zone", "a"}}};
  auto a = NodeTopologyAnswer("n1", ok);
  ASSERT_TRUE(a.has_value());
  ASSERT_TRUE(a->ok());
  EXPECT_EQ(**a, (Segments{{"topology.csi.vmware.com/k8s-zone", "a"}}));

  NodeTopologyStatus none{kNodeTopologySuccess, "", {}};
  ASSERT_TRUE(NodeTopologyAnswer("n1", none).has_value());
  EXPECT_TRUE(NodeTopologyAnswer("n1", none)->value().empty());

  NodeTopologyStatus bad{kNodeTopologyError, "no tag of category k8s-zone", {}};
  auto e = NodeTopologyAnswer("n1", bad);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->status().code(), absl::StatusCode::kInternal);
  EXPECT_THAT(e->status().message(), HasSubstr("n1"));
  EXPECT_THAT(e->status().message(), HasSubstr("no tag of category k8s-zone"));

  EXPECT_FALSE(NodeTopologyAnswer("n1", {}).has_value());
  EXPECT_FALSE(NodeTopologyAnswer("n1", {"Pending", "", {}}).has_value());
}

TopologyConfig Categories() {
  TopologyConfig c;
  c.topology_categories = {"k8s-region", "k8s-zone"};
  return c;
}

TopologyConfig ZoneRegionCategories() {
  TopologyConfig c;
  c.zone_category = "k8s-zone";
  c.region_category = "k8s-region";
  return c;
}

TEST(DesiredNodeTopologyTest, Table) {
  const Segments seg = {{"topology.csi.vmware.com/k8s-region", "r1"},
                        {"topology.csi.vmware.com/k8s-zone", "z1"}};
  const Segments legacy = {{"failure-domain.beta.kubernetes.io/zone", "z1"},
                           {"failure-domain.beta.kubernetes.io/region", "r1"}};
  TopologyConfig zone_only;
  zone_only.zone_category = "k8s-zone";
  struct Case {
    std::string name;
    std::string uuid;
    TopologyConfig config;
    NodeVmTopology vm;
    std::optional<std::string> status;  // nullopt: nothing written
    std::vector<std::pair<std::string, std::string>> labels;
    std::string message;  // part of errorMessage
  } cases[] = {
      {"no uuid yet: wait", "", Categories(), {absl::OkStatus(), "vm-1", seg}, std::nullopt},
      {"inventory not loaded: wait",
       "u1",
       Categories(),
       {absl::UnavailableError("not synced"), "", {}},
       std::nullopt},
      {"categories",
       "u1",
       Categories(),
       {absl::OkStatus(), "vm-1", seg},
       kNodeTopologySuccess,
       {{"topology.csi.vmware.com/k8s-region", "r1"}, {"topology.csi.vmware.com/k8s-zone", "z1"}}},
      {"zone and region keys",
       "u1",
       ZoneRegionCategories(),
       {absl::OkStatus(), "vm-1", legacy},
       kNodeTopologySuccess,
       {{"failure-domain.beta.kubernetes.io/zone", "z1"},
        {"failure-domain.beta.kubernetes.io/region", "r1"}}},
      {"no topology configured", "u1", {}, {absl::OkStatus(), "vm-1", {}}, kNodeTopologySuccess},
      {"zone without region",
       "u1",
       zone_only,
       {absl::OkStatus(), "vm-1", {}},
       kNodeTopologyError,
       {},
       "missing zone or region information"},
      {"vm not found",
       "u1",
       Categories(),
       {absl::NotFoundError("no VM with BIOS UUID u1 in vCenter vc-1"), "", {}},
       kNodeTopologyError,
       {},
       "no VM with BIOS UUID u1"},
      {"vm not found without topology",
       "u1",
       {},
       {absl::NotFoundError("no VM with BIOS UUID u1"), "", {}},
       kNodeTopologyError,
       {},
       "failed to retrieve nodeVM u1 of Node n1"},
      {"host without a tag",
       "u1",
       Categories(),
       {absl::FailedPreconditionError("no tag of category k8s-zone on host-21"), "vm-1", {}},
       kNodeTopologyError,
       {},
       "no tag of category k8s-zone on host-21"},
      {"segment lacks a key",
       "u1",
       Categories(),
       {absl::OkStatus(), "vm-1", {{"topology.csi.vmware.com/k8s-region", "r1"}}},
       kNodeTopologyError,
       {},
       "no value for topology.csi.vmware.com/k8s-zone"},
  };
  for (const Case& c : cases) {
    std::optional<NodeTopologyStatus> got = DesiredNodeTopology("n1", c.uuid, c.config, c.vm);
    ASSERT_EQ(got.has_value(), c.status.has_value()) << c.name;
    if (!got) continue;
    EXPECT_EQ(got->status, *c.status) << c.name;
    EXPECT_EQ(got->labels, c.labels) << c.name;
    EXPECT_THAT(got->error_message, HasSubstr(c.message)) << c.name;
    if (got->status == kNodeTopologySuccess) {
      EXPECT_TRUE(got->error_message.empty()) << c.name;
    }
  }
}

}  // namespace
}  // namespace ccm::csi
