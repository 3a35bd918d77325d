// The datastore inventory against the simulator: datastores of the watched datacenters with
// free space, type, datastore-cluster membership and the hosts mounting them, every host with its
// topology, preferred datastores, the requests a refresh costs, and Unavailable (never an empty
// view) before the first load.
#include "csi/controller/datastore_inventory.h"

#include <map>
#include <optional>

#include "absl/strings/str_cat.h"
#include "fixtures/vcsim/sim_client_options.h"
#include "fixtures/vcsim/simulator_suite.h"
#include "fixtures/vcsim/vcsim_process.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/eventually.h"
#include "testing/static_credentials.h"
#include "vsphere/soap.h"

namespace ccm::csi {
namespace {

using ::ccm::testing::VcsimProcess;
constexpr int64_t kMiB = 1024 * 1024;
constexpr char kZone[] = "failure-domain.beta.kubernetes.io/zone";
constexpr char kRegion[] = "failure-domain.beta.kubernetes.io/region";

constexpr char kSpec[] = R"({
  "users": {"u": "p"},
  "datacenters": [
    {"name": "dc1",
     "clusters": [{"name": "zone-a", "hosts": 2}, {"name": "zone-b", "hosts": 1},
                  {"name": "untagged", "hosts": 1}],
     "datastores": [{"name": "datastore1", "capacity_mb": 2048, "free_mb": 1024},
                    {"name": "ds-a", "capacity_mb": 4096, "clusters": ["zone-a"]},
                    {"name": "ds-b", "capacity_mb": 8192, "clusters": ["zone-b"]},
                    {"name": "ds-x", "capacity_mb": 1024, "clusters": ["untagged"]},
                    {"name": "ds-ab", "capacity_mb": 1024, "clusters": ["zone-a", "zone-b"],
                     "type": "vsan"},
                    {"name": "ds-a0", "capacity_mb": 1024, "hosts": ["zone-a-host-0"]},
                    {"name": "ds-pod", "capacity_mb": 1024, "clusters": ["zone-b"],
                     "datastore_cluster": "pod-1"}]},
    {"name": "dc2", "clusters": [{"name": "other", "hosts": 1}],
     "datastores": [{"name": "ds-dc2", "clusters": ["other"]}]}],
  "tag_categories": [{"name": "k8s-zone"}, {"name": "k8s-region"},
                     {"name": "cns.vmware.topology-preferred-datastores"}],
  "tags": [{"name": "zone-a", "category": "k8s-zone", "attach": ["/dc1/host/zone-a"]},
           {"name": "zone-b", "category": "k8s-zone", "attach": ["/dc1/host/zone-b"]},
           {"name": "region-1", "category": "k8s-region", "attach": ["/dc1"]},
           {"name": "zone-b", "category": "cns.vmware.topology-preferred-datastores",
            "attach": ["/dc1/datastore/ds-ab"]}]
})";

class DatastoreInventoryTest : public ccm::testing::SimulatorSuite<DatastoreInventoryTest> {
 public:
  static std::vector<std::string> Specs() { return {kSpec}; }

 protected:
  void SetUpTest() override {
    vsphere::ClientOptions co = ccm::testing::SimClientOptions(sim().info());
    client_ = std::make_unique<vsphere::Client>(co, &creds_);
    vsphere::TaggingOptions to;
    to.server = "127.0.0.1";
    to.url = co.url;
    to.http.tls = co.tls;
    tagging_ = std::make_unique<vsphere::TaggingClient>(to, creds_);
  }

  std::unique_ptr<DatastoreInventory> Make(std::vector<std::string> datacenters,
                                           bool topology = true, bool watch = false) {
    DatastoreInventoryOptions o;
    o.change_delay = absl::Milliseconds(50);
    o.watch = watch;
    if (topology) {
      o.topology.zone_category = "k8s-zone";
      o.topology.region_category = "k8s-region";
    }
    return std::make_unique<DatastoreInventory>(
        std::vector<DatastoreSource>{{"vc1", client_.get(), tagging_.get(), datacenters}}, o);
  }

  static std::map<std::string, DatastoreCandidate> ByName(const DatastoreInventory& inv) {
    std::map<std::string, DatastoreCandidate> out;
    auto view = inv.Snapshot();
    EXPECT_TRUE(view.ok()) << view.status();
    if (view.ok()) {
      for (const auto& c : (*view)->datastores) out[c.name] = c;
    }
    return out;
  }
  static std::vector<Segments> Accessible(const DatastoreInventory& inv, const std::string& name) {
    auto view = inv.Snapshot();
    if (!view.ok()) return {};
    for (const auto& c : (*view)->datastores) {
      if (c.name == name) return AccessibleSegments(c, (*view)->hosts);
    }
    return {};
  }

  vsphere::StaticCredentialSource creds_{{"u", Secret("p")}};
  std::unique_ptr<vsphere::Client> client_;
  std::unique_ptr<vsphere::TaggingClient> tagging_;
};

