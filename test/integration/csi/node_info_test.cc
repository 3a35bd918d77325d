// NodeGetInfo from the Node object in the Kubernetes API emulator, with product_serial as the
// ID's fallback, over the real gRPC socket.
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "fixtures/kube_emulator/kube_emulator.h"
#include "gtest/gtest.h"
#include "integration/csi/node_env.h"
#include "kube/client.h"
#include "kube/config.h"

namespace ccm::csi::testing {
namespace {

using ::ccm::testing::KubeEmulator;

constexpr char kProviderUuid[] = "4237abcd-1111-2222-3333-444455556666";
constexpr char kSerial[] = "VMware-56 4d 39 5e d8 07 e1 8a-cb 25 b7 9f 65 eb 2b 9f\n";
constexpr char kSerialUuid[] = "564d395e-d807-e18a-cb25-b79f65eb2b9f";

nlohmann::json NodeObj(const std::string& name, const std::string& provider_id,
                       const nlohmann::json& labels) {
  nlohmann::json n = {
      {"apiVersion", "v1"}, {"kind", "Node"}, {"metadata", {{"name", name}, {"labels", labels}}}};
  if (!provider_id.empty()) n["spec"]["providerID"] = provider_id;
  return n;
}

TopologyConfig ZoneRegion() {
  TopologyConfig t;
  t.zone_category = "k8s-zone";
  t.region_category = "k8s-region";
  return t;
}

class NodeInfoTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(emu_.Start().ok());
    dir_ = absl::StrCat(TestDirPrefix(), "info-", counter_++);
    std::filesystem::create_directories(dir_);
    ASSERT_TRUE(emu_.WriteKubeconfig(dir_ + "/kubeconfig").ok());
    auto cfg = kube::LoadKubeconfig(dir_ + "/kubeconfig");
    ASSERT_TRUE(cfg.ok()) << cfg.status();
    cfg->timeout = absl::Seconds(5);
    auto client = kube::RestClient::New(*cfg, {.max_retries = 0});
    ASSERT_TRUE(client.ok()) << client.status();
    client_ = std::move(*client);
    serial_ = dir_ + "/product_serial";
  }
  void TearDown() override {
    env_.reset();
    std::filesystem::remove_all(dir_);
  }

  grpc::Status GetInfo(node::NodeInfoOptions info, ::csi::v1::NodeGetInfoResponse* resp) {
    env_.reset();
    auto env = NodeEnv::Start(absl::Seconds(1), std::move(info));
    EXPECT_TRUE(env.ok()) << env.status();
    if (!env.ok()) return grpc::Status(grpc::StatusCode::INTERNAL, "no env");
    env_ = std::move(*env);
    grpc::ClientContext ctx;
    return env_->node().NodeGetInfo(&ctx, {}, resp);
  }
  node::NodeInfoOptions Info(const std::string& name, TopologyConfig topology = {}) {
    node::NodeInfoOptions o;
    o.node_name = name;
    o.client = client_;
    o.product_serial_path = serial_;
    o.topology = std::move(topology);
    o.max_volumes_per_node = 59;
    return o;
  }

  static inline int counter_ = 0;
  KubeEmulator emu_;
  std::shared_ptr<kube::RestClient> client_;
  std::string dir_, serial_;
  std::unique_ptr<NodeEnv> env_;
};

TEST_F(NodeInfoTest, IdFromProviderIdTopologyFromLabels) {
  ASSERT_TRUE(emu_.Create("nodes", NodeObj("node-1", absl::StrCat("vsphere://", kProviderUuid),
                                           {{"topology.kubernetes.io/zone", "zone-a"},
                                            {"topology.kubernetes.io/region", "region-1"}}))
                  .ok());
  ASSERT_TRUE(WriteFile(serial_, kSerial).ok());  // present, but providerID wins
  ::csi::v1::NodeGetInfoResponse resp;
  grpc::Status s = GetInfo(Info("node-1", ZoneRegion()), &resp);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(resp.node_id(), kProviderUuid);
  EXPECT_EQ(resp.max_volumes_per_node(), 59);
  const auto& seg = resp.accessible_topology().segments();
  EXPECT_EQ(seg.size(), 2u);
  EXPECT_EQ(seg.at("failure-domain.beta.kubernetes.io/zone"), "zone-a");
  EXPECT_EQ(seg.at("failure-domain.beta.kubernetes.io/region"), "region-1");

  // Without topology configured: no accessible_topology at all.
  ::csi::v1::NodeGetInfoResponse plain;
  ASSERT_TRUE(GetInfo(Info("node-1"), &plain).ok());
  EXPECT_FALSE(plain.has_accessible_topology());
  EXPECT_EQ(plain.node_id(), kProviderUuid);
}

TEST_F(NodeInfoTest, NoProviderIdYetFallsBackToProductSerial) {
  ASSERT_TRUE(emu_.Create("nodes", NodeObj("node-2", "", nlohmann::json::object())).ok());
  ASSERT_TRUE(WriteFile(serial_, kSerial).ok());
  ::csi::v1::NodeGetInfoResponse resp;
  grpc::Status s = GetInfo(Info("node-2"), &resp);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(resp.node_id(), kSerialUuid);
}

TEST_F(NodeInfoTest, MissingTopologyLabelIsUnavailable) {
  ASSERT_TRUE(emu_.Create("nodes", NodeObj("node-3", absl::StrCat("vsphere://", kProviderUuid),
                                           {{"topology.kubernetes.io/zone", "zone-a"}}))
                  .ok());
  ::csi::v1::NodeGetInfoResponse resp;
  grpc::Status s = GetInfo(Info("node-3", ZoneRegion()), &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAVAILABLE) << s.error_message();
  EXPECT_NE(s.error_message().find("node-3"), std::string::npos) << s.error_message();
}

TEST_F(NodeInfoTest, ApiMissing) {
  ASSERT_TRUE(WriteFile(serial_, kSerial).ok());
  emu_.Stop();  // the API server is gone
  // Without topology the ID still comes from product_serial.
  ::csi::v1::NodeGetInfoResponse resp;
  grpc::Status s = GetInfo(Info("node-4"), &resp);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(resp.node_id(), kSerialUuid);
  // With topology configured the plugin must not register without it: Unavailable, naming
  // the Node it could not read.
  s = GetInfo(Info("node-4", ZoneRegion()), &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAVAILABLE) << s.error_message();
  EXPECT_NE(s.error_message().find("Node node-4"), std::string::npos) << s.error_message();
  // No API client at all and no product_serial: Unavailable naming both sources.
  node::NodeInfoOptions none = Info("node-4");
  none.client = nullptr;
  none.product_serial_path = dir_ + "/missing_serial";
  s = GetInfo(none, &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAVAILABLE) << s.error_message();
  EXPECT_NE(s.error_message().find("missing_serial"), std::string::npos) << s.error_message();
  EXPECT_NE(s.error_message().find("Node node-4"), std::string::npos) << s.error_message();
}

}  // namespace
}  // namespace ccm::csi::testing
