#include "cloud/core/zones.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace ccm::cloud {
namespace {

using ::testing::HasSubstr;

TaggedObject Obj(std::string d, std::vector<AttachedTag> tags = {}) {
  return TaggedObject{std::move(d), std::move(tags)};
}
AttachedTag Zone(std::string n) { return {std::move(n), "k8s-zone"}; }
AttachedTag Region(std::string n) { return {std::move(n), "k8s-region"}; }

struct ZoneCase {
  std::string name;
  std::vector<AncestorChain> chains;
  std::string zone_cat = "k8s-zone";
  std::string region_cat = "k8s-region";
  std::optional<ZoneRegion> want = std::nullopt;
  std::vector<std::string> error = {};  // substrings; empty = success
};

class ResolveZoneRegionTest : public ::testing::TestWithParam<ZoneCase> {};

TEST_P(ResolveZoneRegionTest, Table) {
  const ZoneCase& c = GetParam();
  auto got = ResolveZoneRegion(c.chains, c.zone_cat, c.region_cat);
  if (!c.error.empty()) {
    ASSERT_FALSE(got.ok());
    EXPECT_EQ(got.status().code(), absl::StatusCode::kFailedPrecondition);
    for (const std::string& e : c.error)
      EXPECT_THAT(std::string(got.status().message()), HasSubstr(e));
    return;
  }
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, c.want);
}

const AncestorChain kHostChain = {
    Obj("HostSystem host-1 (esx1)"), Obj("ClusterComputeResource domain-c1 (cl1)", {Zone("za")}),
    Obj("Folder group-h1 (host)"), Obj("Datacenter datacenter-1 (dc1)", {Region("r1")})};

INSTANTIATE_TEST_SUITE_P(
    Table, ResolveZoneRegionTest,
    ::testing::Values(
        ZoneCase{"ClusterZoneDatacenterRegion",
                 {kHostChain},
                 "k8s-zone",
                 "k8s-region",
                 ZoneRegion{"za", "r1"}},
        ZoneCase{"OnlyZoneCategoryConfigured_NoLabelsNoError", {{}}, "k8s-zone", ""},
        ZoneCase{"OnlyRegionCategoryConfigured_NoLabelsNoError", {kHostChain}, "", "k8s-region"},
        ZoneCase{"NothingConfigured", {}, "", ""},
        ZoneCase{"NearestAncestorWins",
                 {{Obj("HostSystem h (esx1)", {Zone("host-zone")}),
                   Obj("Cluster c", {Zone("cluster-zone"), Region("cluster-region")}),
                   Obj("Datacenter d", {Region("dc-region")})}},
                 "k8s-zone",
                 "k8s-region",
                 ZoneRegion{"host-zone", "cluster-region"}},
        ZoneCase{"HostChainBeforeResourcePoolAndVmChains",
                 {{Obj("HostSystem h", {Zone("host-zone")})},
                  {Obj("ResourcePool rp", {Zone("rp-zone"), Region("rp-region")})},
                  {Obj("VirtualMachine vm", {Region("vm-region")})}},
                 "k8s-zone",
                 "k8s-region",
                 ZoneRegion{"host-zone", "rp-region"}},
        ZoneCase{"FallsBackToVmChain",
                 {{Obj("HostSystem h")},
                  {Obj("ResourcePool rp")},
                  {Obj("VirtualMachine vm"), Obj("Folder vm-folder", {Zone("fz"), Region("fr")})}},
                 "k8s-zone",
                 "k8s-region",
                 ZoneRegion{"fz", "fr"}},
        ZoneCase{"OtherCategoriesIgnored",
                 {{Obj("HostSystem h", {{"gold", "tier"}, Zone("z1"), {"r9", "K8S-REGION"}}),
                   Obj("Datacenter d", {Region("r1")})}},
                 "k8s-zone",
                 "k8s-region",
                 ZoneRegion{"z1", "r1"}},
        ZoneCase{"SameCategoryForBoth",
                 {{Obj("HostSystem h", {{"dc-west", "topology"}})}},
                 "topology",
                 "topology",
                 ZoneRegion{"dc-west", "dc-west"}},
        ZoneCase{"TwoTagsOnFartherObjectIgnoredWhenNearerWins",
                 {{Obj("HostSystem h", {Zone("z1"), Region("r1")}),
                   Obj("Cluster c", {Zone("z2"), Zone("z3")})}},
                 "k8s-zone",
                 "k8s-region",
                 ZoneRegion{"z1", "r1"}},
        // Errors name the category and the objects searched.
        ZoneCase{
            "MissingZoneTag",
            {{Obj("HostSystem host-1 (esx1)"), Obj("Datacenter dc1", {Region("r1")})},
             {Obj("ResourcePool rp-1 (Resources)")},
             {Obj("VirtualMachine vm-7 (node-1)")}},
            "k8s-zone",
            "k8s-region",
            std::nullopt,
            {"no tag of zone category \"k8s-zone\"", "HostSystem host-1 (esx1)", "Datacenter dc1",
             "ResourcePool rp-1 (Resources)", "VirtualMachine vm-7 (node-1)"}},
        ZoneCase{"MissingRegionTag",
                 {{Obj("HostSystem h", {Zone("z1")})}},
                 "k8s-zone",
                 "k8s-region",
                 std::nullopt,
                 {"no tag of region category \"k8s-region\"", "HostSystem h"}},
        ZoneCase{"CategoryCaseMatters",
                 {{Obj("HostSystem h", {{"z", "K8S-ZONE"}, Region("r")})}},
                 "k8s-zone",
                 "k8s-region",
                 std::nullopt,
                 {"zone category \"k8s-zone\""}},
        ZoneCase{
            "NoAncestors", {}, "k8s-zone", "k8s-region", std::nullopt, {"no ancestors were given"}},
        ZoneCase{"TwoZoneTagsOnNearestObject",
                 {{Obj("ClusterComputeResource domain-c1 (cl1)", {Zone("za"), Zone("zb")}),
                   Obj("Datacenter d", {Region("r")})}},
                 "k8s-zone",
                 "k8s-region",
                 std::nullopt,
                 {"ClusterComputeResource domain-c1 (cl1) has 2 tags of zone category \"k8s-zone\"",
                  "\"za\", \"zb\""}},
        ZoneCase{"TwoRegionTags",
                 {{Obj("HostSystem h", {Zone("z"), Region("r1"), Region("r2")})}},
                 "k8s-zone",
                 "k8s-region",
                 std::nullopt,
                 {"2 tags of region category", "\"r1\", \"r2\""}}),
    [](const ::testing::TestParamInfo<ZoneCase>& info) { return info.param.name; });

