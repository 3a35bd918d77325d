#include "csi/core/placement.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "csi/core/constants.h"

namespace ccm::csi {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

const Segments kA = {{"zone", "zone-a"}, {"region", "r1"}};
const Segments kB = {{"zone", "zone-b"}, {"region", "r1"}};
const Segments kC = {{"zone", "zone-c"}, {"region", "r2"}};

// vCenter vc1: zone-a (esx-a1, esx-a2), zone-b (esx-b1), esx-x without tags; vc2: zone-c.
std::vector<HostRecord> Hosts() {
  return {{"vc1", "host-a1", "esx-a1", kA},
          {"vc1", "host-a2", "esx-a2", kA},
          {"vc1", "host-b1", "esx-b1", kB},
          {"vc1", "host-x", "esx-x", std::nullopt},
          {"vc2", "host-c1", "esx-c1", kC}};
}

DatastoreCandidate Ds(const std::string& vc, const std::string& name, int64_t free_gib,
                      std::vector<std::string> hosts, const std::string& pod = "") {
  DatastoreCandidate c;
  c.vcenter = vc;
  c.datacenter = "dc1";
  c.name = name;
  c.url = "ds:///vmfs/volumes/" + name + "/";
  c.moref = "datastore-" + name;
  c.free_bytes = free_gib * kGiB;
  c.hosts = std::move(hosts);
  std::sort(c.hosts.begin(), c.hosts.end());
  if (!pod.empty()) {
    c.datastore_cluster = pod;
    c.datastore_cluster_moref = "group-" + pod;
  }
  return c;
}

std::vector<DatastoreCandidate> Inventory() {
  return {
      Ds("vc1", "ds-a", 100, {"host-a1", "host-a2"}),                          // 0
      Ds("vc1", "ds-a-partial", 300, {"host-a1"}),                             // 1
      Ds("vc1", "ds-b", 50, {"host-b1"}),                                      // 2
      Ds("vc1", "shared", 80, {"host-a1", "host-a2", "host-b1"}),              // 3
      Ds("vc1", "local-x", 900, {"host-x"}),                                   // 4
      Ds("vc2", "ds-c", 500, {"host-c1"}),                                     // 5
      Ds("vc1", "pod-shared", 20, {"host-a1", "host-a2", "host-b1"}, "pod1"),  // 6
      Ds("vc1", "pod-local", 40, {"host-a1"}, "pod1"),                         // 7
  };
}

const std::vector<NodeHost> kNodesAB = {{"node-1", "vc1", "host-a1"}, {"node-2", "vc1", "host-b1"}};
const std::vector<NodeHost> kNodesA1 = {{"node-1", "vc1", "host-a1"}};

std::vector<size_t> Indexes(const std::vector<PlacementChoice>& choices) {
  std::vector<size_t> out;
  for (const PlacementChoice& c : choices) out.push_back(c.candidate);
  return out;
}

TEST(PlacementTest, Order) {
  const TopologyRequirement wffc_a = {{kA}, {kA}};
  const TopologyRequirement ab_prefer_b = {{kA, kB}, {kB}};
  const TopologyRequirement region_r1 = {{{{"region", "r1"}}}, {}};
  struct Case {
    const char* name;
    PlacementRequest request;
    std::vector<size_t> want;
  } cases[] = {
      {"no requirement: mounted by every node VM's host; never the host-local one with most space",
       {1024, "", nullptr, false, kNodesAB},
       {3, 6}},
      {"no requirement, one node host", {1024, "", nullptr, false, kNodesA1}, {1, 0, 3, 7, 6}},
      {"zone-a: only datastores EVERY host of zone-a mounts", {1024, "", &wffc_a, true}, {0, 3, 6}},
      {"preferred zone first, then the other requisite zone",
       {1024, "", &ab_prefer_b, true},
       {3, 2, 6, 0}},
      {"a region-only requirement expands to its complete segments",
       {1024, "", &region_r1, true},
       {0, 3, 6, 2}},
      {"datastoreurl naming a datastore cluster: its shared members only",
       {1024, "pod1", nullptr, false, kNodesAB},
       {6}},
      {"datastore cluster by MOID", {1024, "group-pod1", nullptr, false, kNodesA1}, {7, 6}},
      {"datastoreurl without trailing slash",
       {1024, "ds:///vmfs/volumes/ds-a", &wffc_a, true},
       {0}},
      {"too small datastores are dropped", {90 * 1024, "", &wffc_a, true}, {0}},
  };
  const auto candidates = Inventory();
  for (const Case& c : cases) {
    auto got = ChooseDatastores(candidates, Hosts(), c.request);
    ASSERT_TRUE(got.ok()) << c.name << ": " << got.status();
    EXPECT_EQ(Indexes(*got), c.want) << c.name;
  }
}

TEST(PlacementTest, PreferredDatastoresOfASegmentComeFirst) {
  auto candidates = Inventory();
  candidates[6].preferred_for = {"zone-a"};
  candidates[2].preferred_for = {"zone-a"};  // preferred in zone-a but not mounted there
  const TopologyRequirement wffc_a = {{kA}, {kA}};
  auto got = ChooseDatastores(candidates, Hosts(), {1024, "", &wffc_a, true});
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_THAT(Indexes(*got), ElementsAre(6, 0, 3));
}

// Issue 42 item 5: datastores where the vCenter user lacks Datastore.FileManagement are never
// chosen, and every placement error names them.
TEST(PlacementTest, DatastoresWithoutPrivilegesAreSkippedAndNamed) {
  auto candidates = Inventory();
  const std::string lacks = "user k8s@vsphere.local lacks Datastore.FileManagement";
  candidates[3].no_privilege = lacks;  // "shared"
  const TopologyRequirement wffc_a = {{kA}, {kA}};
  auto got = ChooseDatastores(candidates, Hosts(), {1024, "", &wffc_a, true});
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_THAT(Indexes(*got), ElementsAre(0, 6)) << "shared (80 GiB) is left out";

  // Only the unprivileged one is shared by the nodes' hosts: the error says why it was skipped.
  candidates[6].no_privilege = lacks;
  auto none = ChooseDatastores(candidates, Hosts(), {1024, "", nullptr, false, kNodesAB});
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(none.status().message()),
              HasSubstr("skipped for privileges: datastore \"shared\""));
  EXPECT_THAT(std::string(none.status().message()), HasSubstr(lacks));

