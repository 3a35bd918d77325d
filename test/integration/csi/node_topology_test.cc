// CSINodeTopology end to end over the sockets (issue 44): node plugins without csi-vsphere.conf
// (NodeInfoSource with topology_from_crd) create their objects in the API emulator and wait; the
// syncer's controller finds each VM through the VM stream and its host's tags through the
// datastore inventory of the simulator, and writes the status; NodeGetInfo's answer is the
// topology.csi.vmware.com/<category> segments. Errors (a host without a tag, an unknown VM) are
// in status.errorMessage and the node's answer; a tag moved in vCenter reaches the status; no
// tagging request is made per node.
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "csi/controller/datastore_inventory.h"
#include "csi/controller/node_vm_topology.h"
#include "csi/crd/csinodetopology.h"
#include "csi/node/node_info.h"
#include "csi/syncer/node_topology_controller.h"
#include "fixtures/kube_emulator/kube_emulator.h"
#include "fixtures/vcsim/sim_client_options.h"
#include "fixtures/vcsim/simulator_suite.h"
#include "fixtures/vcsim/vcsim_process.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kube/client.h"
#include "kube/config.h"
#include "kube/event_recorder.h"
#include "kube/kube_event_sink.h"
#include "testing/eventually.h"
#include "testing/static_credentials.h"
#include "vsphere/inventory_cache.h"

namespace ccm::csi {
namespace {

using ::ccm::testing::Eventually;
using ::testing::HasSubstr;

constexpr char kSpec[] = R"({
  "users": {"u": "p"},
  "datacenters": [{"name": "dc1",
    "clusters": [{"name": "zone-a", "hosts": 2}, {"name": "zone-b", "hosts": 1},
                 {"name": "untagged", "hosts": 1}],
    "vms": [{"name": "node-a1", "cluster": "zone-a"}, {"name": "node-b1", "cluster": "zone-b"},
            {"name": "node-x", "cluster": "untagged"}],
    "datastores": [{"name": "ds-a", "clusters": ["zone-a"]}]}],
  "tag_categories": [{"name": "k8s-zone"}, {"name": "k8s-region"}],
  "tags": [{"name": "zone-a", "category": "k8s-zone", "attach": ["/dc1/host/zone-a"]},
           {"name": "zone-b", "category": "k8s-zone", "attach": ["/dc1/host/zone-b"]},
           {"name": "region-1", "category": "k8s-region", "attach": ["/dc1"]}]
})";
constexpr char kZone[] = "topology.csi.vmware.com/k8s-zone";
constexpr char kRegion[] = "topology.csi.vmware.com/k8s-region";

nlohmann::json Crd() {
  return {{"apiVersion", "apiextensions.k8s.io/v1"},
          {"kind", "CustomResourceDefinition"},
          {"metadata", {{"name", kCsiNodeTopologyCrd}}},
          {"spec",
           {{"group", "cns.vmware.com"},
            {"scope", "Cluster"},
            {"names", {{"kind", "CSINodeTopology"}, {"plural", "csinodetopologies"}}},
            {"versions", {{{"name", "v1alpha1"}, {"served", true}, {"storage", true}}}}}}};
}

class NodeTopologyTest : public ccm::testing::SimulatorSuite<NodeTopologyTest> {
 public:
  static std::vector<std::string> Specs() { return {kSpec}; }

