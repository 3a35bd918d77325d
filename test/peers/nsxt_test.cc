// The CPI's NSX-T controllers against the real kube-apiserver (issue 57's Kubernetes side):
// vsphere-cloud-controller-manager, as built, under the manifest's own ClusterRole and Role (a
// ServiceAccount's identity, not an admin's), with the route controller and the NSX-T load
// balancer on against the NSX-T fixture. What the real server must accept from it: the
// strategic-merge PATCH of nodes/status that sets NetworkUnavailable (the kubelet's conditions
// kept), the merge PATCH of a Service's finalizers with its resourceVersion, the merge PATCH of
// services/status, and the Events; a Service deleted while the finalizer holds it goes once its
// load balancer is gone.
#include <map>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "fixtures/nsxt/nsxt_fixture.h"
#include "gtest/gtest.h"
#include "integration/harness.h"
#include "peers/kube_cluster.h"
#include "peers/kubelet_node.h"
#include "peers/peers.h"

namespace ccm::peers {
namespace {
using integration::ChildProcess;
using integration::WaitFor;
using json = nlohmann::json;
using ::ccm::testing::nsxt::NsxtFixture;

constexpr char kUser[] = "ccm@vsphere.local";
constexpr char kPassword[] = "peers-nsxt-Hw4";
constexpr char kRoutes[] = "/infra/tier-1s/t1/static-routes/";
constexpr char kServiceAccount[] = "system:serviceaccount:kube-system:cloud-controller-manager";

std::string VcsimSpec() {
  json vms = json::array();
  for (int i = 1; i <= 2; ++i) {
    vms.push_back(
        {{"name", absl::StrCat("node-", i)},
         {"cluster", "c1"},
         {"nics", {{{"network", "VM Network"}, {"ips", {absl::StrCat("10.0.0.1", i)}}}}}});
  }
  json spec = {{"users", {{kUser, kPassword}}},
               {"datacenters",
                {{{"name", "dc1"}, {"clusters", {{{"name", "c1"}, {"hosts", 1}}}}, {"vms", vms}}}}};
  return spec.dump();
}

std::string Condition(const json& node, const std::string& type, const std::string& field) {
  for (const json& c : node["status"].value("conditions", json::array())) {
    if (c.value("type", "") == type) return c.value(field, "");
  }
  return "";
}

class NsxtPeersTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto cluster = KubeCluster::Start("nsxt");
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    cluster_ = *std::move(cluster);
    auto vcsim = ::ccm::testing::VcsimProcess::Start(VcsimSpec());
    ASSERT_TRUE(vcsim.ok()) << vcsim.status();
    vcsim_ = *std::move(vcsim);
    ASSERT_TRUE(nsx_.Start().ok());
    // The manifest's ServiceAccount, ClusterRole, Role and bindings, as a user applies them.
    for (const char* f : {"serviceaccount.yaml", "rbac.yaml"}) {
      auto out = cluster_->Kubectl(
          {"apply", "-f", absl::StrCat(SourceDir(), "/deploy/kustomize/base/", f)});
      ASSERT_TRUE(out.ok()) << out.status();
    }
    ASSERT_NO_FATAL_FAILURE(WriteConfig());
    ASSERT_TRUE(Secret("vsphere-cloud-secret",
                       {{"127.0.0.1.username", kUser}, {"127.0.0.1.password", kPassword}})
                    .ok());
    const ::ccm::testing::nsxt::NsxtFixtureOptions nsx;
    ASSERT_TRUE(Secret("nsxt-secret", {{"username", nsx.user}, {"password", nsx.password}}).ok());
  }
  void TearDown() override {
    if (ccm_) {
      ccm_->Signal(SIGTERM);
      ccm_->WaitExit(absl::Seconds(10));
    }
  }

  void WriteConfig() {
    const std::string dir = cluster_->dir();
    integration::WriteFile(dir + "/nsx-ca.pem", nsx_.ca_pem());
    const std::string hp = vcsim_->host_port();
    integration::WriteFile(
        dir + "/vsphere.conf",
        absl::StrCat("global:\n  port: ", hp.substr(hp.rfind(':') + 1),
                     "\n  caFile: ", vcsim_->info().ca_file,
                     "\n  secretName: vsphere-cloud-secret\n  secretNamespace: kube-system\n",
                     "vcenter:\n  vc-peers:\n    server: 127.0.0.1\n",
                     "nsxt:\n  host: ", nsx_.host_port(), "\n  caFile: ", dir, "/nsx-ca.pem\n",
                     "  secretName: nsxt-secret\n  secretNamespace: kube-system\n",
                     "route:\n  routerPath: /infra/tier-1s/t1\n",
                     "loadBalancer:\n  ipPoolName: lb-pool\n  size: SMALL\n",
                     "  tier1GatewayPath: /infra/tier-1s/t1\n",
                     "  tcpAppProfileName: default-tcp-lb-app-profile\n",
                     "  udpAppProfileName: default-udp-lb-app-profile\n"));
  }