Segments Zone(const std::string& z) { return {{kZone, z}, {kRegion, "region-1"}}; }

TEST_F(DatastoreInventoryTest, CandidatesCarryFreeSpaceAndTheirHostsTopology) {
  auto inv = Make({"dc1"});
  ASSERT_TRUE(inv->RefreshNow().ok());
  auto ds = ByName(*inv);
  ASSERT_TRUE(ds.contains("ds-a") && ds.contains("ds-b") && ds.contains("ds-ab"));
  ASSERT_TRUE(ds.contains("datastore1"));
  EXPECT_FALSE(ds.contains("ds-dc2"));  // dc2 is not watched
  EXPECT_EQ(ds["ds-a"].vcenter, "vc1");
  EXPECT_EQ(ds["ds-a"].datacenter, "dc1");
  EXPECT_EQ(ds["ds-a"].free_bytes, 4096 * kMiB);
  EXPECT_EQ(ds["datastore1"].free_bytes, 1024 * kMiB);
  EXPECT_FALSE(ds["ds-a"].url.empty());  // summary.url (the simulator's is a local path)
  EXPECT_FALSE(ds["ds-a"].moref.empty());
  EXPECT_EQ(ds["ds-a"].hosts.size(), 2u);
  EXPECT_EQ(ds["ds-ab"].type, "vsan");
  EXPECT_EQ(Accessible(*inv, "ds-a"), (std::vector<Segments>{Zone("zone-a")}));
  EXPECT_EQ(Accessible(*inv, "ds-b"), (std::vector<Segments>{Zone("zone-b")}));
  EXPECT_EQ(Accessible(*inv, "ds-ab"), (std::vector<Segments>{Zone("zone-a"), Zone("zone-b")}));
  EXPECT_TRUE(Accessible(*inv, "ds-x").empty());  // only hosts without a zone mount it
  // Mounted by one host of zone-a: not accessible from zone-a (zone-a-host-1 lacks it).
  EXPECT_EQ(ds["ds-a0"].hosts.size(), 1u);
  EXPECT_TRUE(Accessible(*inv, "ds-a0").empty());
  // Preferred in zone-b (a tag of the reference's category named after the zone).
  EXPECT_EQ(ds["ds-ab"].preferred_for, (std::vector<std::string>{"zone-b"}));
  EXPECT_TRUE(ds["ds-a"].preferred_for.empty());
  // Every host of the watched datacenters, with its segment.
  auto view = inv->Snapshot();
  ASSERT_TRUE(view.ok());
  std::map<std::string, std::optional<Segments>> hosts;
  for (const HostRecord& h : (*view)->hosts) hosts[h.name] = h.segment;
  EXPECT_EQ(hosts.size(), 4u);
  EXPECT_EQ(hosts["zone-a-host-1"], Zone("zone-a"));
  EXPECT_EQ(hosts["untagged-host-0"], std::nullopt);
}

TEST_F(DatastoreInventoryTest, WithoutTopologyNoSegmentsAndNoTaggingCalls) {
  auto inv = Make({}, /*topology=*/false);
  ASSERT_TRUE(sim().ResetCounters().ok());
  ASSERT_TRUE(inv->RefreshNow().ok());
  auto ds = ByName(*inv);
  EXPECT_TRUE(ds.contains("ds-dc2"));  // no datacenters configured: all of them
  EXPECT_TRUE(Accessible(*inv, "ds-a").empty());
  auto rest = sim().RestCounters();
  ASSERT_TRUE(rest.ok());
  EXPECT_TRUE(rest->empty()) << rest->begin()->first;
}

TEST_F(DatastoreInventoryTest, ARefreshCostsAFewRequestsAndAQuickOneJustOne) {
  auto inv = Make({"dc1"});
  ASSERT_TRUE(sim().ResetCounters().ok());
  ASSERT_TRUE(inv->RefreshNow().ok());
  auto first = sim().TotalRequests();
  ASSERT_TRUE(first.ok());
  // Datacenters, datastores and hosts, ancestry levels, tagging login + one batch + tag and
  // category names.
  EXPECT_LE(*first, 17);
  auto soap = sim().SoapCounters();
  ASSERT_TRUE(soap.ok());
  // A full refresh again: hosts' chains come from the ancestry cache, tags in one batch.
  ASSERT_TRUE(sim().ResetCounters().ok());
  ASSERT_TRUE(inv->RefreshNow().ok());
  auto second = sim().TotalRequests();
  ASSERT_TRUE(second.ok());
  EXPECT_LE(*second, 3);  // ListDatacenters, datastores and hosts, one tag batch

  // A change: applied to the cache at once, then one quick refresh (the datastores only).
  auto before = ByName(*inv)["ds-b"].free_bytes;
  inv->Start();
  ASSERT_TRUE(sim().ResetCounters().ok());
  inv->NoteChange("vc1", ByName(*inv)["ds-b"].url, -100 * kMiB);
  EXPECT_EQ(ByName(*inv)["ds-b"].free_bytes, before - 100 * kMiB);
  ASSERT_TRUE(::ccm::testing::Eventually([&] { return inv->stats().quick_refreshes >= 1; }));
  inv->Stop();
  EXPECT_EQ(ByName(*inv)["ds-b"].free_bytes, before);  // vCenter's figure: nothing was taken
  auto quick = sim().SoapCounters();
  ASSERT_TRUE(quick.ok());
  EXPECT_EQ((*quick)["RetrievePropertiesEx"], 1);
  EXPECT_EQ(sim().TotalRequests().value_or(-1), 1);
}

