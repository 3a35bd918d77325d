#include "cloud/core/addresses.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_split.h"

namespace ccm::cloud {
namespace {

using ::testing::HasSubstr;
constexpr IpFamily v4 = IpFamily::kIPv4;
constexpr IpFamily v6 = IpFamily::kIPv6;

std::vector<IpNet> Cidrs(const std::string& csv) {
  std::vector<IpNet> out;
  if (csv.empty()) return out;
  for (absl::string_view s : absl::StrSplit(csv, ',')) {
    auto n = IpNet::Parse(s);
    EXPECT_TRUE(n.ok()) << s;
    if (n.ok()) out.push_back(*n);
  }
  return out;
}

struct Cfg {  // [Nodes] in the reference's string form
  std::string internal_cidrs, external_cidrs, internal_name, external_name, exclude_internal,
      exclude_external;
  NodesConfig ToNodes() const {
    return NodesConfig{Cidrs(internal_cidrs), Cidrs(external_cidrs),   internal_name,
                       external_name,         Cidrs(exclude_internal), Cidrs(exclude_external)};
  }
};

struct AddressCase {
  std::string name;
  std::vector<IpFamily> families;
  Cfg cfg;
  std::vector<GuestNic> nics;
  // "I:addr" / "E:addr" after the Hostname; with a node_ip the whole list, the Hostname as "H".
  std::vector<std::string> want;
  std::string error;  // substring; empty = success
  std::vector<std::string> static_addresses = {};
  std::string node_ip = "";
};

std::vector<std::string> Render(const std::vector<NodeAddress>& addrs, bool with_hostname = false) {
  std::vector<std::string> out;
  for (const NodeAddress& a : addrs) {
    if (a.type == NodeAddressType::kHostname) {
      if (with_hostname) out.push_back("H");
      continue;
    }
    out.push_back((a.type == NodeAddressType::kInternalIP ? "I:" : "E:") + a.address);
  }
  return out;
}

class SelectNodeAddressesTest : public ::testing::TestWithParam<AddressCase> {};

TEST_P(SelectNodeAddressesTest, Table) {
  const AddressCase& c = GetParam();
  NodeAddressInput in;
  in.node_name = "node-1";
  in.guest_hostname = "node-1.example.com";
  in.nics = c.nics;
  in.ip_families = c.families;
  in.provided_node_ip = c.node_ip;
  for (const std::string& s : c.static_addresses)
    in.static_addresses.push_back(*IpAddress::Parse(s));
  auto got = SelectNodeAddresses(in, c.cfg.ToNodes());
  if (!c.error.empty()) {
    ASSERT_FALSE(got.ok()) << "want error " << c.error << ", got " << DebugString(*got);
    EXPECT_THAT(std::string(got.status().message()), HasSubstr(c.error));
    EXPECT_NE(got.status().code(), absl::StatusCode::kNotFound);
    return;
  }
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_FALSE(got->empty());
  if (!c.node_ip.empty()) {  // GetNodeAddressesFromNodeIP's order: node IP's types first
    EXPECT_EQ(Render(*got, true), c.want);
    return;
  }
  // Without a node IP the Hostname is always first (reference test: "hostname is always returned
  // first").
  EXPECT_EQ(got->front(), (NodeAddress{NodeAddressType::kHostname, "node-1.example.com"}));
  EXPECT_EQ(Render(*got), c.want);
}

GuestNic Nic(std::string network, std::vector<std::string> ips, int device = 0) {
  return GuestNic{std::move(network), device, std::move(ips)};
}

const char* kUnsuitable = "unable to find suitable IP address for node";

// Cases 1-47 are the reference's TestDiscoverNodeIPs table (nodemanager_test.go), same names,
// inputs and expectations; the rest cover what the reference does not.
INSTANTIATE_TEST_SUITE_P(
    Reference, SelectNodeAddressesTest,
    ::testing::Values(
        AddressCase{"BySubnet",
                    {v4},
                    {"10.10.0.0/16", "172.15.0.0/16"},
                    {Nic("net_123abc", {"127.0.0.6", "20.30.40.50", "10.10.1.22", "10.10.1.23",
                                        "172.15.108.10", "172.15.108.11"})},
                    {"I:10.10.1.22", "E:172.15.108.10"},
                    ""},
        AddressCase{"ByNetworkName",
                    {v4},
                    {"", "", "internal_net", "external_net"},
                    {Nic("internal_net", {"127.0.0.6", "10.10.1.22", "10.10.1.23"}),
                     Nic("external_net", {"127.0.0.7", "172.15.108.10", "172.15.108.11"})},
                    {"I:10.10.1.22", "E:172.15.108.10"},
                    ""},
        AddressCase{"ByDefaultSelection",
                    {v4},
                    {},
                    {Nic("net_123abc", {"127.0.0.6", "10.10.1.22", "10.10.1.23"}),
                     Nic("test_another_nic", {"127.0.0.7", "172.15.108.11"})},
                    {"I:10.10.1.22", "E:10.10.1.22"},
                    ""},
        AddressCase{"BySubnetIPv6",
                    {v6},
                    {"fd00:cccc::/64", "fd00:bbbb::/64"},
                    {Nic("net_123abc", {"fe80::1", "fd00:aaaa::1", "fd00:cccc::1", "fd00:cccc::2",
                                        "fd00:bbbb::1", "fd00:bbbb::2"})},
                    {"I:fd00:cccc::1", "E:fd00:bbbb::1"},
                    ""},
        AddressCase{"ByNetworkNameIPv6",
                    {v6},
                    {"", "", "internal_net", "external_net"},
                    {Nic("internal_net", {"fe80::3", "fd00:cccc::1", "fd00:cccc::2"}),
                     Nic("external_net", {"fe80::2", "fd00:bbbb::1", "fd00:bbbb::2"})},
                    {"I:fd00:cccc::1", "E:fd00:bbbb::1"},
                    ""},
        AddressCase{"ByDefaultSelectionIPv6",
                    {v6},
                    {},
                    {Nic("net_123abc", {"fe80::3", "fd00:cccc::1", "fd00:cccc::2"}),
                     Nic("test_another_nic", {"fe80::2", "fd00:bbbb::1", "fd00:bbbb::2"})},
                    {"I:fd00:cccc::1", "E:fd00:cccc::1"},
                    ""},
        AddressCase{"ByNetworkNameAndTwoNICs_desiredIPsAfterFirstNIC",
                    {v4},
                    {"", "", "internal_net", "external_net"},
                    {Nic("net_123abc", {"127.0.0.6", "169.0.1.2"}),
                     Nic("internal_net", {"10.10.10.10"}), Nic("external_net", {"172.15.108.11"})},
                    {"I:10.10.10.10", "E:172.15.108.11"},
                    ""},
        AddressCase{"ByMultipleSubnets_dualstack_itSelectsBothIPv4andIPv6Addrs",
                    {v4, v6},
                    {"10.10.0.0/16,fd00:cccc::/64", "172.15.0.0/16,fd00:dddd::/64"},
                    {Nic("net_foo", {"127.0.0.6", "169.0.1.2"}),
                     Nic("net_bar", {"10.10.1.22", "fd00:dddd::11"}),
                     Nic("net_baz", {"172.15.108.11", "fd00:cccc::22"})},
                    {"I:10.10.1.22", "E:172.15.108.11", "I:fd00:cccc::22", "E:fd00:dddd::11"},
                    ""},
        AddressCase{"ByMultipleSubnets_dualstack_WhenNoIPsOfFamilyMatchAnySubnets_"
                    "itFallsThroughToDefaultSelection",
                    {v4, v6},
                    {"10.10.0.0/16,fd00:ffff::/64", "172.15.0.0/16,fd00:eeee::/64"},
                    {Nic("net_foo", {"127.0.0.6", "169.0.1.2"}),
                     Nic("net_bar", {"10.10.1.22", "fd00:dddd::11"}),
                     Nic("net_baz", {"172.15.108.11", "fd00:cccc::22"})},
                    {"I:10.10.1.22", "E:172.15.108.11", "I:fd00:dddd::11", "E:fd00:dddd::11"},
                    ""},
        AddressCase{"ByMultipleSubnets_dualstack_WhenNoIPsOfFamilyMatchesInternalOrExternalSubnets_"
                    "itUsesSubnetSelectionAndOmitsTheIPThatHasNoMatch",
                    {v4, v6},
                    {"10.10.0.0/16,fd00:ffff::/64", "172.15.0.0/16,fd00:dddd::/64"},
                    {Nic("net_foo", {"127.0.0.6", "169.0.1.2"}),
                     Nic("net_bar", {"10.10.1.22", "fd00:dddd::11"}),
                     Nic("net_baz", {"172.15.108.11", "fd00:cccc::22"})},
                    {"I:10.10.1.22", "E:172.15.108.11", "E:fd00:dddd::11"},
                    ""},
        AddressCase{"ByMultipleSubnets",
                    {v4},
                    {"170.12.0.0/16,10.10.0.0/16", "172.15.0.0/16"},
                    {Nic("net_123abc", {"127.0.0.6", "169.0.1.2"}),
                     Nic("internal_net", {"10.10.1.22"}), Nic("external_net", {"172.15.108.11"})},
                    {"I:10.10.1.22", "E:172.15.108.11"},
                    ""},
        AddressCase{"BySubnetAndTwoNICs_desiredIPsAfterFirstNIC",
                    {v4},
                    {"10.10.0.0/16", "172.15.0.0/16"},
                    {Nic("net_123abc", {"127.0.0.6", "169.0.1.2"}),
                     Nic("internal_net", {"10.10.1.22"}), Nic("external_net", {"172.15.108.11"})},
                    {"I:10.10.1.22", "E:172.15.108.11"},
                    ""},
        AddressCase{"BySubnetAndTwoNICs_desiredIPsAreSplitAcrossNICs",
                    {v4},
                    {"10.10.0.0/16", "172.15.0.0/16"},
                    {Nic("net_123abc", {"127.0.0.6", "169.0.1.2", "10.10.1.22"}),
                     Nic("test_another_nic", {"127.0.0.7", "172.15.108.11"})},
                    {"I:10.10.1.22", "E:172.15.108.11"},
                    ""},
        AddressCase{"BySubnet_whenExternalCIDRHasNoMatch_itReturnsOnlyInternalIP",
                    {v4},
                    {"10.10.0.0/16", "172.15.0.0/16"},
                    {Nic("net_123abc", {"127.0.0.6", "169.0.1.2", "10.10.1.22"}),
                     Nic("test_another_nic", {"127.0.0.7"})},
                    {"I:10.10.1.22"},
                    ""},
        AddressCase{"BySubnet_whenInternalCIDRHasNoMatch_itReturnsOnlyExternalIP",
                    {v4},
                    {"10.10.0.0/16", "172.15.0.0/16"},
                    {Nic("net_123abc", {"127.0.0.6", "169.0.1.2", "172.15.108.11"}),
                     Nic("test_another_nic", {"127.0.0.7"})},
                    {"E:172.15.108.11"},
                    ""},
        AddressCase{"ByNetworkName_whenInternalNameHasNoMatch_itReturnsOnlyExternalIP",
                    {v4},
                    {"", "", "no-matches", "external_net"},
                    {Nic("net_123abc", {"127.0.0.6"}), Nic("internal_net", {"10.10.5.8"}),
                     Nic("external_net", {"172.15.2.3"})},
                    {"E:172.15.2.3"},
                    ""},
        AddressCase{"ByNetworkName_whenExternalNameHasNoMatch_itReturnsOnlyInternalIP",
                    {v4},
                    {"", "", "internal_net", "no-matches"},
                    {Nic("net_123abc", {"127.0.0.6"}), Nic("internal_net", {"10.10.5.8"}),
                     Nic("external_net", {"172.15.2.3"})},
                    {"I:10.10.5.8"},
                    ""},
        AddressCase{"BySubnet_whenOnlyExternalCIDRIsSet_itReturnsOnlyExternalIP",
                    {v4},
                    {"", "172.15.0.0/16"},
                    {Nic("net_123abc", {"127.0.0.6", "20.30.40.50", "10.10.1.22", "10.10.1.23",
                                        "172.15.108.10", "172.15.108.11"})},
                    {"E:172.15.108.10"},
                    ""},
        AddressCase{"BySubnet_whenOnlyInternalCIDRIsSet_itReturnsOnlyInternalIP",
                    {v4},
                    {"10.10.0.0/16"},
                    {Nic("net_123abc", {"127.0.0.6", "20.30.40.50", "10.10.1.22", "10.10.1.23",
                                        "172.15.108.10", "172.15.108.11"})},
                    {"I:10.10.1.22"},
                    ""},
        AddressCase{"ByNetworkName_selectsIgnoringCase",
                    {v4},
                    {"", "", "InTerNal_NEt", "ExTeRnAL_NeT"},
                    {Nic("internal_net", {"127.0.0.6", "20.30.40.50"}),
                     Nic("external_net", {"127.0.0.6", "20.30.40.51"})},
                    {"I:20.30.40.50", "E:20.30.40.51"},
                    ""},
        AddressCase{"ByNetworkName_whenOnlyExternalNetworkIsSet_onlyExternalNetIsSet",
                    {v4},
                    {"", "", "", "external_net"},
                    {Nic("internal_net", {"127.0.0.6", "10.10.1.22", "10.10.1.23"}),
                     Nic("external_net", {"127.0.0.7", "172.15.108.10", "172.15.108.11"})},
                    {"E:172.15.108.10"},
                    ""},
        AddressCase{"ByNetworkName_whenOnlyInternalNetworkIsSet_itReturnsOnlyInternalIP",
                    {v4},
                    {"", "", "internal_net", ""},
                    {Nic("internal_net", {"127.0.0.6", "10.10.1.22", "10.10.1.23"}),
                     Nic("external_net", {"127.0.0.7", "172.15.108.10", "172.15.108.11"})},
                    {"I:10.10.1.22"},
                    ""},
        AddressCase{"BySubnetAndNetworkNameTwoNICs_desiredIPsAreSplitAcrossNICs",
                    {v4},
                    {"10.10.0.0/16", "", "", "test_another_nic"},
                    {Nic("net_123abc", {"127.0.0.6", "169.0.1.2", "10.10.1.22"}),
                     Nic("test_another_nic", {"127.0.0.7", "172.15.108.11"})},
                    {"I:10.10.1.22", "E:172.15.108.11"},
                    ""},
        AddressCase{
            "BySettingBothNetworkNameAndSubnets_SubnetSelectionHasPrecedenceWhenMatchesAreFound",
            {v4},
            {"10.10.0.0/16", "172.15.0.0/16", "internal_net", "external_net"},
            {Nic("internal_net", {"22.22.22.22", "172.15.108.11"}),
             Nic("external_net", {"33.33.33.33", "10.10.1.22"})},
            {"I:10.10.1.22", "E:172.15.108.11"},
            ""},
        AddressCase{
            "BySettingBothNetworkNameAndSubnets_whenSubnetsMatchNoIPs_itUsesNetworkNameSelection",
            {v4},
            {"254.10.0.0/16", "253.15.0.0/16", "internal_net", "external_net"},
            {Nic("internal_net", {"22.22.22.22", "172.15.108.11"}),
             Nic("external_net", {"33.33.33.33", "10.10.1.22"})},
            {"I:22.22.22.22", "E:33.33.33.33"},
            ""},
        AddressCase{"ItIgnoresVNICDevices",
                    {v4},
                    {"254.10.0.0/16", "253.15.0.0/16", "internal_net", "external_net"},
                    {Nic("vnic-device", {"254.10.1.2", "253.15.2.4"}, -1),
                     Nic("internal_net", {"22.22.22.22", "172.15.108.11"}),
                     Nic("external_net", {"33.33.33.33", "10.10.1.22"})},
                    {"I:22.22.22.22", "E:33.33.33.33"},
                    ""},
        AddressCase{"BySettingANetworkNameThatDoesntExist",
                    {v4},
                    {"", "", "internal_net", "external_net"},
                    {Nic("net_a", {"10.10.1.22"}), Nic("net_b", {"172.15.108.11"})},
                    {},
                    kUnsuitable},
        AddressCase{"ByDiscoveringAnUnParsableIP_itIsIgnored",
                    {v4},
                    {},
                    {Nic("net_123abc", {"blarg", "127.0.0.6", "10.10.1.22", "10.10.1.23"}),
                     Nic("test_another_nic", {"127.0.0.7", "172.15.108.11"})},
                    {"I:10.10.1.22", "E:10.10.1.22"},
                    ""},
        AddressCase{"ByDefaultSelection_whenTheSecondNICHasNoIPs",
                    {v4},
                    {},
                    {Nic("net_a", {"172.15.108.11"}), Nic("net_b", {})},
                    {"I:172.15.108.11", "E:172.15.108.11"},
                    ""},
        AddressCase{"ByDefaultSelection_whenTheFirstNICHasNoIPs",
                    {v4},
                    {},
                    {Nic("net_a", {}), Nic("net_b", {"172.15.108.11"})},
                    {"I:172.15.108.11", "E:172.15.108.11"},
                    ""},
        AddressCase{"ByDefaultSelection_whenTheFirstNICHasNoIPsOfTheDesiredFamily",
                    {v4},
                    {},
                    {Nic("net_a", {"fd00:cccc::1"}), Nic("net_b", {"172.15.108.11"})},
                    {"I:172.15.108.11", "E:172.15.108.11"},
                    ""},
        AddressCase{
            "ByDefaultSelection_TheSecondNICHasNoIPsOfTheDesiredFamily",
            {v4},
            {},
            {Nic("net_a", {"172.15.108.11", "fe80:cccc::1"}), Nic("net_b", {"fe80:cccc::2"})},
            {"I:172.15.108.11", "E:172.15.108.11"},
            ""},
        AddressCase{
            "ByDefaultSelection_whenDualStackIPv4Primary_itReturnsIPv4AddrsFirst",
            {v4, v6},
            {},
            {Nic("net_a", {"172.15.108.11", "fd00:cccc::1"}), Nic("net_b", {"fd00:cccc::2"})},
            {"I:172.15.108.11", "E:172.15.108.11", "I:fd00:cccc::1", "E:fd00:cccc::1"},
            ""},
        AddressCase{
            "ByDefaultSelection_itDoesNotSelectIPsFromtheExclusionCIDRList",
            {v4, v6},
            {"", "", "", "", "172.15.108.11/32,fd00:cccc::1/128,fd00:cccc::2/128",
             "172.15.108.11/32,172.15.108.12/32,fd00:cccc::1/128"},
            {Nic("net_a", {"172.15.108.11", "172.15.108.12", "172.15.108.13", "fd00:cccc::1"}),
             Nic("net_b", {"fd00:cccc::2", "fd00:cccc::3"})},
            {"I:172.15.108.12", "E:172.15.108.13", "I:fd00:cccc::3", "E:fd00:cccc::2"},
            ""},
        AddressCase{
            "ByDefaultSelection_DualStackIPv6Primary_itReturnsIPv6AddrsFirst",
            {v6, v4},
            {},
            {Nic("net_a", {"172.15.108.11", "fd00:cccc::1"}), Nic("net_b", {"fd00:cccc::2"})},
            {"I:fd00:cccc::1", "E:fd00:cccc::1", "I:172.15.108.11", "E:172.15.108.11"},
            ""},
        AddressCase{"ByNetworkName_whenDualStack",
                    {v6, v4},
                    {"", "", "internal_net", "external_net"},
                    {Nic("internal_net", {"172.15.108.11", "fd00:cccc::1"}),
                     Nic("external_net", {"fd00:cccc::2", "172.15.108.12"})},
                    {"I:fd00:cccc::1", "E:fd00:cccc::2", "I:172.15.108.11", "E:172.15.108.12"},
                    ""},
        AddressCase{"BySubnet_itDoesNotSelectIPsFromtheExclusionCIDRList",
                    {v4, v6},
                    {"172.15.0.0/16,fd00:cccc::0/32", "173.15.0.0/16,fd01:cccc::0/32", "", "",
                     "172.15.108.11/32,fd00:cccc::1/128,fd00:cccc::2/128",
                     "173.15.108.11/32,173.15.108.12/32,fd01:cccc::1/128"},
                    {Nic("internal_net", {"172.15.108.11", "172.15.108.12", "172.15.108.13",
                                          "fd00:cccc::1", "fd00:cccc::2", "fd00:cccc::3"}),
                     Nic("external_net", {"173.15.108.11", "173.15.108.12", "173.15.108.13",
                                          "fd01:cccc::1", "fd01:cccc::2", "fd01:cccc::3"})},
                    {"I:172.15.108.12", "E:173.15.108.13", "I:fd00:cccc::3", "E:fd01:cccc::2"},
                    ""},
        AddressCase{"ByNetworkName_itDoesNotSelectIPsFromtheExclusionCIDRList",
                    {v4, v6},
                    {"", "", "internal_net", "external_net",
                     "172.15.108.11/32,fd00:cccc::1/128,fd00:cccc::2/128",
                     "173.15.108.11/32,173.15.108.12/32,fd01:cccc::1/128"},
                    {Nic("internal_net", {"172.15.108.11", "172.15.108.12", "172.15.108.13",
                                          "fd00:cccc::1", "fd00:cccc::2", "fd00:cccc::3"}),
                     Nic("external_net", {"173.15.108.11", "173.15.108.12", "173.15.108.13",
                                          "fd01:cccc::1", "fd01:cccc::2", "fd01:cccc::3"})},
                    {"I:172.15.108.12", "E:173.15.108.13", "I:fd00:cccc::3", "E:fd01:cccc::2"},
                    ""},
        AddressCase{"Dualstack_ExcludingSubnets_whenNoIPv4AddrIsDiscovered",
                    {v6, v4},
                    {"", "", "", "", "172.15.108.11/8", "172.15.108.11/8"},
                    {Nic("internal_net", {"172.15.108.11", "fd00:cccc::1"})},
                    {},
                    kUnsuitable},
        AddressCase{"Dualstack_ExcludingSubnets_whenNoIPv6AddrIsDiscovered",
                    {v6, v4},
                    {"", "", "", "", "fd00:cccc::1/16", "fd00:cccc::1/16"},
                    {Nic("internal_net", {"172.15.108.11", "fd00:cccc::1"})},
                    {},
                    kUnsuitable},
        AddressCase{"DualStack_whenNoIPsOfOneFamilyAreDiscovered",
                    {v6, v4},
                    {},
                    {Nic("internal_net", {"127.0.0.1", "fd00:cccc::1"})},
                    {},
                    kUnsuitable},
        AddressCase{"IPv6_guestInfoWithDHCP",
                    {v6},
                    {},
                    {Nic("VM Network", {"fe80::1", "fd01:1234::1", "fd01:cccc::1"})},
                    {"I:fd01:1234::1", "E:fd01:1234::1"},
                    "",
                    {}},
        AddressCase{"StaticAddresses_IPv6_usesStaticAddressForExternalInternal",
                    {v6},
                    {},
                    {Nic("VM Network", {"fe80::1", "fd01:1234::1", "fd01:cccc::1"})},
                    {"I:fd01:cccc::1", "E:fd01:cccc::1"},
                    "",
                    {"fd01:cccc::1"}},
        AddressCase{"StaticAddresses_IPv4_usesStaticAddressForExternalInternal",
                    {v4},
                    {},
                    {Nic("VM Network", {"192.168.1.10", "192.168.1.12"})},
                    {"I:192.168.1.12", "E:192.168.1.12"},
                    "",
                    {"192.168.1.12"}},
        AddressCase{"StaticAddresses_prioritizesOrderFromAddresses",
                    {v4},
                    {},
                    {Nic("VM Network", {"192.168.1.10", "192.168.1.12"})},
                    {"I:192.168.1.12", "E:192.168.1.12"},
                    "",
                    {"192.168.1.12", "192.168.1.10"}},
        AddressCase{"StaticAddresses_usesTheStaticAddressInTheNetworkCIDR",
                    {v4},
                    {"192.168.0.0/16", "192.168.0.0/16"},
                    {Nic("VM Network", {"192.168.1.10", "192.168.1.12", "10.10.10.10"})},
                    {"I:192.168.1.12", "E:192.168.1.12"},
                    "",
                    {"10.10.10.10", "192.168.1.12"}},
        AddressCase{"StaticAddresses_ignoresStaticAddressWhenWithinExcludeCIDR",
                    {v4},
                    {"", "", "", "", "192.168.0.0/16", "192.168.0.0/16"},
                    {Nic("VM Network", {"192.168.1.10", "192.168.1.12", "10.10.10.10"})},
                    {"I:10.10.10.10", "E:10.10.10.10"},
                    "",
                    {"192.168.1.12", "10.10.10.10"}},
        AddressCase{"StaticAddresses_usesTheStaticAddressInTheConfiguredNetworkName",
                    {v4},
                    {"", "", "VM Network", "VM Network"},
                    {Nic("internal_net", {"192.168.1.8"}),
                     Nic("VM Network", {"192.168.1.10", "192.168.1.12", "10.10.10.10"})},
                    {"I:192.168.1.12", "E:192.168.1.12"},
                    "",
                    {"192.168.1.8", "192.168.1.12", "10.10.10.10"}},
        AddressCase{"StaticAddresses_addressesAreNotAssignedToTheNIC",
                    {v4},
                    {},
                    {Nic("VM Network", {"192.168.1.8"})},
                    {"I:192.168.1.8", "E:192.168.1.8"},
                    "",
                    {"192.168.1.12", "10.10.10.10"}},
        AddressCase{"StaticAddresses_IPv6_handlesShorthandVsLonghandAddrs",
                    {v6},
                    {},
                    {Nic("VM Network", {"fd00::1", "fd01:1:2:2919:abba::401"})},
                    {"I:fd01:1:2:2919:abba::401", "E:fd01:1:2:2919:abba::401"},
                    "",
                    {"fd01:1:2:2919:abba:0000:0000:401"}}),
    [](const ::testing::TestParamInfo<AddressCase>& info) { return info.param.name; });

INSTANTIATE_TEST_SUITE_P(
    Ours, SelectNodeAddressesTest,
    ::testing::Values(
        // Filtering of candidates (REFERENCE.md Addresses 2).
        AddressCase{"DropsUnspecifiedLoopbackLinkLocalMulticast",
                    {v4, v6},
                    {},
                    {Nic("n", {"0.0.0.0", "::", "224.0.0.1", "239.1.1.1", "ff02::1", "169.254.0.1",
                               "fe80::1", "127.0.0.1", "::1", "192.168.1.1", "fd00:100:64::1"})},
                    {"I:192.168.1.1", "E:192.168.1.1", "I:fd00:100:64::1", "E:fd00:100:64::1"},
                    ""},
        AddressCase{"SpacesAroundReportedIPsAreTrimmed",
                    {v4},
                    {},
                    {Nic("n", {" 10.0.0.1 "})},
                    {"I:10.0.0.1", "E:10.0.0.1"},
                    ""},
        AddressCase{"CidrOrderBeatsCandidateOrder",
                    {v4},
                    {"10.2.0.0/16,10.1.0.0/16"},
                    {Nic("n", {"10.1.0.5", "10.2.0.5"})},
                    {"I:10.2.0.5"},
                    ""},
        AddressCase{"ExcludedAddressNeverMatchesItsSubnet",
                    {v4},
                    {"10.0.0.0/8", "", "", "", "10.0.0.1/32"},
                    {Nic("n", {"10.0.0.1", "10.0.0.2"})},
                    {"I:10.0.0.2"},
                    ""},
        AddressCase{"ExclusionsAreIndependentPerRole",
                    {v4},
                    {"", "", "", "", "10.0.0.1/32"},
                    {Nic("n", {"10.0.0.1", "10.0.0.2"})},
                    {"I:10.0.0.2", "E:10.0.0.1"},
                    ""},
        AddressCase{"EverythingExcludedIsAnError",
                    {v4},
                    {"", "", "", "", "10.0.0.0/8", "10.0.0.0/8"},
                    {Nic("n", {"10.0.0.1"})},
                    {},
                    "exclude-internal-network-subnet-cidr=10.0.0.0/8"},
        AddressCase{"OnlyOneNetworkNameMissingStillWorks",
                    {v4},
                    {"", "", "internal_net", "absent"},
                    {Nic("internal_net", {"10.0.0.1"})},
                    {"I:10.0.0.1"},
                    ""},
        AddressCase{"NetworkNameCheckIgnoresVnicDevices",
                    {v4},
                    {"", "", "internal_net", "external_net"},
                    {Nic("internal_net", {"10.0.0.1"}, -1), Nic("other", {"10.0.0.2"})},
                    {},
                    "none of the VM's networks [other]"},
        AddressCase{"NoNicsIsAnErrorNamingTheFamily",
                    {v4},
                    {},
                    {},
                    {},
                    "with IP family ipv4: IPv4 candidates: none"},
        AddressCase{"OnlyLoopbackIsAnError", {v4}, {}, {Nic("n", {"127.0.0.1"})}, {}, kUnsuitable},
        AddressCase{"MissingV6NamesFamilyAndCandidates",
                    {v4, v6},
                    {},
                    {Nic("n", {"10.0.0.1"})},
                    {},
                    "ipv6: IPv6 candidates: none"},
        AddressCase{"StaticDuplicateOnTwoNicsBothSortFirst",
                    {v4},
                    {"", "", "", "b"},
                    {Nic("a", {"10.0.0.1", "10.0.0.9"}), Nic("b", {"10.0.0.2", "10.0.0.9"})},
                    {"E:10.0.0.9"},
                    "",
                    {"10.0.0.9"}},
        // The kubelet's --node-ip (REFERENCE.md Addresses 5), ordered as k8s.io/cloud-provider's
        // GetNodeAddressesFromNodeIP orders the reference's list: the node IP's types first and
        // exclusive, then the rest in order.
        AddressCase{"NodeIpOverridesDefaultInternal",
                    {v4},
                    {},
                    {Nic("n", {"10.0.0.1", "10.0.0.2"})},
                    {"I:10.0.0.2", "H", "E:10.0.0.1"},
                    "",
                    {},
                    "10.0.0.2"},
        AddressCase{"NodeIpOverridesSubnetMatch",
                    {v4},
                    {"10.0.0.0/24", "10.0.0.0/24"},
                    {Nic("n", {"10.0.0.1", "192.168.0.7"})},
                    {"I:192.168.0.7", "H", "E:10.0.0.1"},
                    "",
                    {},
                    "192.168.0.7"},
        AddressCase{"NodeIpAddsInternalWhenOnlyExternalWasFound",
                    {v4},
                    {"", "172.15.0.0/16"},
                    {Nic("n", {"10.0.0.1", "172.15.0.1"})},
                    {"I:10.0.0.1", "H", "E:172.15.0.1"},
                    "",
                    {},
                    "10.0.0.1"},
        AddressCase{"NodeIpWinsOverExclusion",
                    {v4},
                    {"", "", "", "", "10.0.0.2/32"},
                    {Nic("n", {"10.0.0.1", "10.0.0.2"})},
                    {"I:10.0.0.2", "H", "E:10.0.0.1"},
                    "",
                    {},
                    "10.0.0.2"},
        AddressCase{"NodeIpMatchesLonghandIPv6",
                    {v6},
                    {},
                    {Nic("n", {"fd00::1", "fd00::2"})},
                    {"I:fd00::2", "H", "E:fd00::1"},
                    "",
                    {},
                    "fd00:0:0:0:0:0:0:2"},
        // The reference picked the node IP as both roles: both types lead, Hostname after.
        AddressCase{"NodeIpEqualToDefaultLeadsWithBothTypes",
                    {v4},
                    {},
                    {Nic("n", {"10.0.0.1"})},
                    {"I:10.0.0.1", "E:10.0.0.1", "H"},
                    "",
                    {},
                    "10.0.0.1"},
        // The rules made it the ExternalIP: it stays external, first, and exclusive.
        AddressCase{"NodeIpPickedAsExternalKeepsItsRole",
                    {v4},
                    {"10.0.0.0/8", "172.15.0.0/16"},
                    {Nic("n", {"10.0.0.1", "172.15.0.1", "172.15.0.2"})},
                    {"E:172.15.0.1", "H", "I:10.0.0.1"},
                    "",
                    {},
                    "172.15.0.1"},
        // Dual stack, a pair: both InternalIPs first in the annotation's order.
        AddressCase{"NodeIpDualStackPair",
                    {v4, v6},
                    {},
                    {Nic("n", {"10.0.0.1", "10.0.0.2", "fd00::1", "fd00::2"})},
                    {"I:10.0.0.2", "I:fd00::2", "H", "E:10.0.0.1", "E:fd00::1"},
                    "",
                    {},
                    "10.0.0.2,fd00::2"},
        AddressCase{"NodeIpDualStackPairV6First",
                    {v4, v6},
                    {},
                    {Nic("n", {"10.0.0.1", "10.0.0.2", "fd00::1", "fd00::2"})},
                    {"I:fd00::2", "I:10.0.0.2", "H", "E:10.0.0.1", "E:fd00::1"},
                    "",
                    {},
                    "fd00::2,10.0.0.2"},
        // Dual stack, a single IPv4 node IP: InternalIP becomes exclusive, so the IPv6 InternalIP
        // is dropped (upstream's behaviour; the kubelet gives a pair to keep both).
        AddressCase{"NodeIpSingleFamilyOnDualStackDropsOtherInternal",
                    {v4, v6},
                    {"10.0.0.0/8", "172.15.0.0/16"},
                    {Nic("n", {"10.0.0.1", "172.15.0.1", "fd00::1"})},
                    {"I:10.0.0.1", "H", "E:172.15.0.1", "E:fd00::1"},
                    "",
                    {},
                    "10.0.0.1"},
        AddressCase{"NodeIpTwoOfOneFamily",
                    {v4},
                    {},
                    {Nic("n", {"10.0.0.1", "10.0.0.2"})},
                    {},
                    "must contain either a single IP or a dual-stack pair of IPs",
                    {},
                    "10.0.0.1,10.0.0.2"},
        AddressCase{"NodeIpThreeIps",
                    {v4, v6},
                    {},
                    {Nic("n", {"10.0.0.1", "fd00::1"})},
                    {},
                    "must contain either a single IP or a dual-stack pair of IPs",
                    {},
                    "10.0.0.1,fd00::1,10.0.0.2"},
        AddressCase{"NodeIpPairWithUnspecified",
                    {v4, v6},
                    {},
                    {Nic("n", {"10.0.0.1", "fd00::1"})},
                    {},
                    "cannot include '0.0.0.0' or '::'",
                    {},
                    "0.0.0.0,fd00::1"},
        AddressCase{"NodeIpUnspecifiedSingleIsNotOnTheVm",
                    {v4},
                    {},
                    {Nic("n", {"10.0.0.1"})},
                    {},
                    "kubelet node IP 0.0.0.0",
                    {},
                    "0.0.0.0"},
        AddressCase{
            "NodeIpNotOnTheVm",
            {v4},
            {},
            {Nic("n", {"10.0.0.1"})},
            {},
            "kubelet node IP 10.9.9.9 (alpha.kubernetes.io/provided-node-ip) is not one of the "
            "VM's addresses: 10.0.0.1 (n)",
            {},
            "10.9.9.9"},
        AddressCase{"NodeIpOnVnicDeviceIsNotTheVms",
                    {v4},
                    {},
                    {Nic("n", {"10.0.0.1"}), Nic("vnic", {"10.0.0.2"}, -1)},
                    {},
                    "kubelet node IP 10.0.0.2",
                    {},
                    "10.0.0.2"},
        AddressCase{"NodeIpLoopbackIsRejected",
                    {v4},
                    {},
                    {Nic("n", {"10.0.0.1", "127.0.0.1"})},
                    {},
                    "kubelet node IP 127.0.0.1",
                    {},
                    "127.0.0.1"},
        AddressCase{
            "NodeIpOfUnconfiguredFamily",
            {v4},
            {},
            {Nic("n", {"10.0.0.1", "fd00::1"})},
            {},
            "kubelet node IP fd00::1 is IPv6 but the vCenter's ip-family does not include ipv6",
            {},
            "fd00::1"},
        AddressCase{"NodeIpUnparsable",
                    {v4},
                    {},
                    {Nic("n", {"10.0.0.1"})},
                    {},
                    "\"banana\" is not an IP address",
                    {},
                    "banana"}),
    [](const ::testing::TestParamInfo<AddressCase>& info) { return info.param.name; });

// GetNodeAddressesFromNodeIP on a given list: every address equal to a node IP (whatever its type,
// even a Hostname written as an IP) leads and makes its type exclusive.
TEST(PreferNodeIpsTest, UpstreamOrdering) {
  using T = NodeAddressType;
  const std::vector<NodeAddress> list = {{T::kHostname, "10.0.0.9"},
                                         {T::kInternalIP, "10.0.0.1"},
                                         {T::kExternalIP, "10.0.0.9"},
                                         {T::kInternalIP, "fd00::1"},
                                         {T::kExternalIP, "fd00::2"}};
  struct AddressCase {
    std::string node_ip;
    std::string want;
  } cases[] = {
      {"10.0.0.9", "Hostname=10.0.0.9 ExternalIP=10.0.0.9 InternalIP=10.0.0.1 InternalIP=fd00::1"},
      {"fd00::2", "ExternalIP=fd00::2 Hostname=10.0.0.9 InternalIP=10.0.0.1 InternalIP=fd00::1"},
      {"10.0.0.1,fd00::1",
       "InternalIP=10.0.0.1 InternalIP=fd00::1 Hostname=10.0.0.9 ExternalIP=10.0.0.9 "
       "ExternalIP=fd00::2"},
      {"",
       "Hostname=10.0.0.9 InternalIP=10.0.0.1 ExternalIP=10.0.0.9 InternalIP=fd00::1 "
       "ExternalIP=fd00::2"},
  };
  for (const AddressCase& c : cases) {
    auto ips = ParseProvidedNodeIp(c.node_ip);
    ASSERT_TRUE(ips.ok()) << ips.status();
    EXPECT_EQ(DebugString(PreferNodeIps(*ips, list)), c.want) << c.node_ip;
  }
}

TEST(SelectNodeAddressesErrors, EmptyHostnameAndFamilies) {
  NodeAddressInput in;
  in.node_name = "n1";
  in.nics = {Nic("n", {"10.0.0.1"})};
  auto got = SelectNodeAddresses(in, NodesConfig{});
  EXPECT_EQ(got.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(got.status().message()), HasSubstr("guest hostname is empty"));

  in.guest_hostname = "n1";
  in.ip_families.clear();
  EXPECT_EQ(SelectNodeAddresses(in, NodesConfig{}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(SelectNodeAddressesErrors, UnsuitableNamesNodeAndRules) {
  NodeAddressInput in;
  in.node_name = "worker-7";
  in.guest_hostname = "worker-7";
  in.nics = {Nic("pg-a", {"10.0.0.1"})};
  NodesConfig cfg;
  cfg.exclude_internal_network_subnet_cidrs = Cidrs("10.0.0.0/8");
  cfg.exclude_external_network_subnet_cidrs = Cidrs("10.0.0.0/8");
  auto got = SelectNodeAddresses(in, cfg);
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), absl::StatusCode::kFailedPrecondition);
  const std::string msg(got.status().message());
  EXPECT_THAT(msg, HasSubstr("node worker-7"));
  EXPECT_THAT(msg, HasSubstr("10.0.0.1 (pg-a)"));
  EXPECT_THAT(msg, HasSubstr("exclude-external-network-subnet-cidr=10.0.0.0/8"));
}

TEST(NodeAddressTest, Names) {
  EXPECT_EQ(NodeAddressTypeName(NodeAddressType::kHostname), "Hostname");
  EXPECT_EQ(NodeAddressTypeName(NodeAddressType::kInternalIP), "InternalIP");
  EXPECT_EQ(NodeAddressTypeName(NodeAddressType::kExternalIP), "ExternalIP");
  EXPECT_EQ(DebugString({{NodeAddressType::kHostname, "h"}, {NodeAddressType::kInternalIP, "1"}}),
            "Hostname=h InternalIP=1");
}

}  // namespace
}  // namespace ccm::cloud