  absl::Status Secret(const std::string& name, const std::map<std::string, std::string>& data) {
    json secret = {{"apiVersion", "v1"},
                   {"kind", "Secret"},
                   {"metadata", {{"name", name}, {"namespace", "kube-system"}}},
                   {"type", "Opaque"},
                   {"data", json::object()}};
    for (const auto& [k, v] : data) secret["data"][k] = absl::Base64Escape(v);
    return client().Create(kube::Secrets(), "kube-system", secret).status();
  }

  // The controller manager as the manifest's ServiceAccount, routes and the load balancer on.
  void StartCcm() {
    auto kc = cluster_->KubeconfigFor(
        kServiceAccount, {"system:serviceaccounts", "system:serviceaccounts:kube-system"});
    ASSERT_TRUE(kc.ok()) << kc.status();
    auto p = ChildProcess::Start(
        {"/usr/bin/env", "ENABLE_ALPHA_NSXT_LB=true", integration::CcmBinary(),
         "--cloud-provider=vsphere", "--cloud-config=" + cluster_->dir() + "/vsphere.conf",
         "--kubeconfig=" + *kc, "--leader-elect=false", "--allocate-node-cidrs=true",
         "--cluster-cidr=10.244.0.0/16", "--route-reconciliation-period=1s", "--cluster-name=k8s",
         "--bind-address=127.0.0.1", absl::StrCat("--secure-port=", integration::FreePort()),
         "-v=2"},
        cluster_->dir() + "/ccm");
    ASSERT_TRUE(p.ok()) << p.status();
    ccm_ = *std::move(p);
  }

  // A kubelet's Node with the pod CIDR node IPAM would give it.
  absl::StatusOr<std::string> Register(const std::string& name, const std::string& cidr) {
    std::string uuid;
    for (const auto& v : vcsim_->info().vms) {
      if (v.name == name) uuid = v.uuid;
    }
    json node = KubeletNode({.name = name, .bios_uuid = uuid});
    node["spec"]["podCIDR"] = cidr;
    node["spec"]["podCIDRs"] = {cidr};
    auto created = client().Create(kube::Nodes(), "", node);
    if (!created.ok()) return created.status();
    return (*created)["metadata"].value("uid", "");
  }

  json Get(const kube::Resource& r, const std::string& ns, const std::string& name) {
    auto o = client().Get(r, ns, name);
    return o.ok() ? *o : json();
  }
  bool HasEvent(const std::string& reason) {
    auto list = client().List(kube::CoreEvents(), "default", {});
    if (!list.ok()) return false;
    for (const json& e : list->items) {
      if (e.value("reason", "") == reason && e["involvedObject"].value("kind", "") == "Service") {
        return true;
      }
    }
    return false;
  }
  std::string Log() { return ccm_ ? ccm_->Stderr().substr(0, 6000) : ""; }
  kube::RestClient& client() { return cluster_->client(); }

  std::unique_ptr<KubeCluster> cluster_;
  std::unique_ptr<::ccm::testing::VcsimProcess> vcsim_;
  NsxtFixture nsx_;
  std::unique_ptr<ChildProcess> ccm_;
};