 protected:
  void SetUpTest() override {
    ASSERT_TRUE(emu_.Start().ok());
    dir_ = absl::StrCat(::testing::TempDir(), "node-topology-", getpid(), "-", counter_++);
    std::filesystem::create_directories(dir_);
    ASSERT_TRUE(emu_.WriteKubeconfig(dir_ + "/kubeconfig").ok());
    auto cfg = kube::LoadKubeconfig(dir_ + "/kubeconfig");
    ASSERT_TRUE(cfg.ok()) << cfg.status();
    auto rc = kube::RestClient::New(*cfg);
    ASSERT_TRUE(rc.ok()) << rc.status();
    client_ = std::shared_ptr<kube::Client>(std::move(*rc));

    vsphere::ClientOptions co = ccm::testing::SimClientOptions(sim().info());
    vim_ = std::make_unique<vsphere::Client>(co, &creds_);
    vsphere::TaggingOptions to;
    to.server = "127.0.0.1";
    to.url = co.url;
    to.http.tls = co.tls;
    tagging_ = std::make_unique<vsphere::TaggingClient>(to, creds_);
    vms_ = std::make_unique<vsphere::InventoryCache>(*vim_);
    DatastoreInventoryOptions dio;
    dio.topology.topology_categories = {"k8s-region", "k8s-zone"};
    dio.watch = false;
    hosts_ = std::make_unique<DatastoreInventory>(
        std::vector<DatastoreSource>{{"vc1", vim_.get(), tagging_.get(), {}, nullptr}}, dio);
    source_ = std::make_unique<NodeVmTopologyFromVCenter>(
        std::vector<NodeVmVCenter>{{"vc1", vms_.get()}}, hosts_.get());
    sink_ = std::make_unique<kube::KubeEventSink>(*client_);
    events_ = std::make_unique<kube::EventRecorder>(*sink_, kube::EventRecorderOptions{});
    syncer::NodeTopologyControllerOptions no;
    no.topology = dio.topology;
    no.recheck = absl::Milliseconds(100);
    no.events = events_.get();
    controller_ = std::make_unique<syncer::NodeTopologyController>(*client_, *source_, no);
  }
  void TearDown() override {
    if (controller_) controller_->Stop();
    if (hosts_) hosts_->Stop();
    if (vms_) vms_->Stop();
    if (events_) events_->Shutdown(absl::Seconds(1));
    emu_.Stop();
    std::filesystem::remove_all(dir_);
  }
  // Starts the syncer side; `crd`: the CRD is installed first.
  void StartSyncer(bool crd = true) {
    if (crd) {
      ASSERT_TRUE(emu_.Create("customresourcedefinitions", Crd()).ok());
    }
    vms_->Start();
    ASSERT_TRUE(vms_->WaitForSync(absl::Seconds(20)));
    ASSERT_TRUE(hosts_->RefreshNow().ok());
    controller_->Start();
  }
  std::string PutNode(const std::string& vm) {
    std::string uuid;
    for (const auto& v : sim().info().vms) {
      if (v.name == vm) uuid = v.uuid;
    }
    EXPECT_FALSE(uuid.empty()) << vm;
    nlohmann::json node = {{"apiVersion", "v1"},
                           {"kind", "Node"},
                           {"metadata", {{"name", vm}}},
                           {"spec", {{"providerID", absl::StrCat("vsphere://", uuid)}}}};
    EXPECT_TRUE(emu_.Put("nodes", node).ok());
    return uuid;
  }
  absl::StatusOr<node::NodeInfo> NodeGetInfo(const std::string& name) {
    node::NodeInfoOptions o;
    o.node_name = name;
    o.client = client_;
    o.product_serial_path = dir_ + "/no-serial";
    o.topology_from_crd = true;
    o.topology_wait = absl::Seconds(20);
    return node::NodeInfoSource(o).Get();
  }
  CsiNodeTopology Object(const std::string& name) {
    auto got = client_->Get(CsiNodeTopologies(), "", name);
    return got.ok() ? ParseCsiNodeTopology(*got) : CsiNodeTopology{};
  }
  std::vector<std::string> EventReasons(const std::string& name) {
    std::vector<std::string> out;
    auto list = client_->List(kube::CoreEvents(), "", {});
    if (!list.ok()) return out;
    for (const auto& e : list->items) {
      if (e.value("/involvedObject/name"_json_pointer, std::string()) == name) {
        out.push_back(e.value("reason", std::string()));
      }
    }
    return out;
  }

  static inline int counter_ = 0;
  ccm::testing::KubeEmulator emu_;
  std::string dir_;
  std::shared_ptr<kube::Client> client_;
  vsphere::StaticCredentialSource creds_{{"u", Secret("p")}};
  std::unique_ptr<vsphere::Client> vim_;
  std::unique_ptr<vsphere::TaggingClient> tagging_;
  std::unique_ptr<vsphere::InventoryCache> vms_;
  std::unique_ptr<DatastoreInventory> hosts_;
  std::unique_ptr<NodeVmTopologyFromVCenter> source_;
  std::unique_ptr<kube::KubeEventSink> sink_;
  std::unique_ptr<kube::EventRecorder> events_;
  std::unique_ptr<syncer::NodeTopologyController> controller_;
};

