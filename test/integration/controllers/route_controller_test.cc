// The route controller against the API emulator and the NSX-T fixture, through NsxtRoutes: a
// static route per Node pod CIDR, stale ones removed, the NetworkUnavailable condition set as
// k8s.io/cloud-provider's route controller sets it, and nothing deleted when NSX-T fails.
#include "controllers/route_controller.h"

#include <gtest/gtest.h>

#include "cloud/nsxt/nsxt_routes.h"
#include "fixtures/nsxt/client_options.h"
#include "fixtures/nsxt/nsxt_fixture.h"
#include "integration/controllers/controllers_test_env.h"

namespace ccm::controllers {
namespace {

using ::ccm::testing::Eventually;
using ccm::testing::nsxt::NsxtFixture;
using testing::Env;

constexpr char kRoutes[] = "/infra/tier-1s/t1/static-routes/";

class RouteControllerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(env_.Init().ok());
    ASSERT_TRUE(nsx_.Start().ok());
    client_ = std::make_unique<nsxt::PolicyClient>(ccm::testing::nsxt::ClientOptions(nsx_));
    routes_ = std::make_unique<cloud::NsxtRoutes>(
        *client_, cloud::NsxtRoutesOptions{.router_path = "/infra/tier-1s/t1",
                                           .realized_poll = absl::Milliseconds(10)});
    RouteControllerOptions ro;
    ro.cluster_name = "k8s";
    ro.cluster_cidrs = *cloud::ParseClusterCidrs("10.244.0.0/16,fd00::/48");
    ro.clock = &env_.clock;
    controller_ = std::make_unique<RouteController>(*env_.client, *env_.nodes, *routes_,
                                                    env_.recorder.get(), ro);
  }

  // A kubelet's Node with pod CIDRs (as the node IPAM controller assigns them) and addresses.
  void AddNode(const std::string& name, std::vector<std::string> cidrs,
               std::vector<std::string> ips) {
    env_.CreateKubeletNode(name, true);
    env_.EditNode(name, [&](kube::Json& n) {
      if (!cidrs.empty()) {
        n["spec"]["podCIDR"] = cidrs[0];
        n["spec"]["podCIDRs"] = cidrs;
      }
      for (const auto& ip : ips)
        n["status"]["addresses"].push_back({{"type", "InternalIP"}, {"address", ip}});
    });
    ASSERT_TRUE(env_.StoreSees(name, [&](const kube::Json& n) {
      return n["spec"].value("podCIDRs", kube::Json::array()).size() == cidrs.size() &&
             n["status"].contains("addresses");
    }));
  }
  // The field of the stored Node's condition of this type ("" if none).
  std::string Condition(const std::string& node, const std::string& field,
                        const std::string& type = "NetworkUnavailable") {
    const kube::Json n = env_.GetNode(node);
    for (const auto& c : n["status"]["conditions"]) {
      if (c.value("type", "") == type) return c.value(field, "");
    }
    return "";
  }

  Env env_;
  NsxtFixture nsx_;
  std::unique_ptr<nsxt::PolicyClient> client_;
  std::unique_ptr<cloud::NsxtRoutes> routes_;
  std::unique_ptr<RouteController> controller_;
};

TEST_F(RouteControllerTest, ARoutePerPodCidrAndTheConditionCleared) {
  AddNode("a", {"10.244.1.0/24"}, {"10.0.0.11"});
  AddNode("b", {"10.244.2.0/24", "fd00:0:0:2::/64"}, {"10.0.0.12", "fd00::12"});
  AddNode("c", {}, {"10.0.0.13"});
  const std::string uid_a = kube::Uid(env_.GetNode("a"));
  RoutePassResult r = controller_->Reconcile();
  EXPECT_TRUE(r.listed.ok()) << r.listed;
  EXPECT_EQ(r.created, 3);
  EXPECT_EQ(r.conditions_written, 3);
  kube::Json route = nsx_.Object(kRoutes + uid_a + "_10.244.1.0_24");
  ASSERT_FALSE(route.is_null());
  EXPECT_EQ(route["next_hops"][0]["ip_address"], "10.0.0.11");
  EXPECT_EQ(nsx_.Paths(kRoutes).size(), 3u);
  EXPECT_EQ(Condition("a", "status"), "False");
  EXPECT_EQ(Condition("a", "reason"), "RouteCreated");
  EXPECT_EQ(Condition("b", "status"), "False");
  EXPECT_EQ(Condition("c", "status"), "True") << "no pod CIDR yet";
  EXPECT_EQ(Condition("c", "reason"), "NoRouteCreated");
  EXPECT_EQ(Condition("a", "status", "Ready"), "True")
      << "the kubelet's conditions stay (merge by type)";
  // Steady state: nothing written again.
  ASSERT_TRUE(env_.StoreSees("a", [](const kube::Json& n) {
    return kube::NodeConditionStatus(n, "NetworkUnavailable") == "False";
  }));
  ASSERT_TRUE(env_.StoreSees("c", [](const kube::Json& n) {
    return kube::NodeConditionStatus(n, "NetworkUnavailable") == "True";
  }));
  ASSERT_TRUE(env_.StoreSees("b", [](const kube::Json& n) {
    return kube::NodeConditionStatus(n, "NetworkUnavailable") == "False";
  }));
  const int patches = nsx_.Count("PATCH");
  r = controller_->Reconcile();
  EXPECT_EQ(r.created + r.deleted + r.conditions_written, 0);
  EXPECT_EQ(nsx_.Count("PATCH"), patches);
}

