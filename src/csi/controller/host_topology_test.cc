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

TEST(DistinctSegmentsTest, SortedDistinctCompleteOnly) {
  Segments a{{"z", "a"}}, b{{"z", "b"}};
  EXPECT_EQ(DistinctSegments({b, std::nullopt, a, b}), (std::vector<Segments>{a, b}));
  EXPECT_TRUE(DistinctSegments({std::nullopt}).empty());
}

}  // namespace
}  // namespace ccm::csi
