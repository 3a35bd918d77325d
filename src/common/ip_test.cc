#include "common/ip.h"

#include "gtest/gtest.h"

namespace ccm {
namespace {

TEST(IpAddressTest, ParseAndClassify) {
  struct Case {
    const char* text;
    bool ok;
    IpFamily family;
    bool unspecified, loopback, link_local, multicast;
    const char* canonical;
  } cases[] = {
      {"10.1.2.3", true, IpFamily::kIPv4, false, false, false, false, "10.1.2.3"},
      {"0.0.0.0", true, IpFamily::kIPv4, true, false, false, false, "0.0.0.0"},
      {"127.0.0.5", true, IpFamily::kIPv4, false, true, false, false, "127.0.0.5"},
      {"169.254.1.1", true, IpFamily::kIPv4, false, false, true, false, "169.254.1.1"},
      {"224.0.0.1", true, IpFamily::kIPv4, false, false, false, true, "224.0.0.1"},
      {"::", true, IpFamily::kIPv6, true, false, false, false, "::"},
      {"::1", true, IpFamily::kIPv6, false, true, false, false, "::1"},
      {"fe80::1%eth0", true, IpFamily::kIPv6, false, false, true, false, "fe80::1"},
      {"ff02::1", true, IpFamily::kIPv6, false, false, false, true, "ff02::1"},
      {"FD00:0:0::0A", true, IpFamily::kIPv6, false, false, false, false, "fd00::a"},
      {"1.2.3", false},
      {"", false},
      {"10.0.0.256", false},
      {"zz::1", false},
      {"1.2.3.4/8", false},
  };
  for (const auto& c : cases) {
    auto a = IpAddress::Parse(c.text);
    ASSERT_EQ(a.ok(), c.ok) << c.text;
    if (!c.ok) {
      EXPECT_NE(a.status().message().find("is not an IP address"), std::string::npos);
      continue;
    }
    EXPECT_EQ(a->family(), c.family) << c.text;
    EXPECT_EQ(a->IsUnspecified(), c.unspecified) << c.text;
    EXPECT_EQ(a->IsLoopback(), c.loopback) << c.text;
    EXPECT_EQ(a->IsLinkLocal(), c.link_local) << c.text;
    EXPECT_EQ(a->IsMulticast(), c.multicast) << c.text;
    EXPECT_EQ(a->ToString(), c.canonical) << c.text;
  }
}

TEST(IpNetTest, ParseAndContains) {
  struct Case {
    const char* cidr;
    const char* ip;
    bool contains;
  } cases[] = {
      {"10.0.0.0/8", "10.200.1.1", true},
      {"10.0.0.0/8", "11.0.0.1", false},
      {"10.1.2.3/24", "10.1.2.200", true},
      {"10.1.2.3/24", "10.1.3.1", false},
      {"192.168.1.0/25", "192.168.1.127", true},
      {"192.168.1.0/25", "192.168.1.128", false},
      {"0.0.0.0/0", "8.8.8.8", true},
      {"0.0.0.0/0", "::1", false},
      {"fd00::/64", "fd00::1234", true},
      {"fd00::/64", "fd00:0:0:1::1", false},
      {"2001:db8::/32", "2001:db8:ffff::1", true},
      {"10.0.0.0/32", "10.0.0.0", true},
  };
  for (const auto& c : cases) {
    auto n = IpNet::Parse(c.cidr);
    ASSERT_TRUE(n.ok()) << c.cidr;
    EXPECT_EQ(n->Contains(*IpAddress::Parse(c.ip)), c.contains) << c.cidr << " " << c.ip;
  }
  EXPECT_EQ(IpNet::Parse("10.1.2.3/24")->ToString(), "10.1.2.0/24");
  EXPECT_EQ(IpNet::Parse("10.1.2.3/24")->last().ToString(), "10.1.2.255");
  EXPECT_EQ(IpNet::Parse("10.1.2.3/23")->last().ToString(), "10.1.3.255");
  EXPECT_EQ(IpNet::Parse("10.1.2.3/32")->last().ToString(), "10.1.2.3");
  EXPECT_EQ(IpNet::Parse("fd00::/120")->last().ToString(), "fd00::ff");
  EXPECT_EQ(IpNet::Parse("0.0.0.0/0")->last().ToString(), "255.255.255.255");
}

TEST(IpNetTest, RejectsBadCidrs) {
  for (const char* bad : {"10.0.0.0", "10.0.0.0/33", "fd00::/129", "10.0.0.0/", "x/8",
                          "10.0.0.0/-1", "10.0.0.0/+8", "10.0.0.0/8x"}) {
    auto n = IpNet::Parse(bad);
    ASSERT_FALSE(n.ok()) << bad;
    EXPECT_NE(n.status().message().find("is not a CIDR"), std::string::npos) << bad;
  }
}

}  // namespace
}  // namespace ccm