TEST_F(DatastoreInventoryTest, DatastoreClusterMembersAreCandidatesNamingTheirCluster) {
  auto inv = Make({"dc1"});
  ASSERT_TRUE(inv->RefreshNow().ok());
  auto ds = ByName(*inv);
  EXPECT_EQ(ds["ds-pod"].datastore_cluster, "pod-1");
  EXPECT_FALSE(ds["ds-pod"].datastore_cluster_moref.empty());
  EXPECT_EQ(Accessible(*inv, "ds-pod"), (std::vector<Segments>{Zone("zone-b")}));
  EXPECT_EQ(ds["ds-b"].datastore_cluster, "");
}

TEST_F(DatastoreInventoryTest, MountChangesReachTheViewAtTheNextRefresh) {
  auto inv = Make({"dc1"});
  ASSERT_TRUE(inv->RefreshNow().ok());
  ASSERT_TRUE(Accessible(*inv, "ds-a0").empty());
  ASSERT_TRUE(sim().MountDatastore("ds-a0", "zone-a-host-1", true).ok());
  inv->RequestFullRefresh();
  ASSERT_TRUE(inv->RefreshNow().ok());
  EXPECT_EQ(Accessible(*inv, "ds-a0"), (std::vector<Segments>{Zone("zone-a")}));
  ASSERT_TRUE(sim().MountDatastore("ds-a0", "zone-a-host-1", false).ok());
  ASSERT_TRUE(inv->RefreshNow().ok());
  EXPECT_TRUE(Accessible(*inv, "ds-a0").empty());
}

// The watchers' stream: a mount taken away or added, and a host added, reach the view within
// seconds with no refresh asked for and the full refresh 5 minutes away; idle, the stream costs
// one WaitForUpdatesEx per maxWaitSeconds and no refresh.
TEST_F(DatastoreInventoryTest, MountChangesReachTheViewThroughTheStream) {
  auto inv = Make({"dc1"}, /*topology=*/true, /*watch=*/true);
  inv->Start();
  ASSERT_TRUE(inv->WaitForLoad(absl::Seconds(30)));
  ASSERT_TRUE(inv->WaitForWatchers(absl::Seconds(30)));
  const DatastoreInventoryStats loaded = inv->stats();
  ASSERT_TRUE(Accessible(*inv, "ds-a0").empty());
  ASSERT_TRUE(sim().MountDatastore("ds-a0", "zone-a-host-1", true).ok());
  EXPECT_TRUE(::ccm::testing::Eventually([&] {
    return Accessible(*inv, "ds-a0") == std::vector<Segments>{Zone("zone-a")};
  })) << "a new mount never reached the view";
  ASSERT_TRUE(sim().MountDatastore("ds-a0", "zone-a-host-1", false).ok());
  EXPECT_TRUE(::ccm::testing::Eventually([&] { return Accessible(*inv, "ds-a0").empty(); }))
      << "an unmount never reached the view";
  const DatastoreInventoryStats after = inv->stats();
  EXPECT_GE(after.inventory_changes, 2u);
  EXPECT_EQ(after.full_refreshes, loaded.full_refreshes);  // mounts: quick refreshes
  inv->Stop();
}

TEST_F(DatastoreInventoryTest, UnknownDatacenterFailsTheLoadNaming) {
  auto inv = Make({"dc-missing"});
  absl::Status s = inv->RefreshNow();
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.message()), ::testing::HasSubstr("dc-missing"));
  EXPECT_EQ(inv->Snapshot().status().code(), absl::StatusCode::kUnavailable);
}

TEST_F(DatastoreInventoryTest, UnavailableBeforeTheFirstLoadAndServedFromMemoryAfter) {
  auto inv = Make({"dc1"});
  EXPECT_EQ(inv->Snapshot().status().code(), absl::StatusCode::kUnavailable);
  EXPECT_FALSE(inv->Health().ok());
  inv->Start();
  ASSERT_TRUE(inv->WaitForLoad(absl::Seconds(30)));
  EXPECT_TRUE(inv->Health().ok());
  ASSERT_TRUE(sim().ResetCounters().ok());
  for (int i = 0; i < 100; ++i) ASSERT_TRUE(inv->Snapshot().ok());
  EXPECT_EQ(sim().TotalRequests().value_or(-1), 0);  // no request per look-up
  inv->Stop();
}

}  // namespace
}  // namespace ccm::csi