TEST_F(RouteControllerTest, StaleRoutesOfTheClusterRemovedOthersKept) {
  AddNode("a", {"10.244.1.0/24"}, {"10.0.0.11"});
  ASSERT_EQ(controller_->Reconcile().created, 1);
  nsx_.With([](ccm::testing::nsxt::PolicyStore& s) {
    s.Patch(std::string(kRoutes) + "gone-uid_10.244.9.0_24",
            cloud::StaticRouteBody("k8s", "gone", "10.244.9.0/24", "10.0.0.99"), 1);
    s.Patch(std::string(kRoutes) + "admin-route",
            cloud::StaticRouteBody("k8s", "x", "192.168.0.0/24", "10.0.0.1"), 1);
    s.Patch(std::string(kRoutes) + "other-cluster",
            cloud::StaticRouteBody("other", "gone", "10.244.8.0/24", "10.0.0.1"), 1);
  });
  RoutePassResult r = controller_->Reconcile();
  EXPECT_EQ(r.deleted, 1);
  EXPECT_TRUE(nsx_.Object(std::string(kRoutes) + "gone-uid_10.244.9.0_24").is_null());
  EXPECT_FALSE(nsx_.Object(std::string(kRoutes) + "admin-route").is_null())
      << "outside --cluster-cidr";
  EXPECT_FALSE(nsx_.Object(std::string(kRoutes) + "other-cluster").is_null());
  // The Node goes: its route follows.
  ASSERT_TRUE(env_.emulator.Delete("nodes", "", "a").ok());
  ASSERT_TRUE(Eventually([&] { return env_.nodes->Get("a") == nullptr; }));
  EXPECT_EQ(controller_->Reconcile().deleted, 1);
  EXPECT_EQ(nsx_.Paths(kRoutes).size(), 2u);
}

TEST_F(RouteControllerTest, NsxtFailuresDeleteNothingAndTellTheNode) {
  AddNode("a", {"10.244.1.0/24"}, {"10.0.0.11"});
  nsx_.With([](ccm::testing::nsxt::PolicyStore& s) {
    s.Patch(std::string(kRoutes) + "gone-uid_10.244.9.0_24",
            cloud::StaticRouteBody("k8s", "gone", "10.244.9.0/24", "10.0.0.99"), 1);
  });
  nsx_.Inject({.method = "GET", .path_contains = "/search/query", .status = 503});
  RoutePassResult r = controller_->Reconcile();
  EXPECT_TRUE(absl::IsUnavailable(r.listed)) << r.listed;
  EXPECT_EQ(r.created + r.deleted + r.conditions_written, 0);
  EXPECT_EQ(nsx_.Paths(kRoutes).size(), 1u) << "nothing deleted while NSX-T cannot be read";
  nsx_.Inject({.method = "PATCH", .status = 503});
  r = controller_->Reconcile();
  EXPECT_EQ(r.create_failed, 1);
  EXPECT_EQ(Condition("a", "status"), "True");
  auto events = env_.EventsFor("a");
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].reason, "FailedToCreateRoute");
  EXPECT_NE(events[0].message.find("Could not create route"), std::string::npos);
  EXPECT_NE(events[0].message.find("HTTP 503"), std::string::npos) << events[0].message;
  ASSERT_TRUE(env_.StoreSees("a", [](const kube::Json& n) {
    return kube::NodeConditionStatus(n, "NetworkUnavailable") == "True";
  }));
  r = controller_->Reconcile();  // NSX-T is back
  EXPECT_EQ(r.created, 1);
  EXPECT_EQ(Condition("a", "status"), "False");
}

TEST_F(RouteControllerTest, StartRunsAPassOnceTheNodesAreKnown) {
  AddNode("a", {"10.244.1.0/24"}, {"10.0.0.11"});
  controller_->Start();
  ASSERT_TRUE(controller_->WaitForPasses(1, absl::Seconds(30)));
  EXPECT_EQ(controller_->last().created, 1);
  controller_->Stop();
}

}  // namespace
}  // namespace ccm::controllers