  // datastoreurl naming it: FailedPrecondition saying which privileges are needed.
  auto named = ChooseDatastores(candidates, Hosts(),
                                {1024, "ds:///vmfs/volumes/shared/", nullptr, false, kNodesAB});
  ASSERT_FALSE(named.ok());
  EXPECT_EQ(named.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(
      std::string(named.status().message()),
      HasSubstr("may not create volumes on any datastore of \"ds:///vmfs/volumes/shared/\""));
  EXPECT_THAT(std::string(named.status().message()), HasSubstr("Datastore.FileManagement"));

  // Capacity counts only where volumes can be made.
  EXPECT_EQ(CapacityForSegment(candidates, Hosts(), kA).available_bytes,
            CapacityForSegment(Inventory(), Hosts(), kA).available_bytes - (80 + 20) * kGiB);
}

// Issue 54 item 6: a datastore CNS manager suspended (custom value
// cns.vmware.com/datastoreSuspended) is never chosen, as the reference leaves it out, and errors
// name it; named by datastoreurl it is FailedPrecondition (the reference: Internal).
TEST(PlacementTest, SuspendedDatastoresAreLeftOutAndNamed) {
  auto candidates = Inventory();
  candidates[3].suspended = true;  // "shared"
  const TopologyRequirement wffc_a = {{kA}, {kA}};
  auto got = ChooseDatastores(candidates, Hosts(), {1024, "", &wffc_a, true});
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_THAT(Indexes(*got), ElementsAre(0, 6)) << "shared (80 GiB) is left out";

  candidates[6].no_privilege = "user u lacks Datastore.FileManagement";
  auto none = ChooseDatastores(candidates, Hosts(), {1024, "", nullptr, false, kNodesAB});
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(none.status().message()),
              AllOf(HasSubstr(std::string(kSuspendedForNewVolumes) + "datastore \"shared\""),
                    HasSubstr("skipped for privileges: datastore \"pod-shared\"")));