TEST_F(NodeTopologyTest, NodePluginsWithoutConfigGetTheirZonesThroughCsiNodeTopology) {
  StartSyncer();
  const std::string uuid_a = PutNode("node-a1");
  PutNode("node-b1");
  const uint64_t tag_requests = tagging_->stats().requests;

  auto a = NodeGetInfo("node-a1");
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->node_id, uuid_a);
  EXPECT_EQ(a->topology, (Segments{{kZone, "zone-a"}, {kRegion, "region-1"}}));
  auto b = NodeGetInfo("node-b1");
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(b->topology, (Segments{{kZone, "zone-b"}, {kRegion, "region-1"}}));

  const CsiNodeTopology obj = Object("node-a1");
  EXPECT_EQ(obj.node_id, "node-a1");
  EXPECT_EQ(obj.node_uuid, uuid_a);
  EXPECT_EQ(obj.status.status, kNodeTopologySuccess);
  EXPECT_EQ(obj.status.labels, (std::vector<std::pair<std::string, std::string>>{
                                   {kRegion, "region-1"}, {kZone, "zone-a"}}));
  // Owned by its Node, so it goes with it.
  auto raw = client_->Get(CsiNodeTopologies(), "", "node-a1");
  ASSERT_TRUE(raw.ok());
  EXPECT_EQ((*raw)["metadata"]["ownerReferences"][0]["kind"], "Node");
  // No tagging request per node: the inventory's one batch answered both.
  EXPECT_EQ(tagging_->stats().requests, tag_requests);
  EXPECT_TRUE(Eventually([&] {
    auto r = EventReasons("node-a1");
    return std::find(r.begin(), r.end(), "TopologyRetrievalSucceeded") != r.end();
  }));

  // A second registration (a node plugin restart) resets the status and gets the same answer.
  auto again = NodeGetInfo("node-a1");
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->topology, a->topology);
}

TEST_F(NodeTopologyTest, AHostWithoutATagAndAnUnknownVmAreErrorsTheNodeReports) {
  StartSyncer();
  PutNode("node-x");
  auto x = NodeGetInfo("node-x");
  ASSERT_EQ(x.status().code(), absl::StatusCode::kInternal) << x.status();
  EXPECT_THAT(x.status().message(), HasSubstr("no tag of category k8s-zone on HostSystem:"));
  const CsiNodeTopology obj = Object("node-x");
  EXPECT_EQ(obj.status.status, kNodeTopologyError);
  EXPECT_THAT(obj.status.error_message, HasSubstr("node-x"));
  EXPECT_TRUE(obj.status.labels.empty());

  nlohmann::json ghost = {
      {"apiVersion", "v1"},
      {"kind", "Node"},
      {"metadata", {{"name", "ghost"}}},
      {"spec", {{"providerID", "vsphere://42000000-0000-0000-0000-000000000001"}}}};
  ASSERT_TRUE(emu_.Put("nodes", ghost).ok());
  auto g = NodeGetInfo("ghost");
  ASSERT_EQ(g.status().code(), absl::StatusCode::kInternal) << g.status();
  EXPECT_THAT(g.status().message(),
              HasSubstr("no VM with BIOS UUID 42000000-0000-0000-0000-000000000001"));
  EXPECT_TRUE(Eventually([&] {
    auto r = EventReasons("ghost");
    return std::find(r.begin(), r.end(), "TopologyRetrievalFailed") != r.end();
  }));
}

TEST_F(NodeTopologyTest, ATagMovedInVCenterReachesTheStatus) {
  StartSyncer();
  PutNode("node-a1");
  ASSERT_TRUE(NodeGetInfo("node-a1").ok());
  // zone-a's cluster becomes zone-b (the inventory reads tags again at its refresh interval;
  // here at once).
  ASSERT_TRUE(sim().AttachTag("zone-a", "/dc1/host/zone-a", false).ok());
  ASSERT_TRUE(sim().AttachTag("zone-b", "/dc1/host/zone-a", true).ok());
  ASSERT_TRUE(hosts_->RefreshNow().ok());
  EXPECT_TRUE(Eventually([&] {
    const CsiNodeTopology o = Object("node-a1");
    return o.status.status == kNodeTopologySuccess && o.status.labels.size() == 2 &&
           o.status.labels[1].second == "zone-b";
  })) << Object("node-a1").status.labels.size();
  ASSERT_TRUE(sim().AttachTag("zone-b", "/dc1/host/zone-a", false).ok());
  ASSERT_TRUE(sim().AttachTag("zone-a", "/dc1/host/zone-a", true).ok());
}

TEST_F(NodeTopologyTest, WithoutTheCrdTheNodeRegistersWithoutTopology) {
  StartSyncer(/*crd=*/false);
  PutNode("node-a1");
  auto a = NodeGetInfo("node-a1");
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_TRUE(a->topology.empty());
  EXPECT_FALSE(a->node_id.empty());
}

}  // namespace
}  // namespace ccm::csi