// Issue 10 item 9: two tags of one category on one object are refused, and the message (which
// reaches the InitializationFailed Event and the log) names the object by type, MOID, name and
// inventory path, the category and every tag, and says what the Go provider would have done.
TEST(ResolveZoneRegionMessageTest, SeveralTagsOfOneCategory) {
  struct ZoneCase {
    std::string name;
    TaggedObject obj;
    std::string want;  // the whole message
  };
  const ZoneCase cases[] = {
      {"ClusterWithPath",
       {"ClusterComputeResource domain-c7 (cl1)",
        {Zone("zone-a"), Zone("zone-b"), Region("r")},
        "/dc1/host/cl1"},
       "ClusterComputeResource domain-c7 (cl1) at /dc1/host/cl1 has 2 tags of zone category "
       "\"k8s-zone\": \"zone-a\", \"zone-b\"; exactly one is allowed per object (the Go vSphere "
       "provider would silently take the last one; we refuse to guess): detach all but one"},
      {"ThreeTagsNoPath",
       {"HostSystem host-9 (esx9)", {Zone("z"), Zone("z2"), Zone("z3")}},
       "HostSystem host-9 (esx9) has 3 tags of zone category \"k8s-zone\": \"z\", \"z2\", "
       "\"z3\"; exactly one is allowed per object (the Go vSphere provider would silently take "
       "the last one; we refuse to guess): detach all but one"},
  };
  for (const ZoneCase& c : cases) {
    auto got = ResolveZoneRegion({{c.obj}}, "k8s-zone", "k8s-region");
    ASSERT_FALSE(got.ok()) << c.name;
    EXPECT_EQ(got.status().code(), absl::StatusCode::kFailedPrecondition) << c.name;
    EXPECT_EQ(got.status().message(), c.want) << c.name;
  }
}

TEST(InventoryPathsTest, Table) {
  struct ZoneCase {
    std::string name;
    std::vector<std::string> names;  // nearest first
    bool last_is_root;
    std::string base;
    std::vector<std::string> want;
  };
  const ZoneCase cases[] = {
      {"Empty", {}, true, "", {}},
      {"HostChainToRoot",
       {"esx1", "cl1", "host", "dc1", "Datacenters"},
       true,
       "",
       {"/dc1/host/cl1/esx1", "/dc1/host/cl1", "/dc1/host", "/dc1", "/"}},
      {"DatacenterInAFolder",
       {"vm1", "vm", "dc1", "east", "Datacenters"},
       true,
       "",
       {"/east/dc1/vm/vm1", "/east/dc1/vm", "/east/dc1", "/east", "/"}},
      {"PoolChainUnderItsCluster",
       {"rp1", "Resources"},
       false,
       "/dc1/host/cl1",
       {"/dc1/host/cl1/Resources/rp1", "/dc1/host/cl1/Resources"}},
      {"NoRootKnown", {"a", "b"}, false, "", {"/b/a", "/b"}},
      {"SlashInNameEscaped", {"a/b", "dc1", "Datacenters"}, true, "", {"/dc1/a%2fb", "/dc1", "/"}},
  };
  for (const ZoneCase& c : cases) {
    EXPECT_EQ(InventoryPaths(c.names, c.last_is_root, c.base), c.want) << c.name;
  }
}

}  // namespace
}  // namespace ccm::cloud
