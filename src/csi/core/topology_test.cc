#include "csi/core/topology.h"

#include <gtest/gtest.h>

namespace ccm::csi {
namespace {

using Labels = std::map<std::string, std::string>;

TopologyConfig ZoneRegion() { return {"k8s-zone", "k8s-region", {}, {}}; }

TEST(TopologyTest, SplitCategories) {
  EXPECT_EQ(SplitTopologyCategories(" k8s-zone, k8s-rack ,,"),
            (std::vector<std::string>{"k8s-zone", "k8s-rack"}));
  EXPECT_TRUE(SplitTopologyCategories("").empty());
}

TEST(TopologyTest, KeysPerConfig) {
  TopologyConfig relabelled = ZoneRegion();
  relabelled.category_labels = {{"k8s-zone", "topology.kubernetes.io/zone"},
                                {"k8s-region", "topology.kubernetes.io/region"}};
  TopologyConfig categories = ZoneRegion();
  categories.topology_categories = {"k8s-zone", "k8s-rack"};
  struct Case {
    const char* name;
    TopologyConfig config;
    TopologyMode mode;
    std::vector<std::string> keys;
  } cases[] = {
      {"nothing configured", {}, TopologyMode::kNone, {}},
      {"zone without region is no topology", {"k8s-zone", "", {}, {}}, TopologyMode::kNone, {}},
      {"zone and region: the legacy beta keys, as the reference",
       ZoneRegion(),
       TopologyMode::kZoneRegion,
       {"failure-domain.beta.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/region"}},
      {"[TopologyCategory] label overrides",
       relabelled,
       TopologyMode::kZoneRegion,
       {"topology.kubernetes.io/zone", "topology.kubernetes.io/region"}},
      {"topology-categories win over zone/region",
       categories,
       TopologyMode::kCategories,
       {"topology.csi.vmware.com/k8s-zone", "topology.csi.vmware.com/k8s-rack"}},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(ModeOf(c.config), c.mode) << c.name;
    EXPECT_EQ(TopologyKeys(c.config), c.keys) << c.name;
  }
}

TEST(TopologyTest, NodeTopology) {
  const Labels ccm_labels = {{"topology.kubernetes.io/zone", "zone-a"},
                             {"topology.kubernetes.io/region", "region-1"},
                             {"failure-domain.beta.kubernetes.io/zone", "zone-a"},
                             {"failure-domain.beta.kubernetes.io/region", "region-1"},
                             {"kubernetes.io/hostname", "w1"}};
  const Labels beta_only = {{"failure-domain.beta.kubernetes.io/zone", "zone-b"},
                            {"failure-domain.beta.kubernetes.io/region", "region-2"}};
  TopologyConfig relabelled = ZoneRegion();
  relabelled.category_labels = {{"k8s-zone", "topology.kubernetes.io/zone"}};
  TopologyConfig categories = ZoneRegion();
  categories.topology_categories = {"k8s-zone", "k8s-rack"};
  TopologyConfig categories_only;
  categories_only.topology_categories = {"k8s-zone"};
  // What the parser allows with topology-categories (no [Labels] zone/region): the Node label of
  // a category named by [TopologyCategory].
  TopologyConfig categories_named;
  categories_named.topology_categories = {"k8s-region", "k8s-zone"};
  categories_named.category_labels = {{"k8s-zone", "topology.kubernetes.io/zone"},
                                      {"k8s-region", "topology.kubernetes.io/region"}};
  Labels with_rack = ccm_labels;
  with_rack["topology.csi.vmware.com/k8s-rack"] = "rack-3";
  struct Case {
    const char* name;
    Labels labels;
    TopologyConfig config;
    absl::StatusCode code;
    Segments want;
  } cases[] = {
      {"no topology configured", ccm_labels, {}, absl::StatusCode::kOk, {}},
      {"zone/region from the CCM's labels",
       ccm_labels,
       ZoneRegion(),
       absl::StatusCode::kOk,
       {{"failure-domain.beta.kubernetes.io/zone", "zone-a"},
        {"failure-domain.beta.kubernetes.io/region", "region-1"}}},
      {"beta labels only (an older CCM)",
       beta_only,
       ZoneRegion(),
       absl::StatusCode::kOk,
       {{"failure-domain.beta.kubernetes.io/zone", "zone-b"},
        {"failure-domain.beta.kubernetes.io/region", "region-2"}}},
      {"relabelled zone key",
       ccm_labels,
       relabelled,
       absl::StatusCode::kOk,
       {{"topology.kubernetes.io/zone", "zone-a"},
        {"failure-domain.beta.kubernetes.io/region", "region-1"}}},
      {"categories: zone from the CCM label, rack from its own label",
       with_rack,
       categories,
       absl::StatusCode::kOk,
       {{"topology.csi.vmware.com/k8s-zone", "zone-a"},
        {"topology.csi.vmware.com/k8s-rack", "rack-3"}}},
      {"categories: rack label missing",
       ccm_labels,
       categories,
       absl::StatusCode::kUnavailable,
       {}},
      {"categories named by [TopologyCategory] label: read from the CCM's labels",
       ccm_labels,
       categories_named,
       absl::StatusCode::kOk,
       {{"topology.csi.vmware.com/k8s-zone", "zone-a"},
        {"topology.csi.vmware.com/k8s-region", "region-1"}}},
      {"categories without zone/region config: only the published key counts",
       ccm_labels,
       categories_only,
       absl::StatusCode::kUnavailable,
       {}},
      {"Node not initialised yet",
       {{"kubernetes.io/hostname", "w1"}},
       ZoneRegion(),
       absl::StatusCode::kUnavailable,
       {}},
  };
  for (const Case& c : cases) {
    absl::StatusOr<Segments> got = NodeTopology(c.labels, c.config);
    EXPECT_EQ(got.status().code(), c.code) << c.name << ": " << got.status();
    if (got.ok()) {
      EXPECT_EQ(*got, c.want) << c.name;
    }
  }
  absl::Status missing = NodeTopology(ccm_labels, categories).status();
  EXPECT_NE(missing.message().find("k8s-rack"), absl::string_view::npos) << missing;
  absl::Status unnamed = NodeTopology(ccm_labels, categories_only).status();
  EXPECT_NE(unnamed.message().find("set [TopologyCategory \"k8s-zone\"] label"),
            absl::string_view::npos)
      << unnamed;
  // A cluster whose cloud provider writes no zone labels is told which label to set by hand.
  absl::Status unlabelled = NodeTopology({}, categories_named).status();
  EXPECT_NE(unlabelled.message().find("label the Node with topology.kubernetes.io/"),
            absl::string_view::npos)
      << unlabelled;
}

TEST(TopologyTest, SegmentMatches) {
  const Segments full = {{"zone", "a"}, {"region", "r1"}};
  EXPECT_TRUE(SegmentMatches({{"zone", "a"}, {"region", "r1"}}, full));
  EXPECT_TRUE(SegmentMatches({{"region", "r1"}}, full));
  EXPECT_TRUE(SegmentMatches({}, full));
  EXPECT_FALSE(SegmentMatches({{"zone", "b"}}, full));
  EXPECT_FALSE(SegmentMatches({{"rack", "1"}}, full));
  EXPECT_EQ(FormatSegments(full), "{region=r1, zone=a}");
}

}  // namespace
}  // namespace ccm::csi
