#include "cloud/nsxt/lb_objects.h"

#include <gtest/gtest.h>

namespace ccm::cloud::lb {
namespace {

Json Service(const std::string& annotation, Json ports) {
  Json s = {{"metadata", {{"namespace", "ns"}, {"name", "web"}}}, {"spec", {{"ports", ports}}}};
  if (!annotation.empty()) s["metadata"]["annotations"] = {{kClassAnnotation, annotation}};
  return s;
}

Json Node(const std::string& name, Json addresses) {
  return {{"metadata", {{"name", name}}}, {"status", {{"addresses", addresses}}}};
}

TEST(LbObjectsTest, NamesAndTagsAsTheGoProvider) {
  const PortMapping m{80, 30080, "TCP"};
  EXPECT_EQ(PortTag(m), "TCP/80");
  EXPECT_EQ(LbServiceName("k8s"), "cluster:k8s");
  EXPECT_EQ(ObjectName("k8s", ServiceKey("ns", "web")), "cluster:k8s:ns/web");
  EXPECT_EQ(MonitorName("k8s", "ns/web", m), "cluster:k8s:ns/web:30080");
  Tags std = StandardTags({{"team", "a"}});
  Json vs =
      VirtualServerBody("k8s", "ns/web", {"gold", "pool-1"}, "10.1.0.5", m, "/infra/lb-services/s",
                        "/infra/lb-app-profiles/tcp", "/infra/lb-pools/p", std);
  EXPECT_EQ(vs["tags"], Json::parse(R"([{"scope":"cluster","tag":"k8s"},
      {"scope":"ippoolid","tag":"pool-1"},{"scope":"lbclass","tag":"gold"},
      {"scope":"owner","tag":"vsphere-cloud-controller-manager"},{"scope":"port","tag":"TCP/80"},
      {"scope":"service","tag":"ns/web"},{"scope":"team","tag":"a"}])"))
      << "sorted by scope";
  EXPECT_EQ(vs["ports"], Json::array({"80"}));
  EXPECT_EQ(vs["default_pool_member_ports"], Json::array({"30080"}));
  EXPECT_TRUE(MatchesVirtualServer(vs, m));
  EXPECT_FALSE(MatchesVirtualServer(vs, {443, 30080, "TCP"}));
  EXPECT_FALSE(MatchesVirtualServer(vs, {80, 30080, "UDP"}));
  EXPECT_TRUE(HasTags(vs, {{kScopeCluster, "k8s"}, {kScopeService, "ns/web"}}));
  EXPECT_FALSE(HasTags(vs, {{kScopeCluster, "other"}}));
  EXPECT_FALSE(HasTags(vs, {{"missing", "x"}}));
  EXPECT_EQ(TagOf(vs, kScopeLbClass), "gold");
  EXPECT_EQ(StandardTags({{"owner", "mine"}}).at("owner"), "mine") << "[LoadBalancer] tags win";
  Json monitor = TcpMonitorBody("k8s", "ns/web", m, std);
  EXPECT_EQ(monitor["monitor_port"], 30080);
  EXPECT_EQ(monitor["resource_type"], "LBTcpMonitorProfile");
  EXPECT_TRUE(MatchesByPort(monitor, m));
  Json svc = LbServiceBody("k8s", "", "/infra/tier-1s/t1", std);
  EXPECT_EQ(svc["size"], "SMALL");
  EXPECT_EQ(svc["connectivity_path"], "/infra/tier-1s/t1");
  EXPECT_EQ(PoolBody("k8s", "ns/web", m, Json::array(), Json::array(), std)["snat_translation"],
            Json::parse(R"({"type":"LBSnatAutoMap"})"));
  EXPECT_EQ(
      PoolBody("k8s", "ns/web", m, Json::array(), Json::array(), std, true)["snat_translation"],
      Json::parse(R"({"type":"LBSnatDisabled"})"))
      << "[LoadBalancer] snat-disabled";
}

TEST(LbObjectsTest, PortMappings) {
  auto m = Mappings(Service("", Json::parse(R"([{"port":80,"nodePort":30080,"protocol":"TCP"},
                                               {"port":53,"nodePort":30053,"protocol":"UDP"},
                                               {"port":8080,"nodePort":30081}])")));
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(
      *m, (std::vector<PortMapping>{{80, 30080, "TCP"}, {53, 30053, "UDP"}, {8080, 30081, "TCP"}}));
  auto bad = Mappings(Service("", Json::parse(R"([{"port":9,"nodePort":1,"protocol":"SCTP"}])")));
  EXPECT_NE(bad.status().message().find("port 9/SCTP: only TCP and UDP"), std::string::npos);
}

TEST(LbObjectsTest, PoolMembersFollowTheNodes) {
  struct Case {
    const char* name;
    Json current;
    std::map<std::string, std::string> nodes;
    std::vector<std::string> want_ips;
    bool changed;
  } cases[] = {
      {"empty pool", Json::array(), {{"10.0.0.1", "a"}}, {"10.0.0.1"}, true},
      {"unchanged",
       Json::parse(R"([{"ip_address":"10.0.0.1","admin_state":"DISABLED"}])"),
       {{"10.0.0.1", "a"}},
       {"10.0.0.1"},
       false},
      {"a Node gone",
       Json::parse(R"([{"ip_address":"10.0.0.1"},{"ip_address":"10.0.0.2"}])"),
       {{"10.0.0.2", "b"}},
       {"10.0.0.2"},
       true},
      {"a Node added",
       Json::parse(R"([{"ip_address":"10.0.0.1"}])"),
       {{"10.0.0.1", "a"}, {"10.0.0.3", "c"}},
       {"10.0.0.1", "10.0.0.3"},
       true},
      {"a duplicate member dropped",
       Json::parse(R"([{"ip_address":"10.0.0.1"},{"ip_address":"10.0.0.1"}])"),
       {{"10.0.0.1", "a"}},
       {"10.0.0.1"},
       true},
      {"no Nodes", Json::parse(R"([{"ip_address":"10.0.0.1"}])"), {}, {}, true},
  };
  for (const auto& c : cases) {
    bool changed = false;
    Json got = PoolMembers(c.current, c.nodes, "k8s", &changed);
    std::vector<std::string> ips;
    for (const auto& m : got) ips.push_back(m["ip_address"]);
    EXPECT_EQ(ips, c.want_ips) << c.name;
    EXPECT_EQ(changed, c.changed) << c.name;
  }
  bool changed = false;
  Json added = PoolMembers(Json::array(), {{"10.0.0.9", "n9"}}, "k8s", &changed);
  EXPECT_EQ(added[0], Json::parse(R"({"admin_state":"ENABLED","display_name":"k8s:n9",
                                      "ip_address":"10.0.0.9"})"));
  EXPECT_EQ(added.size(), 1u);
  EXPECT_EQ(NodeInternalIps({Node("a", Json::parse(R"([{"type":"ExternalIP","address":"1.1.1.1"},
      {"type":"InternalIP","address":"10.0.0.1"},{"type":"InternalIP","address":"10.0.0.2"}])")),
                             Node("b", Json::array())}),
            (std::map<std::string, std::string>{{"10.0.0.1", "a"}}))
      << "the first InternalIP of each Node";
}

TEST(LbObjectsTest, ClassesMergeAndAreChosenByAnnotation) {
  LoadBalancerConfig cfg;
  cfg.defaults.ip_pool_name = "pool-default";
  cfg.defaults.tcp_app_profile_name = "default-tcp-lb-app-profile";
  cfg.classes["gold"].ip_pool_id = "pool-gold";
  cfg.classes["default"].udp_app_profile_path = "/infra/lb-app-profiles/udp";
  auto classes = Classes(cfg);
  ASSERT_EQ(classes.size(), 2u);
  EXPECT_EQ(classes["gold"].ip_pool_id, "pool-gold");
  EXPECT_EQ(classes["gold"].ip_pool_name, "") << "an ID replaces the default's name";
  EXPECT_EQ(classes["gold"].tcp_profile_name, "default-tcp-lb-app-profile");
  EXPECT_EQ(classes["gold"].udp_profile_path, "/infra/lb-app-profiles/udp")
      << "[LoadBalancerClass \"default\"] changes the default class";
  EXPECT_EQ(ClassOf(Service("", Json::array()), classes)->name, "default");
  EXPECT_EQ(ClassOf(Service(" gold ", Json::array()), classes)->name, "gold");
  auto missing = ClassOf(Service("silver", Json::array()), classes);
  ASSERT_TRUE(absl::IsNotFound(missing.status()));
  EXPECT_NE(missing.status().message().find("invalid load balancer class silver"),
            std::string::npos);
}

}  // namespace
}  // namespace ccm::cloud::lb
