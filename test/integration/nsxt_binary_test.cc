// The real binary's NSX-T controllers against the NSX-T fixture (issue 57). Routes: with
// --allocate-node-cidrs and [NSXT] + [Route] in the config, each Node's pod CIDR gets a static
// route on the Tier-1 to the address the node controller set, the Node's NetworkUnavailable
// condition goes False, NSX-T's user and password come from a Secret (and follow it when it
// changes), the password never shows in any output, and a deleted Node's route goes too. Load
// balancer: with ENABLE_ALPHA_NSXT_LB and [LoadBalancer], a Service of type LoadBalancer gets its
// address from the pool, and loses its load balancer and finalizer when it becomes ClusterIP.
#include <gtest/gtest.h>

#include <fstream>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "fixtures/nsxt/nsxt_fixture.h"
#include "integration/harness.h"

namespace ccm::integration {
namespace {

using testing::nsxt::NsxtFixture;

constexpr char kNsxPassword[] = "nsx-Rotated-never-log-4e1";

absl::Status PutNsxSecret(Cluster& cl, const std::string& password) {
  nlohmann::json secret = {
      {"apiVersion", "v1"},
      {"kind", "Secret"},
      {"metadata", {{"name", "nsxt-secret"}, {"namespace", "kube-system"}}},
      {"type", "Opaque"},
      {"data",
       {{"username", absl::Base64Escape("admin")}, {"password", absl::Base64Escape(password)}}}};
  return cl.emu().Put("secrets", secret).status();
}

std::string NetworkUnavailable(Cluster& cl, const std::string& node) {
  auto n = cl.emu().Get("nodes", "", node);
  if (!n.ok()) return "";
  for (const auto& c : (*n)["status"].value("conditions", nlohmann::json::array())) {
    if (c.value("type", "") == "NetworkUnavailable") return c.value("status", "");
  }
  return "";
}

// Starts the fixture, gives the config its [NSXT] section (credentials from the Secret
// nsxt-secret, created here) and `sections`.
void AddNsxt(Cluster& cl, NsxtFixture& nsx, const std::string& sections) {
  ASSERT_TRUE(nsx.Start().ok());
  const std::string ca = cl.dir() + "/nsx-ca.pem";
  WriteFile(ca, nsx.ca_pem());
  std::ifstream in(cl.config_path());
  std::string config((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  WriteFile(
      cl.config_path(),
      absl::StrCat(config, "nsxt:\n  host: ", nsx.host_port(), "\n  caFile: ", ca,
                   "\n  secretName: nsxt-secret\n  secretNamespace: kube-system\n", sections));
  ASSERT_TRUE(PutNsxSecret(cl, testing::nsxt::NsxtFixtureOptions{}.password).ok());
}

TEST(NsxtBinaryTest, StaticRoutesForPodCidrsThroughTheBinary) {
  auto c = Cluster::Start("routes");
  ASSERT_TRUE(c.ok()) << c.status();
  Cluster& cl = **c;
  NsxtFixture nsx;
  ASSERT_NO_FATAL_FAILURE(AddNsxt(cl, nsx, "route:\n  routerPath: /infra/tier-1s/t1\n"));
  ASSERT_TRUE(cl.RegisterNode("node-1").ok());
  auto node = cl.emu().Get("nodes", "", "node-1");
  ASSERT_TRUE(node.ok());
  (*node)["spec"]["podCIDR"] = "10.244.1.0/24";
  (*node)["spec"]["podCIDRs"] = {"10.244.1.0/24"};
  ASSERT_TRUE(cl.emu().Put("nodes", *node).ok());
  const std::string uid = (*node)["metadata"]["uid"];
  const std::string route = "/infra/tier-1s/t1/static-routes/" + uid + "_10.244.1.0_24";

  int port = 0;
  auto p = cl.StartCcm("ccm", &port,
                       {"--allocate-node-cidrs=true", "--cluster-cidr=10.244.0.0/16",
                        "--route-reconciliation-period=1s", "--cluster-name=k8s"});
  ASSERT_TRUE(p.ok()) << p.status();
  ChildProcess& ccm = **p;
  // The route needs the Node's address, which the node controller sets from the VM.
  ASSERT_TRUE(WaitFor([&] { return !nsx.Object(route).is_null(); }, absl::Seconds(60)))
      << ccm.Stderr();
  EXPECT_EQ(nsx.Object(route)["tags"][0]["tag"], "k8s");
  EXPECT_FALSE(nsx.Object(route)["next_hops"][0].value("ip_address", "").empty());
  ASSERT_TRUE(
      WaitFor([&] { return NetworkUnavailable(cl, "node-1") == "False"; }, absl::Seconds(30)))
      << ccm.Stderr();

  // NSX-T's password changes, then the Secret follows: the next pass works with it.
  nsx.SetCredentials("admin", kNsxPassword);
  ASSERT_TRUE(PutNsxSecret(cl, kNsxPassword).ok());
  ASSERT_TRUE(cl.emu().Delete("nodes", "", "node-1").ok());
  ASSERT_TRUE(WaitFor([&] { return nsx.Object(route).is_null(); }, absl::Seconds(30)))
      << ccm.Stderr();
  ccm.Signal(SIGTERM);
  ASSERT_TRUE(ccm.WaitExit(absl::Seconds(20)).has_value());
  for (const std::string& out : {ccm.Stdout(), ccm.Stderr()}) {
    EXPECT_FALSE(absl::StrContains(out, kNsxPassword));
    EXPECT_FALSE(absl::StrContains(out, testing::nsxt::NsxtFixtureOptions{}.password));
  }
  EXPECT_TRUE(absl::StrContains(ccm.Stderr(), "route controller: static routes of cluster k8s"))
      << ccm.Stderr();
}

TEST(NsxtBinaryTest, AServiceOfTypeLoadBalancerGetsItsAddress) {
  auto c = Cluster::Start("nsxt-lb");
  ASSERT_TRUE(c.ok()) << c.status();
  Cluster& cl = **c;
  NsxtFixture nsx;
  ASSERT_NO_FATAL_FAILURE(
      AddNsxt(cl, nsx,
              absl::StrCat("loadBalancer:\n  ipPoolName: lb-pool\n  size: SMALL\n",
                           "  tier1GatewayPath: /infra/tier-1s/t1\n",
                           "  tcpAppProfileName: default-tcp-lb-app-profile\n",
                           "  udpAppProfileName: default-udp-lb-app-profile\n")));
  ASSERT_TRUE(cl.RegisterNode("node-1").ok());
  nlohmann::json service = {
      {"apiVersion", "v1"},
      {"kind", "Service"},
      {"metadata", {{"name", "web"}, {"namespace", "default"}}},
      {"spec",
       {{"type", "LoadBalancer"},
        {"ports", nlohmann::json::parse(R"([{"port":80,"nodePort":30080,"protocol":"TCP"}])")}}}};
  ASSERT_TRUE(cl.emu().Create("services", service).ok());
  setenv("ENABLE_ALPHA_NSXT_LB", "true", 1);
  int port = 0;
  auto p = cl.StartCcm("ccm", &port, {"--cluster-name=k8s"});
  unsetenv("ENABLE_ALPHA_NSXT_LB");
  ASSERT_TRUE(p.ok()) << p.status();
  ChildProcess& ccm = **p;
  auto ingress = [&] {
    auto s = cl.emu().Get("services", "default", "web");
    const nlohmann::json::json_pointer at("/status/loadBalancer/ingress/0/ip");
    return s.ok() && s->contains(at) ? (*s)[at].get<std::string>() : std::string();
  };
  ASSERT_TRUE(WaitFor([&] { return ingress() == "10.1.0.10"; }, absl::Seconds(60))) << ccm.Stderr();
  ASSERT_EQ(nsx.Paths("/infra/lb-virtual-servers/").size(), 1u);
  // The pool gets the Node once the node controller has set its address.
  ASSERT_TRUE(WaitFor(
      [&] {
        auto pools = nsx.Paths("/infra/lb-pools/");
        return pools.size() == 1 && nsx.Object(pools[0])["members"].size() == 1;
      },
      absl::Seconds(150)))
      << ccm.Stderr();
  auto s = cl.emu().Get("services", "default", "web");
  ASSERT_TRUE(s.ok());
  (*s)["spec"]["type"] = "ClusterIP";
  (*s)["spec"]["ports"] = nlohmann::json::parse(R"([{"port":80,"protocol":"TCP"}])");
  ASSERT_TRUE(cl.emu().Put("services", *s).ok());
  ASSERT_TRUE(WaitFor(
      [&] {
        auto now = cl.emu().Get("services", "default", "web");
        return now.ok() && !(*now)["metadata"].contains("finalizers") && ingress().empty();
      },
      absl::Seconds(30)))
      << ccm.Stderr();
  EXPECT_TRUE(nsx.Paths("/infra/lb-virtual-servers/").empty());
  EXPECT_TRUE(nsx.Paths("/infra/lb-services/").empty());
  EXPECT_TRUE(absl::StrContains(ccm.Stderr(), "NSX-T load balancer support enabled"));
}

}  // namespace
}  // namespace ccm::integration