  auto named = ChooseDatastores(candidates, Hosts(),
                                {1024, "ds:///vmfs/volumes/shared/", nullptr, false, kNodesAB});
  ASSERT_FALSE(named.ok());
  EXPECT_EQ(named.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(named.status().message()),
              AllOf(HasSubstr("no datastore of \"ds:///vmfs/volumes/shared/\" takes new volumes"),
                    HasSubstr("cns.vmware.com/datastoreSuspended"), HasSubstr("\"shared\"")));
  EXPECT_THAT(std::string(named.status().message()), Not(HasSubstr(kNoPrivilegeOnAny)));

  EXPECT_EQ(CapacityForSegment(candidates, Hosts(), kA).available_bytes,
            CapacityForSegment(Inventory(), Hosts(), kA).available_bytes - (80 + 20) * kGiB);
}

TEST(PlacementTest, StoragePolicyNarrowsTheSharedDatastores) {
  const auto candidates = Inventory();
  std::vector<bool> compatible(candidates.size(), false);
  compatible[0] = compatible[5] = true;
  const TopologyRequirement wffc_a = {{kA}, {kA}};
  PlacementRequest r{1024, "", &wffc_a, true};
  r.compatible = &compatible;
  r.policy_name = "gold";
  auto got = ChooseDatastores(candidates, Hosts(), r);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_THAT(Indexes(*got), ElementsAre(0));

  // Compatible datastores exist, but none the nodes share.
  PlacementRequest nodes{1024, "", nullptr, false, kNodesAB};
  nodes.compatible = &compatible;
  nodes.policy_name = "gold";
  auto none = ChooseDatastores(candidates, Hosts(), nodes);
  EXPECT_EQ(none.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(none.status().message(), AllOf(HasSubstr("storage policy \"gold\""),
                                             HasSubstr("\"shared\""), HasSubstr("\"pod-shared\"")));
}

TEST(PlacementTest, AccessibleTopologyIsWhereEveryHostMountsIt) {
  const TopologyRequirement ab = {{kA, kB}, {}};
  auto got = ChooseDatastores(Inventory(), Hosts(), {1024, "", &ab, true});
  ASSERT_TRUE(got.ok()) << got.status();
  for (const PlacementChoice& c : *got) {
    if (c.candidate == 3) {
      EXPECT_THAT(c.accessible_topology, ElementsAre(kA, kB));
    }
    if (c.candidate == 0) {
      EXPECT_THAT(c.accessible_topology, ElementsAre(kA));
    }
  }
  EXPECT_TRUE(AccessibleSegments(Inventory()[1], Hosts()).empty()) << "one host of zone-a only";
  EXPECT_THAT(AccessibleSegments(Inventory()[5], Hosts()), ElementsAre(kC));
}

TEST(PlacementTest, Errors) {
  const TopologyRequirement wffc_a = {{kA}, {kA}};
  const TopologyRequirement zone_d = {{{{"zone", "zone-d"}}}, {}};
  const std::vector<NodeHost> two_vcenters = {{"node-1", "vc1", "host-a1"},
                                              {"node-9", "vc2", "host-c1"}};
  struct Case {
    const char* name;
    PlacementRequest request;
    absl::StatusCode code;
    std::vector<std::string> says;
  } cases[] = {
      {"requirements without topology",
       {1024, "", &wffc_a, false},
       absl::StatusCode::kInvalidArgument,
       {"no topology is configured"}},
      {"unknown datastoreurl",
       {1024, "ds:///nope/", nullptr, false, kNodesAB},
       absl::StatusCode::kInvalidArgument,
       {"ds:///nope/", "neither a datastore URL nor a datastore cluster"}},
      {"datastoreurl on one host: names the datastore and the hosts that lack it",
       {1024, "ds:///vmfs/volumes/local-x/", nullptr, false, kNodesAB},
       absl::StatusCode::kFailedPrecondition,
       {"local-x", "not mounted on", "esx-a1 (host-a1)", "esx-b1 (host-b1)"}},
      {"datastoreurl not shared by every host of the zone",
       {1024, "ds:///vmfs/volumes/ds-a-partial/", &wffc_a, true},
       absl::StatusCode::kFailedPrecondition,
       {"ds-a-partial", "esx-a2 (host-a2)", "zone-a"}},
      {"no node VM known",
       {1024, "", nullptr, false, {}, {"node-x", "node-y"}},
       absl::StatusCode::kFailedPrecondition,
       {"no node VM is known", "CSINode", "providerID", "known by neither: node-x, node-y"}},
      {"node VMs in two vCenters share nothing",
       {1024, "", nullptr, false, two_vcenters},
       absl::StatusCode::kResourceExhausted,
       {"hosts of every node VM", "esx-c1 (host-c1)"}},
      {"a segment no host has",
       {1024, "", &zone_d, true},
       absl::StatusCode::kResourceExhausted,
       {"no ESXi host has the topology {zone=zone-d}"}},
      {"no room",
       {200 * 1024, "", &wffc_a, true},
       absl::StatusCode::kResourceExhausted,
       {"no eligible datastore has 204800 MiB free", "102400 MiB on datastore \"ds-a\""}},
  };
  for (const Case& c : cases) {
    auto got = ChooseDatastores(Inventory(), Hosts(), c.request);
    ASSERT_FALSE(got.ok()) << c.name;
    EXPECT_EQ(got.status().code(), c.code) << c.name << ": " << got.status();
    for (const std::string& s : c.says) EXPECT_THAT(got.status().message(), HasSubstr(s)) << c.name;
  }
  auto empty = ChooseDatastores({}, Hosts(), {1024, "", nullptr, false, kNodesAB});
  EXPECT_THAT(empty.status().message(), HasSubstr("no datastore is available"));
  // Many datastores: the message stays short.
  std::vector<DatastoreCandidate> many;
  for (int i = 0; i < 40; ++i) many.push_back(Ds("vc1", "l" + std::to_string(i), 1, {"host-x"}));
  auto lots = ChooseDatastores(many, Hosts(), {1024, "", nullptr, false, kNodesAB});
  EXPECT_THAT(lots.status().message(), AllOf(HasSubstr("and 35 more"), Not(HasSubstr("\"l39\""))));
}

TEST(PlacementTest, CapacityForSegment) {
  const auto candidates = Inventory();
  SegmentCapacity a = CapacityForSegment(candidates, Hosts(), {{"zone", "zone-a"}});
  EXPECT_EQ(a.available_bytes, (100 + 80 + 20) * kGiB);  // ds-a, shared, pod-shared
  EXPECT_EQ(a.maximum_volume_bytes, 100 * kGiB);
  SegmentCapacity all = CapacityForSegment(candidates, Hosts(), {});
  EXPECT_EQ(all.available_bytes, (100 + 300 + 50 + 80 + 900 + 500 + 20 + 40) * kGiB);
  EXPECT_EQ(all.maximum_volume_bytes, 900 * kGiB);
  EXPECT_EQ(CapacityForSegment(candidates, Hosts(), {{"zone", "zone-d"}}).available_bytes, 0);
}

}  // namespace
}  // namespace ccm::csi
