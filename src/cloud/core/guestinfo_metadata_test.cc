#include "cloud/core/guestinfo_metadata.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <zlib.h>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"

namespace ccm::cloud {
namespace {

std::string Gzip(const std::string& in) {
  z_stream zs{};
  EXPECT_EQ(
      deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY),
      Z_OK);
  std::string out(deflateBound(&zs, in.size()) + 32, '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  zs.avail_in = static_cast<uInt>(in.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&zs, Z_FINISH), Z_STREAM_END);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}

std::string B64(const std::string& s) { return absl::Base64Escape(s); }

// The reference test's metadata shapes (nodemanager_test.go guestInfoWith...).
std::string WithAddresses(const std::string& addresses) {
  return absl::StrCat(R"(instance-id: "tkg-mgmt-vc"
local-hostname: "tkg-mgmt-vc"
wait-on-network:
  ipv4: false
  ipv6: false
network:
  version: 2
  ethernets:
    id0:
      addresses: [)",
                      addresses, R"(]
      match:
        macaddress: "00:11:22"
      set-name: "eth0"
      wakeonlan: true
      dhcp4: false
      dhcp6: false)");
}

std::string EncodedNetwork(const std::string& encoding, const std::string& addresses) {
  const std::string netcfg = absl::StrCat("version: 2\nethernets:\n  id0:\n    addresses: [",
                                          addresses, "]\n    dhcp4: false\n");
  const std::string encoded = encoding == "base64" ? B64(netcfg) : B64(Gzip(netcfg));
  return absl::StrCat("instance-id: \"x\"\nnetwork.encoding: ", encoding, "\nnetwork: ", encoded,
                      "\n");
}

std::vector<std::string> Strings(const std::vector<IpAddress>& ips) {
  std::vector<std::string> out;
  for (const IpAddress& ip : ips) out.push_back(ip.ToString());
  return out;
}

struct Case {
  std::string name;
  std::string value;
  std::string encoding;
  std::vector<std::string> want;
  std::string error;  // substring; empty = success
};

class GuestinfoTest : public ::testing::TestWithParam<Case> {};

TEST_P(GuestinfoTest, Parses) {
  const Case& c = GetParam();
  auto got = ParseGuestinfoStaticAddresses(c.value, c.encoding);
  if (!c.error.empty()) {
    ASSERT_FALSE(got.ok()) << "expected error containing " << c.error;
    EXPECT_THAT(std::string(got.status().message()), ::testing::HasSubstr(c.error));
    EXPECT_THAT(std::string(got.status().message()), ::testing::HasSubstr("guestinfo.metadata"));
    return;
  }
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(Strings(*got), c.want);
}

const std::string kDhcp = R"(instance-id: "tkg-mgmt-vc"
network:
  version: 2
  ethernets:
    id0:
      match:
        macaddress: "00:11:22"
      dhcp4: false
      dhcp6: true)";

INSTANTIATE_TEST_SUITE_P(
    Table, GuestinfoTest,
    ::testing::Values(
        Case{"V2Base64", B64(WithAddresses("192.168.1.12/64")), "base64", {"192.168.1.12"}, ""},
        Case{"V2OrderKept",
             B64(WithAddresses("192.168.1.12/64,192.168.1.10/64")),
             "base64",
             {"192.168.1.12", "192.168.1.10"},
             ""},
        Case{"V2IPv6Longhand",
             B64(WithAddresses("fd01:1:2:2919:abba:0000:0000:401/128")),
             "base64",
             {"fd01:1:2:2919:abba::401"},
             ""},
        Case{"V2GzipBase64",
             B64(Gzip(WithAddresses("fd01:cccc::1/128"))),
             "gzip+base64",
             {"fd01:cccc::1"},
             ""},
        Case{"V2ShortEncodingNames",
             B64(Gzip(WithAddresses("10.0.0.5/24"))),
             "gz+b64",
             {"10.0.0.5"},
             ""},
        Case{"B64Alias", B64(WithAddresses("10.0.0.5/24")), "b64", {"10.0.0.5"}, ""},
        Case{"PlainText", WithAddresses("10.0.0.5/24"), "", {"10.0.0.5"}, ""},
        Case{"Base64WithLineBreaks",
             [] {
               std::string b = B64(WithAddresses("10.0.0.5/24"));
               for (size_t i = 60; i < b.size(); i += 61) b.insert(i, "\n");
               return b;
             }(),
             "base64",
             {"10.0.0.5"},
             ""},
        Case{"DhcpOnly", B64(kDhcp), "base64", {}, ""},
        Case{"NoNetworkKey", B64("instance-id: a\nlocal-hostname: b\n"), "base64", {}, ""},
        Case{"EmptyValue", "", "base64", {}, ""},
        Case{"NetworkEncodedBase64",
             B64(EncodedNetwork("base64", "fd01:cccc::1/128")),
             "base64",
             {"fd01:cccc::1"},
             ""},
        Case{"NetworkEncodedGzip",
             B64(EncodedNetwork("gzip+base64", "fd01:cccc::1/128")),
             "base64",
             {"fd01:cccc::1"},
             ""},
        Case{"BriefExampleFlowStyle",
             B64("network: {version: 2, ethernets: {nic0: {addresses: [10.0.0.5/24]}}}"),
             "base64",
             {"10.0.0.5"},
             ""},
        Case{"Json",
             B64(R"({"local-hostname": "n1", "network": {"version": 2, "ethernets":
                 {"nic0": {"addresses": ["10.0.0.6/24", "fd00::6/64"]}}}})"),
             "base64",
             {"10.0.0.6", "fd00::6"},
             ""},
        Case{"V2AllDeviceKindsAndMapForm",
             B64(R"(network:
  version: 2
  ethernets:
    e0: {addresses: [10.0.0.1/24]}
  bonds:
    b0: {addresses: [{"10.0.1.1/24": {lifetime: 0}}]}
  bridges:
    br0: {addresses: [10.0.2.1/24]}
  vlans:
    v10: {addresses: [10.0.3.1/24, 10.0.0.1/24]}
)"),
             "base64",
             {"10.0.0.1", "10.0.1.1", "10.0.2.1", "10.0.3.1"},
             ""},
        Case{"V1Static",
             B64(R"(network:
  version: 1
  config:
    - type: physical
      name: ens192
      subnets:
        - type: dhcp
        - type: static
          address: 192.168.1.200
          netmask: 255.255.255.0
        - type: static6
          address: fd00::200/64
    - type: nameserver
      address: [8.8.8.8]
)"),
             "base64",
             {"192.168.1.200", "fd00::200"},
             ""},
        Case{"WrappedNetwork",
             B64("network:\n  network:\n    version: 2\n    ethernets:\n      e0:\n        "
                 "addresses: [10.9.9.9/8]\n"),
             "base64",
             {"10.9.9.9"},
             ""},
        // Errors: never a crash, always naming what is wrong.
        Case{"NotYamlMap",
             B64("not-valid-yaml this should error"),
             "base64",
             {},
             "cannot unmarshal"},
        Case{"BrokenYaml", B64("network: [unclosed"), "base64", {}, "cannot unmarshal"},
        Case{"BrokenJson", B64("{\"network\": "), "base64", {}, "cannot unmarshal"},
        Case{"NotBase64", "!!!not base64!!!", "base64", {}, "base64"},
        Case{"NotGzip", B64("plain text"), "gzip+base64", {}, "gzip"},
        Case{"TruncatedGzip",
             B64(Gzip(WithAddresses("10.0.0.5/24")).substr(0, 20)),
             "gzip+base64",
             {},
             "gzip"},
        Case{"UnknownEncoding", "abc", "rot13", {}, "unsupported encoding"},
        Case{"UnknownVersion",
             B64("network: {version: 3}"),
             "base64",
             {},
             "unsupported network config version"},
        Case{"BadAddress", B64(WithAddresses("banana/24")), "base64", {}, "banana"},
        Case{"AddressesNotList",
             B64("network: {version: 2, ethernets: {e0: {addresses: 10.0.0.1}}}"),
             "base64",
             {},
             "not a list"},
        Case{"EthernetsNotMap",
             B64("network: {version: 2, ethernets: [a]}"),
             "base64",
             {},
             "not a map"},
        Case{"BadNestedNetworkEncoding",
             B64("network.encoding: base64\nnetwork: '!!!'\n"),
             "base64",
             {},
             "base64"}),
    [](const ::testing::TestParamInfo<Case>& info) { return info.param.name; });

TEST(GuestinfoDecodeTest, GzipBombIsCapped) {
  const std::string big(3 << 20, 'a');
  auto got = DecodeGuestinfoValue(B64(Gzip(big)), "gzip+base64");
  ASSERT_FALSE(got.ok());
  EXPECT_THAT(std::string(got.status().message()), ::testing::HasSubstr("1 MiB"));
}

}  // namespace
}  // namespace ccm::cloud
