#include "csi/core/placement.h"

#include <gtest/gtest.h>

#include "csi/core/constants.h"

namespace ccm::csi {
namespace {

const Segments kA = {{"zone", "zone-a"}, {"region", "r1"}};
const Segments kB = {{"zone", "zone-b"}, {"region", "r1"}};
const Segments kC = {{"zone", "zone-c"}, {"region", "r2"}};

// Two vCenters; the same datastore name in both, and one NFS export (same URL) mounted in both.
std::vector<DatastoreCandidate> Inventory() {
  return {
      {"vc1", "dc1", "ds-a", "ds:///vmfs/volumes/a/", "datastore-1", "", 100 * kGiB, {kA}},
      {"vc1", "dc1", "ds-b", "ds:///vmfs/volumes/b/", "datastore-2", "", 50 * kGiB, {kB}},
      {"vc1", "dc1", "shared", "ds:///vmfs/volumes/nfs/", "datastore-3", "", 80 * kGiB, {kB, kA}},
      {"vc2", "dc9", "ds-a", "ds:///vmfs/volumes/a2/", "datastore-1", "", 500 * kGiB, {kC}},
      {"vc2", "dc9", "shared", "ds:///vmfs/volumes/nfs/", "datastore-7", "", 10 * kGiB, {kC}},
      {"vc1", "dc1", "tiny", "ds:///vmfs/volumes/t/", "datastore-9", "pod1", 1 * kGiB, {kB}},
  };
}

TEST(PlacementTest, Order) {
  const TopologyRequirement wffc_b = {{kB}, {kB}};
  const TopologyRequirement allowed_ab_prefer_b = {{kA, kB}, {kB}};
  const TopologyRequirement region_r1 = {{{{"region", "r1"}}}, {}};
  const TopologyRequirement prefer_c_only = {{}, {kC}};
  const TopologyRequirement wffc_c = {{kC}, {kC}};
  const TopologyRequirement empty_requirement;
  struct Case {
    const char* name;
    PlacementRequest request;
    std::vector<size_t> want;
  } cases[] = {
      {"WaitForFirstConsumer in zone-b: zone-b's datastores only, most free first",
       {2048, "", &wffc_b, true, {}},
       {2, 1}},
      {"preferred zone first, then the other requisite zone",
       {2048, "", &allowed_ab_prefer_b, true, {}},
       {2, 1, 0}},
      {"region-only requirement matches complete segments",
       {2048, "", &region_r1, true, {}},
       {0, 2, 1}},
      {"preferred without requisite: the rest follows",
       {2048, "", &prefer_c_only, true, {}},
       {3, 4, 0, 2, 1}},
      {"datastoreurl shared by two vCenters: the one in the zone",
       {2048, "ds:///vmfs/volumes/nfs/", &wffc_c, true, {}},
       {4}},
      {"datastoreurl without trailing slash",
       {2048, "ds:///vmfs/volumes/b", &wffc_b, true, {}},
       {1}},
      {"no requirement in a topology cluster: reachable from every node's segment",
       {2048, "", nullptr, true, {kA, kB}},
       {2}},
      {"no topology at all: everything by free space",
       {2048, "", nullptr, false, {}},
       {3, 0, 2, 1, 4}},
      {"empty requirement is no requirement",
       {2048, "", &empty_requirement, false, {}},
       {3, 0, 2, 1, 4}},
      {"small volume fits the tiny datastore too", {512, "", &wffc_b, true, {}}, {2, 1, 5}},
  };
  const std::vector<DatastoreCandidate> inventory = Inventory();
  for (const Case& c : cases) {
    auto got = ChooseDatastores(inventory, c.request);
    ASSERT_TRUE(got.ok()) << c.name << ": " << got.status();
    std::vector<size_t> order;
    for (const PlacementChoice& choice : *got) order.push_back(choice.candidate);
    EXPECT_EQ(order, c.want) << c.name;
  }
}

TEST(PlacementTest, AccessibleTopology) {
  const TopologyRequirement wffc_b = {{kB}, {kB}};
  auto got = ChooseDatastores(Inventory(), {2048, "", &wffc_b, true, {}});
  ASSERT_TRUE(got.ok()) << got.status();
  // The shared datastore serves both zones: both are returned (sorted), not just the requested.
  EXPECT_EQ((*got)[0].accessible_topology, (std::vector<Segments>{kA, kB}));
  EXPECT_EQ((*got)[1].accessible_topology, (std::vector<Segments>{kB}));
  auto flat = ChooseDatastores(Inventory(), {2048, "", nullptr, false, {}});
  ASSERT_TRUE(flat.ok()) << flat.status();
  EXPECT_TRUE((*flat)[0].accessible_topology.empty());
}

TEST(PlacementTest, Errors) {
  const TopologyRequirement wffc_a = {{kA}, {kA}};
  const TopologyRequirement nowhere = {{{{"zone", "zone-x"}}}, {}};
  struct Case {
    const char* name;
    PlacementRequest request;
    absl::StatusCode code;
    std::vector<std::string> message_has;
  } cases[] = {
      {"requirement without topology config",
       {2048, "", &wffc_a, false, {}},
       absl::StatusCode::kInvalidArgument,
       {"no topology is configured"}},
      {"unknown datastoreurl",
       {2048, "ds:///vmfs/volumes/zzz/", nullptr, false, {}},
       absl::StatusCode::kInvalidArgument,
       {"ds:///vmfs/volumes/zzz/"}},
      {"datastoreurl outside the requested zone names both",
       {2048, "ds:///vmfs/volumes/b/", &wffc_a, true, {}},
       absl::StatusCode::kInvalidArgument,
       {"ds:///vmfs/volumes/b/", "zone-a"}},
      {"no datastore in the topology",
       {2048, "", &nowhere, true, {}},
       absl::StatusCode::kResourceExhausted,
       {"zone-x"}},
      {"nothing reachable from every node",
       {2048, "", nullptr, true, {kA, kB, kC}},
       absl::StatusCode::kResourceExhausted,
       {"every node"}},
      {"not enough space names the largest",
       {600 * 1024, "", nullptr, false, {}},
       absl::StatusCode::kResourceExhausted,
       {"614400 MiB", "512000 MiB", "vCenter vc2"}},
      {"not enough space in the zone",
       {200 * 1024, "", &wffc_a, true, {}},
       absl::StatusCode::kResourceExhausted,
       {"102400 MiB", "\"ds-a\"", "vCenter vc1"}},
  };
  const std::vector<DatastoreCandidate> inventory = Inventory();
  for (const Case& c : cases) {
    absl::Status s = ChooseDatastores(inventory, c.request).status();
    EXPECT_EQ(s.code(), c.code) << c.name << ": " << s;
    for (const std::string& word : c.message_has) {
      EXPECT_NE(s.message().find(word), absl::string_view::npos) << c.name << ": " << s;
    }
  }
  EXPECT_EQ(ChooseDatastores({}, {1, "", nullptr, false, {}}).status().code(),
            absl::StatusCode::kResourceExhausted);
}

TEST(PlacementTest, CapacityForSegment) {
  struct Case {
    const char* name;
    Segments segment;
    SegmentCapacity want;
  } cases[] = {
      {"zone-b", kB, {131 * kGiB, 80 * kGiB}},
      {"region r2", {{"region", "r2"}}, {510 * kGiB, 500 * kGiB}},
      {"whole cluster: same URL in two vCenters counted twice", {}, {741 * kGiB, 500 * kGiB}},
      {"unknown zone", {{"zone", "zone-x"}}, {0, 0}},
  };
  for (const Case& c : cases) {
    SegmentCapacity got = CapacityForSegment(Inventory(), c.segment);
    EXPECT_EQ(got.available_bytes, c.want.available_bytes) << c.name;
    EXPECT_EQ(got.maximum_volume_bytes, c.want.maximum_volume_bytes) << c.name;
  }
}

}  // namespace
}  // namespace ccm::csi
