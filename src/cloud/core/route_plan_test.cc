#include "cloud/core/route_plan.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace ccm::cloud {
namespace {

std::vector<IpNet> Cidrs(std::initializer_list<const char*> list) {
  std::vector<IpNet> out;
  for (const char* c : list) out.push_back(*IpNet::Parse(c));
  return out;
}

std::string Describe(const RoutePlan& p, const std::vector<RouteNode>& nodes) {
  std::string s;
  for (const auto& c : p.create) s += "+" + nodes[c.node].name + "=" + c.cidr + " ";
  for (const auto& r : p.remove) s += "-" + r.name + " ";
  return s;
}

TEST(RoutePlanTest, CreatesWhatIsMissingAndRemovesOnlyOurStaleRoutes) {
  struct Case {
    const char* name;
    std::vector<RouteNode> nodes;
    std::vector<Route> routes;
    std::vector<IpNet> cluster;
    std::string want;
  } cases[] = {
      {"nothing yet",
       {{"a", "u1", {"10.244.0.0/24"}}},
       {},
       Cidrs({"10.244.0.0/16"}),
       "+a=10.244.0.0/24 "},
      {"already there",
       {{"a", "u1", {"10.244.0.0/24"}}},
       {{"r1", "a", "10.244.0.0/24"}},
       Cidrs({"10.244.0.0/16"}),
       ""},
      {"no pod CIDR yet: nothing to create", {{"a", "u1", {}}}, {}, Cidrs({"10.244.0.0/16"}), ""},
      {"dual stack: one route per CIDR",
       {{"a", "u1", {"10.244.1.0/24", "fd00:1::/64"}}},
       {{"r1", "a", "10.244.1.0/24"}},
       Cidrs({"10.244.0.0/16", "fd00::/48"}),
       "+a=fd00:1::/64 "},
      {"Node gone: its route removed",
       {},
       {{"r1", "gone", "10.244.3.0/24"}},
       Cidrs({"10.244.0.0/16"}),
       "-r1 "},
      {"pod CIDR changed: old removed, new created",
       {{"a", "u1", {"10.244.5.0/24"}}},
       {{"r1", "a", "10.244.4.0/24"}},
       Cidrs({"10.244.0.0/16"}),
       "+a=10.244.5.0/24 -r1 "},
      {"outside the cluster CIDR: someone else's, kept",
       {},
       {{"r1", "x", "192.168.0.0/24"}},
       Cidrs({"10.244.0.0/16"}),
       ""},
      {"its last address in the cluster CIDR: ours",
       {},
       {{"r1", "x", "10.0.0.0/8"}},
       Cidrs({"10.255.0.0/16"}),
       "-r1 "},
      {"blackhole of a current Node: removed",
       {{"a", "u1", {"10.244.0.0/24"}}},
       {{"r1", "a", "10.244.0.0/24", true}},
       Cidrs({"10.244.0.0/16"}),
       "-r1 "},
      {"no cluster CIDR: delete nothing", {}, {{"r1", "gone", "10.244.3.0/24"}}, {}, ""},
      {"unparsable route CIDR: not ours",
       {},
       {{"r1", "gone", "nonsense"}},
       Cidrs({"10.244.0.0/16"}),
       ""},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(Describe(PlanRoutes(c.nodes, c.routes, c.cluster), c.nodes), c.want) << c.name;
  }
}

TEST(RoutePlanTest, NextHopPrefersInternalIpOfTheCidrsFamily) {
  struct Case {
    NodeAddressList addresses;
    const char* cidr;
    const char* want;  // "" = error
    const char* error = "";
  } cases[] = {
      {{{"Hostname", "a"}, {"ExternalIP", "1.2.3.4"}, {"InternalIP", "10.0.0.5"}},
       "10.244.0.0/24",
       "10.0.0.5"},
      {{{"ExternalIP", "1.2.3.4"}}, "10.244.0.0/24", "1.2.3.4"},
      {{{"InternalIP", "10.0.0.5"}, {"InternalIP", "fd00::5"}}, "fd00:1::/64", "fd00::5"},
      {{{"InternalIP", "10.0.0.5"}}, "fd00:1::/64", "", "has no ipv6 address"},
      {{{"Hostname", "a"}}, "10.244.0.0/24", "", "neither InternalIP nor ExternalIP"},
      {{{"InternalIP", "10.0.0.5"}}, "bad", "", "is not a CIDR"},
  };
  for (const auto& c : cases) {
    auto hop = RouteNextHop("a", c.addresses, c.cidr);
    if (*c.want) {
      ASSERT_TRUE(hop.ok()) << c.cidr << ": " << hop.status();
      EXPECT_EQ(*hop, c.want);
    } else {
      ASSERT_FALSE(hop.ok()) << c.cidr;
      EXPECT_NE(hop.status().message().find(c.error), std::string::npos) << hop.status();
    }
  }
}

TEST(RoutePlanTest, NetworkConditionWrittenOnlyWhenItChanges) {
  struct Case {
    std::vector<std::string> cidrs;
    std::string current;
    bool created;
    std::optional<std::string> want;
  } cases[] = {
      {{"10.244.0.0/24"}, "", true, "False"},
      {{"10.244.0.0/24"}, "True", true, "False"},
      {{"10.244.0.0/24"}, "False", true, {}},
      {{"10.244.0.0/24"}, "False", false, "True"},
      {{"10.244.0.0/24"}, "True", false, {}},
      {{}, "", true, "True"},
      {{}, "True", true, {}},
  };
  for (const auto& c : cases) {
    RouteNode n{"a", "u", c.cidrs, {}, c.current};
    EXPECT_EQ(NetworkConditionUpdate(n, c.created), c.want) << c.current << " " << c.created;
  }
}

TEST(RoutePlanTest, ClusterCidrFlag) {
  EXPECT_EQ(ParseClusterCidrs("10.244.0.0/16")->size(), 1u);
  EXPECT_EQ(ParseClusterCidrs("10.244.0.0/16, fd00::/48")->size(), 2u);
  EXPECT_TRUE(ParseClusterCidrs("")->empty());
  EXPECT_NE(ParseClusterCidrs("10.244.0.0").status().message().find("\"10.244.0.0\" is not a CIDR"),
            std::string::npos);
  EXPECT_FALSE(ParseClusterCidrs("10.0.0.0/8,10.1.0.0/16").ok());
  EXPECT_FALSE(ParseClusterCidrs("10.0.0.0/8,fd00::/48,fd01::/48").ok());
}

}  // namespace
}  // namespace ccm::cloud