TEST_F(NsxtPeersTest, RoutesAndALoadBalancerAsTheRealServerKeepsThem) {
  auto uid1 = Register("node-1", "10.244.1.0/24");
  auto uid2 = Register("node-2", "10.244.2.0/24");
  ASSERT_TRUE(uid1.ok() && uid2.ok()) << uid1.status() << uid2.status();
  ASSERT_NO_FATAL_FAILURE(StartCcm());

  // Routes: one per pod CIDR, and the condition written through the real server's strategic
  // merge, the kubelet's Ready condition kept beside it.
  const std::string route1 = absl::StrCat(kRoutes, *uid1, "_10.244.1.0_24");
  const std::string route2 = absl::StrCat(kRoutes, *uid2, "_10.244.2.0_24");
  ASSERT_TRUE(WaitFor(
      [&] {
        return Condition(Get(kube::Nodes(), "", "node-1"), "NetworkUnavailable", "status") ==
                   "False" &&
               Condition(Get(kube::Nodes(), "", "node-2"), "NetworkUnavailable", "status") ==
                   "False";
      },
      absl::Seconds(60)))
      << Log();
  EXPECT_EQ(nsx_.Object(route1)["next_hops"][0]["ip_address"], "10.0.0.11");
  EXPECT_EQ(nsx_.Object(route2)["next_hops"][0]["ip_address"], "10.0.0.12");
  const json node1 = Get(kube::Nodes(), "", "node-1");
  EXPECT_EQ(Condition(node1, "NetworkUnavailable", "reason"), "RouteCreated");
  EXPECT_EQ(Condition(node1, "Ready", "status"), "True") << node1["status"].dump();

  // A Service of type LoadBalancer: the server gives it its node port, we its address.
  json service = {
      {"apiVersion", "v1"},
      {"kind", "Service"},
      {"metadata", {{"name", "web"}, {"namespace", "default"}}},
      {"spec",
       {{"type", "LoadBalancer"},
        {"selector", {{"app", "web"}}},
        {"ports", json::parse(R"([{"port":80,"targetPort":8080,"protocol":"TCP"}])")}}}};
  auto created = client().Create(kube::Services(), "default", service);
  ASSERT_TRUE(created.ok()) << created.status();
  const int node_port = (*created)["spec"]["ports"][0].value("nodePort", 0);
  ASSERT_GT(node_port, 0);
  json web;
  ASSERT_TRUE(WaitFor(
      [&] {
        web = Get(kube::Services(), "default", "web");
        const json::json_pointer at("/status/loadBalancer/ingress/0/ip");
        return web.contains(at) && web[at] == "10.1.0.10";
      },
      absl::Seconds(60)))
      << web.dump() << "\n"
      << Log();
  EXPECT_EQ(web["metadata"]["finalizers"],
            json::array({"service.kubernetes.io/load-balancer-cleanup"}));
  ASSERT_EQ(nsx_.Paths("/infra/lb-pools/").size(), 1u);
  const std::string pool = nsx_.Paths("/infra/lb-pools/")[0];
  ASSERT_TRUE(WaitFor([&] { return nsx_.Object(pool)["members"].size() == 2; }, absl::Seconds(60)))
      << nsx_.Object(pool).dump();
  // The node port the real server chose is where the virtual server sends the traffic.
  const std::string server = nsx_.Paths("/infra/lb-virtual-servers/")[0];
  EXPECT_EQ(nsx_.Object(server)["default_pool_member_ports"],
            json::array({std::to_string(node_port)}));
  EXPECT_TRUE(WaitFor([&] { return HasEvent("EnsuredLoadBalancer"); }, absl::Seconds(30)));

  // A Node goes: its route and its pool member go.
  ASSERT_TRUE(client().Delete(kube::Nodes(), "", "node-2", {}).ok());
  EXPECT_TRUE(WaitFor(
      [&] { return nsx_.Object(route2).is_null() && nsx_.Object(pool)["members"].size() == 1; },
      absl::Seconds(60)))
      << Log();
  EXPECT_FALSE(nsx_.Object(route1).is_null());

  // The Service is deleted: the finalizer holds it until the load balancer is gone.
  ASSERT_TRUE(client().Delete(kube::Services(), "default", "web", {}).ok());
  ASSERT_TRUE(WaitFor(
      [&] {
        return kube::IsNotFoundError(client().Get(kube::Services(), "default", "web").status());
      },
      absl::Seconds(60)))
      << Get(kube::Services(), "default", "web").dump() << "\n"
      << Log();
  EXPECT_TRUE(nsx_.Paths("/infra/lb-virtual-servers/").empty());
  EXPECT_TRUE(nsx_.Paths("/infra/lb-services/").empty());
  EXPECT_TRUE(nsx_.Paths("/infra/ip-pools/pool-1/ip-allocations/").empty());
  EXPECT_TRUE(WaitFor([&] { return HasEvent("DeletedLoadBalancer"); }, absl::Seconds(30)));
  // Nothing the server refused: no write of ours was forbidden or invalid.
  EXPECT_FALSE(absl::StrContains(ccm_->Stderr(), "forbidden")) << Log();
  EXPECT_FALSE(absl::StrContains(ccm_->Stderr(), "Invalid")) << Log();
}

}  // namespace
}  // namespace ccm::peers

int main(int argc, char** argv) {
  return ccm::peers::Main(argc, argv, "peers_nsxt_test", {"etcd", "kube-apiserver"});
}
