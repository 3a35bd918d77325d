// The service controller against the API emulator and the NSX-T fixture, through
// NsxtLoadBalancer: a Service of type LoadBalancer gets its finalizer, its NSX-T objects and its
// address; the backends follow the Nodes; deleting the Service (or changing its type) removes
// the load balancer before the finalizer goes; failures are Events and retries, never deletions;
// orphans of Services deleted while it was down are removed at start.
#include "controllers/service_controller.h"

#include <gtest/gtest.h>

#include "cloud/nsxt/nsxt_load_balancer.h"
#include "fixtures/nsxt/client_options.h"
#include "fixtures/nsxt/nsxt_fixture.h"
#include "integration/controllers/controllers_test_env.h"
#include "kube/resource.h"

namespace ccm::controllers {
namespace {

using ::ccm::testing::Eventually;
using ccm::testing::nsxt::NsxtFixture;
using testing::Env;

kube::Json LbService(const std::string& name, const std::string& cls = "") {
  kube::Json s = {
      {"apiVersion", "v1"},
      {"kind", "Service"},
      {"metadata", {{"name", name}, {"namespace", "default"}}},
      {"spec",
       {{"type", "LoadBalancer"},
        {"ports", kube::Json::parse(R"([{"port":80,"nodePort":30080,"protocol":"TCP"}])")}}}};
  if (!cls.empty()) s["metadata"]["annotations"] = {{"loadbalancer.vmware.io/class", cls}};
  return s;
}

class ServiceControllerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(env_.Init().ok());
    ASSERT_TRUE(nsx_.Start().ok());
    client_ = std::make_unique<nsxt::PolicyClient>(ccm::testing::nsxt::ClientOptions(nsx_));
    cloud::NsxtLoadBalancerOptions lo;
    lo.config.defaults.ip_pool_name = "lb-pool";
    lo.config.tier1_gateway_path = "/infra/tier-1s/t1";
    lo.realized_poll = absl::Milliseconds(10);
    lb_ = std::make_unique<cloud::NsxtLoadBalancer>(*client_, lo);
    ASSERT_TRUE(lb_->Setup().ok());
    services_ =
        std::make_unique<kube::Informer>(*env_.client, kube::Services(), kube::InformerOptions{});
    AddNode("a", "10.0.0.11");
    AddNode("b", "10.0.0.12");
  }
  void TearDown() override {
    if (controller_) controller_->Stop();
    services_->Stop();
  }
  void StartController() {
    ServiceControllerOptions so;
    so.cluster_name = "k8s";
    so.retry_base = absl::Milliseconds(20);
    so.retry_max = absl::Milliseconds(200);
    so.cleanup = [this](const std::set<std::string>& wanted) {
      return lb_->CleanupOrphans("k8s", wanted);
    };
    controller_ = std::make_unique<ServiceController>(*env_.client, *services_, *env_.nodes, *lb_,
                                                      env_.recorder.get(), so);
    services_->Start();
    controller_->Start();
  }
  void AddNode(const std::string& name, const std::string& ip) {
    env_.CreateKubeletNode(name, true);
    env_.EditNode(name, [&](kube::Json& n) {
      n["status"]["addresses"] = {{{"type", "InternalIP"}, {"address", ip}}};
    });
    ASSERT_TRUE(env_.StoreSees(
        name, [](const kube::Json& n) { return n["status"].contains("addresses"); }));
  }
  kube::Json GetService(const std::string& name) {
    auto s = env_.emulator.Get("services", "default", name);
    return s.ok() ? *s : kube::Json();
  }
  std::string Ingress(const std::string& name) {
    const kube::Json s = GetService(name);
    const kube::Json::json_pointer at("/status/loadBalancer/ingress/0/ip");
    return s.is_object() && s.contains(at) ? s[at].get<std::string>() : "";
  }
  bool HasEvent(const std::string& reason, const std::string& says = "") {
    env_.recorder->Flush();
    for (const kube::Json& e : env_.emulator.List("events")) {
      kube::EventInfo i = kube::GetEventInfo(e);
      if (i.reason == reason && i.message.find(says) != std::string::npos) return true;
    }
    return false;
  }
  size_t Servers() { return nsx_.Paths("/infra/lb-virtual-servers/").size(); }

