#include "csi/controller/host_topology.h"

#include "gtest/gtest.h"

namespace ccm::csi {
namespace {

vsphere::Tag T(const std::string& name, const std::string& category) {
  return {.id = name, .name = name, .category_id = category, .category_name = category};
}

TopologyConfig ZoneRegion() {
  TopologyConfig c;
  c.zone_category = "k8s-zone";
  c.region_category = "k8s-region";
  return c;
}

TEST(CategoriesOfTest, FollowsTheConfiguredMode) {
  EXPECT_TRUE(CategoriesOf(TopologyConfig{}).empty());
  TopologyCategories zr = CategoriesOf(ZoneRegion());
  EXPECT_EQ(zr.categories, (std::vector<std::string>{"k8s-zone", "k8s-region"}));
  EXPECT_EQ(zr.keys, (std::vector<std::string>{"failure-domain.beta.kubernetes.io/zone",
                                               "failure-domain.beta.kubernetes.io/region"}));
  TopologyConfig cats;
  cats.topology_categories = {"k8s-zone", "rack"};
  TopologyCategories c = CategoriesOf(cats);
  EXPECT_EQ(c.categories, (std::vector<std::string>{"k8s-zone", "rack"}));
  EXPECT_EQ(c.keys, (std::vector<std::string>{"topology.csi.vmware.com/k8s-zone",
                                              "topology.csi.vmware.com/rack"}));
}

TEST(SegmentOfChainTest, NearestObjectWinsPerCategory) {
  std::vector<TaggedRef> chain = {
      {"host", {}},
      {"cluster", {T("zone-b", "k8s-zone")}},
      {"datacenter", {T("zone-x", "k8s-zone"), T("region-1", "k8s-region")}},
  };
  auto seg = SegmentOfChain(chain, CategoriesOf(ZoneRegion()));
  ASSERT_TRUE(seg.ok()) << seg.status();
  ASSERT_TRUE(seg->has_value());
  EXPECT_EQ(**seg, (Segments{{"failure-domain.beta.kubernetes.io/zone", "zone-b"},
                             {"failure-domain.beta.kubernetes.io/region", "region-1"}}));
}

TEST(SegmentOfChainTest, MissingCategoryIsIncomplete) {
  std::vector<TaggedRef> chain = {{"cluster", {T("zone-b", "k8s-zone")}}, {"datacenter", {}}};
  auto seg = SegmentOfChain(chain, CategoriesOf(ZoneRegion()));
  ASSERT_TRUE(seg.ok());
  EXPECT_FALSE(seg->has_value());
}

TEST(SegmentOfChainTest, TwoTagsOfOneCategoryOnTheNearestObjectAreRefused) {
  std::vector<TaggedRef> chain = {{"HostSystem:host-1", {T("a", "k8s-zone"), T("b", "k8s-zone")}},
                                  {"datacenter", {T("region-1", "k8s-region")}}};
  auto seg = SegmentOfChain(chain, CategoriesOf(ZoneRegion()));
  ASSERT_EQ(seg.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(seg.status().message().find("HostSystem:host-1"), std::string::npos);
  EXPECT_NE(seg.status().message().find("a, b"), std::string::npos);
}

// The tag walk a CSINodeTopology status comes from (issue 44): the node VM's host, then its
// cluster, folders and datacenter, nearest first, per category.
TEST(HostTopologyOfTest, TagWalkTable) {
  TopologyConfig three;
  three.topology_categories = {"k8s-region", "k8s-zone", "rack"};
  const TopologyCategories cats = CategoriesOf(three);
  const std::string kRegion = "topology.csi.vmware.com/k8s-region";
  const std::string kZone = "topology.csi.vmware.com/k8s-zone";
  const std::string kRack = "topology.csi.vmware.com/rack";
  struct Case {
    std::string name;
    std::vector<TaggedRef> chain;
    std::optional<Segments> segment;
    std::string problem;  // part of it
  } cases[] = {
      {"each category on its own level",
       {{"HostSystem:host-1 (esx-1)", {T("r7", "rack")}},
        {"ClusterComputeResource:domain-c1 (c1)", {T("zone-a", "k8s-zone")}},
        {"Folder:group-h4 (host)", {}},
        {"Datacenter:datacenter-2 (dc)", {T("region-1", "k8s-region")}}},
       Segments{{kRegion, "region-1"}, {kZone, "zone-a"}, {kRack, "r7"}}},
      {"host beats cluster beats datacenter",
       {{"host", {T("zone-h", "k8s-zone"), T("r1", "rack")}},
        {"cluster", {T("zone-c", "k8s-zone"), T("region-c", "k8s-region")}},
        {"datacenter", {T("zone-d", "k8s-zone"), T("region-d", "k8s-region")}}},
       Segments{{kRegion, "region-c"}, {kZone, "zone-h"}, {kRack, "r1"}}},
      {"all on the datacenter",
       {{"host", {}},
        {"cluster", {}},
        {"datacenter", {T("region-d", "k8s-region"), T("zone-d", "k8s-zone"), T("r", "rack")}}},
       Segments{{kRegion, "region-d"}, {kZone, "zone-d"}, {kRack, "r"}}},
      {"tags of other categories are ignored",
       {{"host", {T("gold", "tier"), T("r1", "rack")}},
        {"cluster", {T("zone-c", "k8s-zone"), T("region-c", "k8s-region")}}},
       Segments{{kRegion, "region-c"}, {kZone, "zone-c"}, {kRack, "r1"}}},
      {"one category missing",
       {{"HostSystem:host-1 (esx-1)", {}},
        {"cluster", {T("zone-c", "k8s-zone")}},
        {"datacenter", {T("region-d", "k8s-region")}}},
       std::nullopt,
       "no tag of category rack on HostSystem:host-1 (esx-1) or its 2 ancestors"},
      {"two categories missing",
       {{"HostSystem:host-1 (esx-1)", {T("r1", "rack")}}},
       std::nullopt,
       "no tag of categories k8s-region, k8s-zone on HostSystem:host-1 (esx-1) or its 0 "
       "ancestors"},
      {"two tags of a category on the nearest object",
       {{"HostSystem:host-1 (esx-1)", {T("r1", "rack"), T("r2", "rack")}},
        {"cluster", {T("zone-c", "k8s-zone"), T("region-c", "k8s-region")}}},
       std::nullopt,
       "carries 2 tags of category rack (r1, r2)"},
  };
  for (const Case& c : cases) {
    HostTopology t = HostTopologyOf(c.chain, cats);
    EXPECT_EQ(t.segment, c.segment) << c.name;
    EXPECT_NE(t.problem.find(c.problem), std::string::npos) << c.name << ": " << t.problem;
    if (c.segment) {
      EXPECT_TRUE(t.problem.empty()) << c.name;
    }
  }
}

TEST(DistinctSegmentsTest, SortedDistinctCompleteOnly) {
  Segments a{{"z", "a"}}, b{{"z", "b"}};
  EXPECT_EQ(DistinctSegments({b, std::nullopt, a, b}), (std::vector<Segments>{a, b}));
  EXPECT_TRUE(DistinctSegments({std::nullopt}).empty());
}

}  // namespace
}  // namespace ccm::csi