  Env env_;
  NsxtFixture nsx_;
  std::unique_ptr<nsxt::PolicyClient> client_;
  std::unique_ptr<cloud::NsxtLoadBalancer> lb_;
  std::unique_ptr<kube::Informer> services_;
  std::unique_ptr<ServiceController> controller_;
};

TEST_F(ServiceControllerTest, AServiceGetsItsAddressAndLosesItCleanly) {
  StartController();
  ASSERT_TRUE(env_.emulator.Create("services", LbService("web")).ok());
  ASSERT_TRUE(Eventually([&] { return Ingress("web") == "10.1.0.10"; })) << GetService("web");
  EXPECT_EQ(GetService("web")["metadata"]["finalizers"],
            kube::Json::array({kLoadBalancerCleanupFinalizer}));
  // The Event is written after the status: wait for it, do not expect it with the address.
  EXPECT_TRUE(Eventually([&] { return HasEvent("EnsuredLoadBalancer"); }));
  const std::string pool = nsx_.Paths("/infra/lb-pools/")[0];
  EXPECT_EQ(nsx_.Object(pool)["members"].size(), 2u);
  // A Node goes: the backends follow.
  ASSERT_TRUE(env_.emulator.Delete("nodes", "", "b").ok());
  ASSERT_TRUE(Eventually([&] { return nsx_.Object(pool)["members"].size() == 1u; }));
  // The Service is deleted: the load balancer goes first, then the finalizer, then the Service.
  ASSERT_TRUE(env_.client->Delete(kube::Services(), "default", "web", {}).ok());  // finalizers hold
  ASSERT_TRUE(Eventually([&] { return GetService("web").is_null(); }));
  EXPECT_EQ(Servers(), 0u);
  EXPECT_TRUE(nsx_.Paths("/infra/ip-pools/pool-1/ip-allocations/").empty());
  EXPECT_TRUE(Eventually([&] { return HasEvent("DeletedLoadBalancer"); }));
}

TEST_F(ServiceControllerTest, TypeChangeFailuresAndUnknownClasses) {
  StartController();
  nsx_.Inject(
      {.method = "PUT", .path_contains = "/lb-virtual-servers/", .status = 503, .count = 2});
  ASSERT_TRUE(env_.emulator.Create("services", LbService("web")).ok());
  ASSERT_TRUE(Eventually([&] { return Ingress("web") == "10.1.0.10"; })) << "retried";
  EXPECT_TRUE(HasEvent("SyncLoadBalancerFailed", "failed to ensure load balancer"));
  ASSERT_TRUE(env_.emulator.Create("services", LbService("gold", "gold")).ok());
  ASSERT_TRUE(Eventually([&] { return HasEvent("SyncLoadBalancerFailed", "class gold"); }));
  // ClusterIP now: the load balancer and the address go, the Service stays.
  kube::Json web = GetService("web");
  web["spec"]["type"] = "ClusterIP";
  web["spec"].erase("ports");
  web["spec"]["ports"] = kube::Json::parse(R"([{"port":80,"protocol":"TCP"}])");
  ASSERT_TRUE(env_.emulator.Put("services", web).ok());
  ASSERT_TRUE(Eventually([&] {
    kube::Json s = GetService("web");
    return !s.is_null() && !s["metadata"].contains("finalizers") && Ingress("web").empty();
  })) << GetService("web");
  EXPECT_EQ(Servers(), 0u);
}

TEST_F(ServiceControllerTest, OrphansAreRemovedAtStart) {
  kube::Json orphan = LbService("gone");
  ASSERT_TRUE(lb_->EnsureLoadBalancer("k8s", orphan, {}).ok());
  ASSERT_EQ(Servers(), 1u);
  StartController();
  ASSERT_TRUE(Eventually([&] {
    return Servers() == 0u && nsx_.Paths("/infra/ip-pools/pool-1/ip-allocations/").empty();
  }));
}

}  // namespace
}  // namespace ccm::controllers
