// Table tests: a corpus of configs in both formats must give the same typed Config; every error
// case asserts its message.
#include "cloud/config/config.h"

#include "absl/strings/str_join.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ccm::cloud {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

IpNet Net(const char* s) { return *IpNet::Parse(s); }

struct PairCase {
  const char* name;
  const char* ini;
  const char* yaml;
  Environment env;
  std::function<void(const Config&)> check;
};

const PairCase kPairs[] = {
    {"minimal",
     "[Global]\nuser = admin\npassword = pw\n[VirtualCenter \"10.0.0.1\"]\n",
     "global:\n  user: admin\n  password: pw\nvcenter:\n  10.0.0.1:\n    server: 10.0.0.1\n",
     {},
     [](const Config& c) {
       ASSERT_EQ(c.vcenters.size(), 1u);
       const auto& vc = c.vcenters[0];
       EXPECT_EQ(vc.server, "10.0.0.1");
       EXPECT_EQ(vc.port, 443);
       EXPECT_EQ(vc.soap_roundtrip_count, 3);
       EXPECT_EQ(vc.user, "admin");
       EXPECT_EQ(vc.password.reveal(), "pw");
       EXPECT_FALSE(vc.insecure_flag);
       EXPECT_TRUE(vc.datacenters.empty());
       EXPECT_EQ(vc.ip_families, std::vector<IpFamily>{IpFamily::kIPv4});
       EXPECT_EQ(vc.credential_source, CredentialSourceKind::kInline);
     }},
    {"full",
     "[Global]\nuser = admin\npassword = \"p;w#\"\nport = 8443\ninsecure-flag = 1\n"
     "datacenters = \"dc1, dc2\"\nsoap-roundtrip-count = 5\nca-file = /ca.pem\n"
     "thumbprint = AA:BB\nip-family = ipv4\ncluster-id = c1\n"
     "[VirtualCenter \"vc.example.com\"]\nuser = vcuser\npassword = vcpw\nport = 443\n"
     "datacenters = dc3\n[Labels]\nregion = k8s-region\nzone = k8s-zone\n"
     "[Nodes]\ninternal-network-subnet-cidr = \"10.0.0.0/8, fd00::/64\"\n"
     "external-network-subnet-cidr = 192.0.2.0/24\ninternal-vm-network-name = \"Internal Net\"\n"
     "external-vm-network-name = External\nexclude-internal-network-subnet-cidr = 10.1.0.0/16\n"
     "exclude-external-network-subnet-cidr = 192.0.2.128/25\n",
     "global:\n  user: admin\n  password: \"p;w#\"\n  port: 8443\n  insecureFlag: true\n"
     "  datacenters: [dc1, dc2]\n  soapRoundtripCount: 5\n  caFile: /ca.pem\n"
     "  thumbprint: AA:BB\n  ipFamily: [ipv4]\n  clusterID: c1\n"
     "vcenter:\n  vc.example.com:\n    server: vc.example.com\n    user: vcuser\n"
     "    password: vcpw\n    port: 443\n    datacenters:\n      - dc3\n"
     "labels:\n  region: k8s-region\n  zone: k8s-zone\n"
     "nodes:\n  internalNetworkSubnetCidr: 10.0.0.0/8,fd00::/64\n"
     "  externalNetworkSubnetCidr: 192.0.2.0/24\n  internalVmNetworkName: Internal Net\n"
     "  externalVmNetworkName: External\n  excludeInternalNetworkSubnetCidr: 10.1.0.0/16\n"
     "  excludeExternalNetworkSubnetCidr: 192.0.2.128/25\n",
     {},
     [](const Config& c) {
       EXPECT_EQ(c.global.password.reveal(), "p;w#");
       EXPECT_EQ(c.global.datacenters, (std::vector<std::string>{"dc1", "dc2"}));
       EXPECT_EQ(c.global.cluster_id, "c1");
       const auto& vc = c.vcenters.at(0);
       EXPECT_EQ(vc.port, 443);
       EXPECT_TRUE(vc.insecure_flag);  // OR'ed with Global
       EXPECT_EQ(vc.datacenters, std::vector<std::string>{"dc3"});
       EXPECT_EQ(vc.soap_roundtrip_count, 5);
       EXPECT_EQ(vc.ca_file, "/ca.pem");
       EXPECT_EQ(vc.thumbprint, "AA:BB");
       EXPECT_EQ(vc.user, "vcuser");
       EXPECT_TRUE(c.labels.ZonesEnabled());
       EXPECT_EQ(c.nodes.internal_network_subnet_cidrs,
                 (std::vector<IpNet>{Net("10.0.0.0/8"), Net("fd00::/64")}));
       EXPECT_EQ(c.nodes.internal_vm_network_name, "Internal Net");
       EXPECT_EQ(c.nodes.exclude_external_network_subnet_cidrs,
                 std::vector<IpNet>{Net("192.0.2.128/25")});
     }},
    {"multi-vc inheritance",
     "[Global]\nuser = g\npassword = gp\nport = 444\ndatacenters = gdc\n"
     "[VirtualCenter \"a\"]\n[VirtualCenter \"b\"]\nuser = bu\npassword = bp\ninsecure-flag = "
     "true\n"
     "port = 555\n",
     "global:\n  user: g\n  password: gp\n  port: 444\n  datacenters: [gdc]\n"
     "vcenter:\n  a:\n    server: a\n  b:\n    server: b\n    user: bu\n    password: bp\n"
     "    insecureFlag: true\n    port: 555\n",
     {},
     [](const Config& c) {
       ASSERT_EQ(c.vcenters.size(), 2u);
       EXPECT_EQ(c.vcenters[0].user, "g");
       EXPECT_EQ(c.vcenters[0].port, 444);
       EXPECT_EQ(c.vcenters[0].datacenters, std::vector<std::string>{"gdc"});
       EXPECT_FALSE(c.vcenters[0].insecure_flag);
       EXPECT_EQ(c.vcenters[1].user, "bu");
       EXPECT_EQ(c.vcenters[1].port, 555);
       EXPECT_TRUE(c.vcenters[1].insecure_flag);
     }},
    {"server makes the section name a label",
     "[Global]\nuser = u\npassword = p\n[VirtualCenter \"tenant-a\"]\nserver = 10.1.1.1\n",
     "global:\n  user: u\n  password: p\nvcenter:\n  tenant-a:\n    server: 10.1.1.1\n",
     {},
     [](const Config& c) {
       EXPECT_EQ(c.vcenters[0].label, "tenant-a");
       EXPECT_EQ(c.vcenters[0].server, "10.1.1.1");
       EXPECT_NE(c.FindVCenter("10.1.1.1"), nullptr);
     }},
    {"ipv6 address",
     "[Global]\nuser = u\npassword = p\n[VirtualCenter \"fd00::10\"]\nip-family = ipv6\n",
     "global:\n  user: u\n  password: p\nvcenter:\n  fd00::10:\n    server: \"fd00::10\"\n"
     "    ipFamily: [ipv6]\n",
     {},
     [](const Config& c) {
       EXPECT_EQ(c.vcenters[0].server, "fd00::10");
       EXPECT_EQ(c.vcenters[0].ip_families, std::vector<IpFamily>{IpFamily::kIPv6});
     }},
    {"dual stack ordered",
     "[Global]\nuser = u\npassword = p\nip-family = \"ipv6, ipv4\"\n[VirtualCenter \"v\"]\n",
     "global:\n  user: u\n  password: p\n  ipFamily: [ipv6, ipv4]\nvcenter:\n  v:\n    server: v\n",
     {},
     [](const Config& c) {
       EXPECT_EQ(c.vcenters[0].ip_families,
                 (std::vector<IpFamily>{IpFamily::kIPv6, IpFamily::kIPv4}));
     }},
    {"deprecated Global server",
     "[Global]\nuser = u\npassword = p\nserver = 10.9.9.9\nport = 8443\n",
     "global:\n  user: u\n  password: p\n  server: 10.9.9.9\n  port: 8443\n",
     {},
     [](const Config& c) {
       ASSERT_EQ(c.vcenters.size(), 1u);
       EXPECT_EQ(c.vcenters[0].server, "10.9.9.9");
       EXPECT_EQ(c.vcenters[0].port, 8443);
     }},
    {"global secret",
     "[Global]\nsecret-name = vsphere-cloud-secret\nsecret-namespace = kube-system\n"
     "[VirtualCenter \"v\"]\n",
     "global:\n  secretName: vsphere-cloud-secret\n  secretNamespace: kube-system\n"
     "vcenter:\n  v:\n    server: v\n",
     {},
     [](const Config& c) {
       EXPECT_EQ(c.vcenters[0].credential_source, CredentialSourceKind::kGlobalSecret);
       EXPECT_EQ(c.vcenters[0].secret_name, "vsphere-cloud-secret");
       EXPECT_EQ(c.vcenters[0].secret_namespace, "kube-system");
     }},
    {"per-vc secret wins over global secret",
     "[Global]\nsecret-name = g\nsecret-namespace = ns\n"
     "[VirtualCenter \"v\"]\nsecret-name = s\nsecret-namespace = ns2\n",
     "global:\n  secretName: g\n  secretNamespace: ns\n"
     "vcenter:\n  v:\n    server: v\n    secretName: s\n    secretNamespace: ns2\n",
     {},
     [](const Config& c) {
       EXPECT_EQ(c.vcenters[0].credential_source, CredentialSourceKind::kVCenterSecret);
       EXPECT_EQ(c.vcenters[0].secret_name, "s");
     }},
    {"secrets directory",
     "[Global]\nsecrets-directory = /etc/cloud/secrets\n[VirtualCenter \"v\"]\n",
     "global:\n  secretsDirectory: /etc/cloud/secrets\nvcenter:\n  v:\n    server: v\n",
     {},
     [](const Config& c) {
       EXPECT_EQ(c.vcenters[0].credential_source, CredentialSourceKind::kSecretsDirectory);
       EXPECT_EQ(c.vcenters[0].secrets_directory, "/etc/cloud/secrets");
     }},
    {"env overrides",
     "[Global]\nuser = file\npassword = p\n[VirtualCenter \"v\"]\n",
     "global:\n  user: file\n  password: p\nvcenter:\n  v:\n    server: v\n",
     {{"VSPHERE_USER", "envuser"},
      {"VSPHERE_PASSWORD", "a=b=c"},
      {"VSPHERE_INSECURE", "true"},
      {"VSPHERE_LABEL_REGION", "r"},
      {"VSPHERE_LABEL_ZONE", "z"},
      {"VSPHERE_VCENTER_PORT", "8443"},
      {"VSPHERE_NODES_INTERNAL_NETWORK_SUBNET_CIDR", "10.0.0.0/8"},
      {"VSPHERE_NODES_EXTERNAL_VM_NETWORK_NAME", "ext"}},
     [](const Config& c) {
       ASSERT_EQ(c.vcenters.size(), 1u);  // VSPHERE_VCENTER_PORT is not a vCenter id
       EXPECT_EQ(c.vcenters[0].user, "envuser");
       EXPECT_EQ(c.vcenters[0].password.reveal(), "a=b=c");
       EXPECT_EQ(c.vcenters[0].port, 8443);
       EXPECT_TRUE(c.vcenters[0].insecure_flag);
       EXPECT_EQ(c.labels.region, "r");
       EXPECT_EQ(c.nodes.internal_network_subnet_cidrs, std::vector<IpNet>{Net("10.0.0.0/8")});
       EXPECT_EQ(c.nodes.external_vm_network_name, "ext");
     }},
    {"env per-vc",
     "[Global]\nuser = u\npassword = p\n[VirtualCenter \"v\"]\n",
     "global:\n  user: u\n  password: p\nvcenter:\n  v:\n    server: v\n",
     {{"VSPHERE_VCENTER_1", "lab"},
      {"VCENTER_1_SERVER", "10.2.2.2"},
      {"VCENTER_1_INSECURE", "1"},
      {"VCENTER_1_ROUNDTRIP", "7"},
      {"VCENTER_1_DATACENTERS", "d1,d2"},
      {"VCENTER_1_IP_FAMILY", "ipv4,ipv6"}},
     [](const Config& c) {
       const VirtualCenterConfig* vc = c.FindVCenter("10.2.2.2");
       ASSERT_NE(vc, nullptr);
       EXPECT_EQ(vc->label, "lab");
       EXPECT_TRUE(vc->insecure_flag);
       EXPECT_EQ(vc->soap_roundtrip_count, 7);
       EXPECT_EQ(vc->user, "u");  // inherited from Global
       EXPECT_EQ(vc->datacenters, (std::vector<std::string>{"d1", "d2"}));
       EXPECT_EQ(vc->ip_families.size(), 2u);
     }},
    {"env vcenter address only",
     "[Global]\nuser = u\npassword = p\n",
     "global:\n  user: u\n  password: p\n",
     {{"VSPHERE_VCENTER", "10.3.3.3"}},
     [](const Config& c) { EXPECT_EQ(c.vcenters.at(0).server, "10.3.3.3"); }},
    {"nsxt lb route",
     "[Global]\nuser = u\npassword = p\n[VirtualCenter \"v\"]\n"
     "[NSXT]\nuser = admin\npassword = np\nhost = nsx.local\ninsecure-flag = yes\n"
     "[LoadBalancer]\nsize = SMALL\nlb-service-id = lbs\ntcp-app-profile-name = tcp\n"
     "udp-app-profile-name = udp\nsnat-disabled = true\ntags = \"{\\\"owner\\\": \\\"me\\\"}\"\n"
     "[LoadBalancerClass \"default\"]\nip-pool-name = pool\n"
     "[Route]\nrouter-path = /infra/t1\n",
     "global:\n  user: u\n  password: p\nvcenter:\n  v:\n    server: v\n"
     "nsxt:\n  user: admin\n  password: np\n  host: nsx.local\n  insecureFlag: yes\n"
     "loadBalancer:\n  size: SMALL\n  lbServiceId: lbs\n  tcpAppProfileName: tcp\n"
     "  udpAppProfileName: udp\n  snatDisabled: true\n  tags:\n    owner: me\n"
     "loadBalancerClass:\n  default:\n    ipPoolName: pool\n"
     "route:\n  routerPath: /infra/t1\n",
     {},
     [](const Config& c) {
       ASSERT_TRUE(c.nsxt.has_value());
       EXPECT_TRUE(c.nsxt->insecure_flag);
       ASSERT_TRUE(c.load_balancer.has_value());
       EXPECT_EQ(c.load_balancer->tags.at("owner"), "me");
       EXPECT_TRUE(c.load_balancer->snat_disabled);
       EXPECT_EQ(c.load_balancer->classes.at("default").ip_pool_name, "pool");
       EXPECT_EQ(c.route->router_path, "/infra/t1");
     }},
    {"ini syntax: case, comments, implicit bool, escapes, repeats",
     "; comment\n# another\n[global]\nUSER = u # trailing comment\nPassword = \"a\\\"b\\\\c\"\n"
     "insecure-flag\n[virtualcenter \"v\"]\nport = 1\nport = 2\n[Global]\ndatacenters = x\n"
     "datacenters =\n",
     "global:\n  user: u\n  password: a\"b\\c\n  insecureFlag: on\nvcenter:\n  v:\n    server: v\n"
     "    port: 2\n",
     {},
     [](const Config& c) {
       EXPECT_EQ(c.vcenters[0].password.reveal(), "a\"b\\c");
       EXPECT_EQ(c.vcenters[0].port, 2);  // last value wins
       EXPECT_TRUE(c.vcenters[0].insecure_flag);
       EXPECT_TRUE(c.global.datacenters.empty());  // blank value resets
     }},
    {"zero soap count means default",
     "[Global]\nuser = u\npassword = p\nsoap-roundtrip-count = 0\n[VirtualCenter \"v\"]\n",
     "global:\n  user: u\n  password: p\n  soapRoundtripCount: 0\nvcenter:\n  v:\n    server: v\n",
     {},
     [](const Config& c) { EXPECT_EQ(c.vcenters[0].soap_roundtrip_count, 3); }},
    {"datacenter moid and path",
     "[Global]\nuser = u\npassword = p\ndatacenters = \"Datacenter:datacenter-3,/dc/path\"\n"
     "[VirtualCenter \"v\"]\n",
     "global:\n  user: u\n  password: p\n  datacenters: \"Datacenter:datacenter-3,/dc/path\"\n"
     "vcenter:\n  v:\n    server: v\n",
     {},
     [](const Config& c) {
       EXPECT_EQ(c.vcenters[0].datacenters,
                 (std::vector<std::string>{"Datacenter:datacenter-3", "/dc/path"}));
     }},
};

class PairTest : public ::testing::TestWithParam<PairCase> {};

TEST_P(PairTest, BothFormatsGiveTheSameConfig) {
  const PairCase& c = GetParam();
  auto ini = ParseConfig(c.ini, c.env);
  ASSERT_TRUE(ini.ok()) << c.name << ": " << ini.status();
  auto yaml = ParseConfig(c.yaml, c.env);
  ASSERT_TRUE(yaml.ok()) << c.name << ": " << yaml.status();
  EXPECT_EQ(ini->format, ConfigFormat::kIni);
  EXPECT_EQ(yaml->format, ConfigFormat::kYaml);
  EXPECT_EQ(ini->config, yaml->config) << c.name << "\nINI:\n"
                                       << ini->config.ToString() << "YAML:\n"
                                       << yaml->config.ToString();
  EXPECT_TRUE(ini->warnings.empty()) << absl::StrJoin(ini->warnings, "\n");
  EXPECT_TRUE(yaml->warnings.empty()) << absl::StrJoin(yaml->warnings, "\n");
  c.check(ini->config);
}

INSTANTIATE_TEST_SUITE_P(Corpus, PairTest, ::testing::ValuesIn(kPairs));

struct ErrorCase {
  const char* name;
  const char* text;
  Environment env;
  const char* message;
};

const ErrorCase kErrors[] = {
    {"empty", "  \n", {}, "vsphere.conf: the config file is empty"},
    {"no vcenter ini",
     "[Global]\nuser = u\npassword = p\n",
     {},
     "no vCenter configured: add a [VirtualCenter \"<address>\"] section"},
    {"no vcenter yaml", "global:\n  user: u\n", {}, "no vCenter configured"},
    {"yaml server required",
     "global:\n  user: u\n  password: p\nvcenter:\n  lab: {}\n",
     {},
     "vsphere.conf: vcenter.lab (line 5, column 3): server is required"},
    {"missing password",
     "[Global]\nuser = u\n[VirtualCenter \"v\"]\n",
     {},
     "vsphere.conf:3: [VirtualCenter \"v\"]: no credentials for vCenter \"v\": password is "
     "missing"},
    {"missing user", "[VirtualCenter \"v\"]\npassword = p\n", {}, "user is missing"},
    {"bad port ini",
     "[Global]\nuser = u\npassword = p\nport = http\n[VirtualCenter \"v\"]\n",
     {},
     "vsphere.conf:4: [Global] port: expected an integer from 1 to 65535, got \"http\""},
    {"bad port yaml",
     "global:\n  port: 70000\n",
     {},
     "vsphere.conf: global.port (line 2, column 3): expected an integer from 1 to 65535, got "
     "\"70000\""},
    {"bad bool",
     "[Global]\ninsecure-flag = maybe\n",
     {},
     "vsphere.conf:2: [Global] insecure-flag: expected a boolean (true/false, 1/0, yes/no, "
     "on/off), got \"maybe\""},
    {"bad ip family",
     "[Global]\nuser = u\npassword = p\nip-family = ipv5\n[VirtualCenter \"v\"]\n",
     {},
     "expected ipv4, ipv6 or an ordered pair such as \"ipv4,ipv6\", got \"ipv5\""},
    {"duplicate ip family", "[Global]\nip-family = ipv4,IPv4\n", {}, "is listed twice"},
    {"bad cidr",
     "[Global]\nuser = u\npassword = p\n[VirtualCenter \"v\"]\n[Nodes]\n"
     "internal-network-subnet-cidr = 10.0.0.0/33\n",
     {},
     "vsphere.conf:6: [Nodes] internal-network-subnet-cidr: expected CIDRs like 10.0.0.0/8 or "
     "fd00::/64, got \"10.0.0.0/33\""},
    {"secret name without namespace",
     "[Global]\nsecret-name = s\n[VirtualCenter \"v\"]\n",
     {},
     "secret-name and secret-namespace must be set together"},
    {"secret and directory",
     "[Global]\nsecret-name = s\nsecret-namespace = n\n"
     "secrets-directory = /d\n",
     {},
     "set either secret-name/secret-namespace or secrets-directory, not both"},
    {"vc secret half",
     "[Global]\nuser = u\npassword = p\n[VirtualCenter \"v\"]\nsecret-name = x\n",
     {},
     "[VirtualCenter \"v\"]: secret-name and secret-namespace must be set together"},
    {"duplicate server",
     "global:\n  user: u\n  password: p\nvcenter:\n  a:\n    server: s\n"
     "  b:\n    server: s\n",
     {},
     "vCenter s is configured twice (\"a\" and \"b\")"},
    {"key before section",
     "user = u\n[Global]\n",
     {},
     "vsphere.conf:1: key \"user\" appears "
     "before any section header"},
    {"unterminated quote",
     "[Global]\nuser = \"abc\n",
     {},
     "vsphere.conf:2: unterminated quoted value"},
    {"bad escape", "[Global]\nuser = a\\qb\n", {}, "vsphere.conf:2: invalid escape \\q in value"},
    {"missing equals", "[Global]\nuser u\n", {}, "vsphere.conf:2: expected '=' after key \"user\""},
    {"unclosed header",
     "[Global\n",
     {},
     "vsphere.conf:1: expected ']' to close the section header"},
    {"vc without subsection",
     "[VirtualCenter]\n",
     {},
     "section [VirtualCenter] needs a vCenter address"},
    {"global with subsection",
     "[Global \"x\"]\n",
     {},
     "section [Global \"x\"] takes no subsection"},
    {"implicit non-bool",
     "[Global]\nuser\n[VirtualCenter \"v\"]\n",
     {},
     "vsphere.conf:2: [Global] user: missing value"},
    {"yaml syntax", "global:\n  user: [unclosed\n", {}, "invalid YAML"},
    {"yaml list for scalar",
     "global:\n  user: [a, b]\n",
     {},
     "global.user (line 2, column 3): expected a single value, got a list or mapping"},
    {"yaml duplicate key", "global:\n  user: a\n  user: b\n", {}, "duplicate key \"user\""},
    {"yaml top not map", "- a\n- b\n", {}, "expected a YAML mapping at the top level"},
    {"env bad bool",
     "[Global]\nuser = u\npassword = p\n[VirtualCenter \"v\"]\n",
     {{"VSPHERE_INSECURE", "sure"}},
     "environment VSPHERE_INSECURE: expected a boolean"},
    {"env bad roundtrip",
     "[Global]\nuser = u\npassword = p\n[VirtualCenter \"v\"]\n",
     {{"VSPHERE_VCENTER_1", "x"}, {"VCENTER_1_ROUNDTRIP", "-1"}},
     "environment VCENTER_1_ROUNDTRIP: expected an integer from 0 to 1000, got \"-1\""},
    {"nsxt no auth",
     "[Global]\nuser = u\npassword = p\n[VirtualCenter \"v\"]\n[NSXT]\nhost = h\n",
     {},
     "one of user, vmc-access-token, client-auth-cert-file or secret-name is required"},
    {"nsxt no host",
     "global:\n  server: s\n  user: u\n  password: p\nnsxt:\n  user: u\n  password: p\n",
     {},
     "nsxt (line 6, column 3): host is required"},
    {"nsxt token without host",
     "[Global]\nserver = s\nuser = u\npassword = p\n[NSXT]\nvmc-access-token = t\n",
     {},
     "vmc-auth-host is required with vmc-access-token"},
    {"lb bad size",
     "global:\n  user: u\n  password: p\nvcenter:\n  v:\n    server: v\n"
     "loadBalancer:\n  size: HUGE\n  lbServiceId: x\n  tcpAppProfileName: t\n"
     "  udpAppProfileName: u\n  ipPoolName: p\n",
     {},
     "size must be one of SMALL, MEDIUM, LARGE, XLARGE, got \"HUGE\""},
    {"lb no service",
     "[Global]\nuser = u\npassword = p\n[VirtualCenter \"v\"]\n[LoadBalancer]\n"
     "size = SMALL\n",
     {},
     "either lb-service-id or tier1-gateway-path is required"},
    {"lb bad tags",
     "[Global]\nuser = u\npassword = p\n[VirtualCenter \"v\"]\n[LoadBalancer]\n"
     "tags = notjson\n",
     {},
     "expected a JSON object of strings for tags"},
    {"route no path",
     "[Global]\nserver = s\nuser = u\npassword = p\n[Route]\n",
     {},
     "vsphere.conf:5: [Route]: router-path is required"},
    {"route without nsxt",
     "[Global]\nuser = u\npassword = p\n[VirtualCenter \"v\"]\n[Route]\n"
     "router-path = /x\n",
     {},
     "routes need the NSX-T section"},
    {"server with space",
     "[Global]\nuser = u\npassword = p\n[VirtualCenter \"a b\"]\n",
     {},
     "server \"a b\" contains whitespace"},
    // The CSI driver's keys (csi-vsphere.conf), checked as the reference checks them.
    {"csi categories with zone",
     "[Global]\nuser = u\npassword = p\n[VirtualCenter \"v\"]\n"
     "[Labels]\nzone = z\nregion = r\ntopology-categories = a,b\n",
     {},
     "vsphere.conf:8: [Labels] topology-categories: zone and region must not be set when "
     "topology-categories is set"},
    {"csi six categories",
     "[Global]\nuser = u\npassword = p\n[VirtualCenter \"v\"]\n[Labels]\n"
     "topology-categories = a,b,c,d,e,f\n",
     {},
     "at most 5 topology categories are allowed, got 6"},
    {"csi long cluster id",
     "[Global]\nuser = u\npassword = p\ncluster-id = "
     "0123456789012345678901234567890123456789012345678901234567890123456789\n"
     "[VirtualCenter \"v\"]\n",
     {},
     "vsphere.conf:4: [Global] cluster-id: must not exceed 64 characters"},
    {"csi bad query limit",
     "[Global]\nuser = u\npassword = p\nquery-limit = many\n"
     "[VirtualCenter \"v\"]\n",
     {},
     "[Global] query-limit: expected an integer"},
    {"csi category without label",
     "[Global]\nuser = u\npassword = p\n[VirtualCenter \"v\"]\n"
     "[TopologyCategory \"k8s-zone\"]\n",
     {},
     "[TopologyCategory \"k8s-zone\"]: label is required"},
};

class ErrorTest : public ::testing::TestWithParam<ErrorCase> {};

TEST_P(ErrorTest, FailsWithMessage) {
  const ErrorCase& c = GetParam();
  auto r = ParseConfig(c.text, c.env);
  ASSERT_FALSE(r.ok()) << c.name;
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(r.status().message()), HasSubstr(c.message)) << c.name;
}

INSTANTIATE_TEST_SUITE_P(Corpus, ErrorTest, ::testing::ValuesIn(kErrors));

TEST(ConfigTest, CsiDriverConfigKeys) {
  // A csi-vsphere.conf as the reference's docs show it, plus the CSI-only sections.
  auto r = ParseConfig(
      "[Global]\ncluster-id = \"demo-cluster\"\ncluster-distribution = \"OpenShift\"\n"
      "query-limit = 500\ncsi-fetch-preferred-datastores-intervalinmin = 10\n"
      "csi-auth-check-intervalinmin = 7\n"
      "[VirtualCenter \"10.0.0.1\"]\nuser = u\npassword = p\ndatacenters = \"DC0, DC1\"\n"
      "migration-datastore-url = ds:///vmfs/volumes/a/\n"
      "[Labels]\ntopology-categories = \"k8s-region, k8s-zone\"\n"
      "[TopologyCategory \"k8s-zone\"]\nlabel = \"topology.kubernetes.io/zone\"\n"
      "[Snapshot]\nglobal-max-snapshots-per-block-volume = 5\n",
      {});
  ASSERT_TRUE(r.ok()) << r.status();
  const Config& c = r->config;
  EXPECT_EQ(c.global.cluster_id, "demo-cluster");
  EXPECT_EQ(c.global.cluster_distribution, "OpenShift");
  EXPECT_EQ(c.global.query_limit, 500);
  EXPECT_EQ(c.global.list_volume_threshold, kDefaultListVolumeThreshold);
  EXPECT_EQ(c.global.csi_fetch_preferred_datastores_interval_minutes, 10);
  EXPECT_EQ(c.global.csi_auth_check_interval_minutes, 7);
  ASSERT_EQ(c.vcenters.size(), 1u);
  EXPECT_EQ(c.vcenters[0].migration_datastore_url, "ds:///vmfs/volumes/a/");
  EXPECT_EQ(c.labels.topology_categories, (std::vector<std::string>{"k8s-region", "k8s-zone"}));
  EXPECT_EQ(c.labels.category_labels.at("k8s-zone"), "topology.kubernetes.io/zone");
  EXPECT_EQ(c.snapshot, (SnapshotConfig{5, 0, 0}));
  EXPECT_TRUE(r->warnings.empty()) << absl::StrJoin(r->warnings, "\n");
  // [Snapshot] is in effect now: no "accepted, no effect" notice for it.
  EXPECT_THAT(absl::StrJoin(r->notices, "\n"), Not(HasSubstr("[Snapshot]")));
}

TEST(ConfigTest, SnapshotLimitsDefaultsEnvironmentAndErrors) {
  const std::string base = "[VirtualCenter \"v\"]\nuser = u\npassword = p\n";
  auto plain = ParseConfig(base, {});
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_EQ(plain->config.snapshot, (SnapshotConfig{3, 0, 0}));  // the reference's default

  auto granular = ParseConfig(base +
                                  "[Snapshot]\nglobal-max-snapshots-per-block-volume = 0\n"
                                  "granular-max-snapshots-per-block-volume-vsan = 7\n"
                                  "granular-max-snapshots-per-block-volume-vvol = 9\n",
                              {});
  ASSERT_TRUE(granular.ok()) << granular.status();
  EXPECT_EQ(granular->config.snapshot, (SnapshotConfig{3, 7, 9}));  // 0 is the default

  auto env = ParseConfig(base + "[Snapshot]\nglobal-max-snapshots-per-block-volume = 5\n",
                         {{"GLOBAL_MAX_SNAPSHOTS_PER_BLOCK_VOLUME", "12"},
                          {"GRANULAR_MAX_SNAPSHOTS_PER_BLOCK_VOLUME_VSAN", "4"}});
  ASSERT_TRUE(env.ok()) << env.status();
  EXPECT_EQ(env->config.snapshot, (SnapshotConfig{12, 4, 0}));

  auto bad = ParseConfig(base + "[Snapshot]\nglobal-max-snapshots-per-block-volume = -1\n", {});
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("global-max-snapshots-per-block-volume"));
  EXPECT_THAT(bad.status().message(), HasSubstr("expected an integer"));
}

TEST(ConfigTest, UnknownKeysWarnWithTheRightSpelling) {
  auto yaml = ParseConfig(
      "global:\n  user: u\n  password: p\n  insecure-flag: true\nvcenter:\n  v:\n    server: v\n"
      "    secrets-directory: /x\nGlobal:\n  a: b\n",
      {});
  ASSERT_TRUE(yaml.ok()) << yaml.status();
  EXPECT_THAT(absl::StrJoin(yaml->warnings, "\n"),
              HasSubstr("global.insecure-flag (line 4, column 3): unknown key \"insecure-flag\" "
                        "ignored (did you mean \"insecureFlag\"?)"));
  EXPECT_THAT(absl::StrJoin(yaml->warnings, "\n"), HasSubstr("(did you mean \"global\"?)"));
  EXPECT_THAT(absl::StrJoin(yaml->warnings, "\n"), HasSubstr("unknown key \"secrets-directory\""));

  auto ini = ParseConfig(
      "[Global]\nuser = u\npassword = p\ninsecureFlag = true\n[VirtualCenter \"v\"]\n"
      "[Network]\npublic-network = x\n[Bogus]\n",
      {});
  ASSERT_TRUE(ini.ok()) << ini.status();
  std::string w = absl::StrJoin(ini->warnings, "\n");
  EXPECT_THAT(w, HasSubstr("vsphere.conf:4: unknown key \"insecureFlag\" in [Global] ignored "
                           "(did you mean \"insecure-flag\"?)"));
  EXPECT_THAT(w, HasSubstr("[Network]: section is deprecated"));
  EXPECT_THAT(w, HasSubstr("[Bogus]: unknown section ignored"));
  EXPECT_FALSE(ini->config.vcenters[0].insecure_flag);

  auto strict =
      ParseConfig("[Global]\nuser = u\npassword = p\ninsecureFlag = true\n[VirtualCenter \"v\"]\n",
                  {}, ParseOptions{.file_name = "/etc/cloud/vsphere.conf", .strict = true});
  ASSERT_FALSE(strict.ok());
  EXPECT_THAT(std::string(strict.status().message()),
              HasSubstr("strict config: /etc/cloud/vsphere.conf:4: unknown key \"insecureFlag\""));
}

TEST(ConfigTest, CredentialsOptionalForTheCsiNodePlugin) {
  const std::string conf =
      "[Global]\ncluster-id = \"c1\"\n[VirtualCenter \"vc.example.com\"]\n"
      "[Labels]\ntopology-categories = \"k8s-region,k8s-zone\"\n";
  auto required = ParseConfig(conf, {});
  ASSERT_FALSE(required.ok());
  EXPECT_THAT(std::string(required.status().message()), HasSubstr("no credentials for vCenter"));
  auto optional = ParseConfig(conf, {}, ParseOptions{.credentials_required = false});
  ASSERT_TRUE(optional.ok()) << optional.status();
  EXPECT_EQ(optional->config.vcenters[0].server, "vc.example.com");
  EXPECT_TRUE(optional->config.vcenters[0].user.empty());
  EXPECT_EQ(optional->config.labels.topology_categories,
            (std::vector<std::string>{"k8s-region", "k8s-zone"}));
}

TEST(ConfigTest, InactiveSectionsAndDeprecationAreNoticed) {
  auto r = ParseConfig(
      "[Global]\nuser = u\npassword = p\n[VirtualCenter \"v\"]\n[Route]\nrouter-path = /x\n"
      "[NSXT]\nhost = h\nsecret-name = s\nsecret-namespace = n\n",
      {}, ParseOptions{.strict = true});
  ASSERT_TRUE(r.ok()) << r.status();
  std::string n = absl::StrJoin(r->notices, "\n");
  EXPECT_THAT(n, HasSubstr("INI config format is deprecated"));
  EXPECT_THAT(n, HasSubstr("NSX-T settings are used by the route controller and the NSX-T load"));
  EXPECT_THAT(n, HasSubstr("route settings: static routes on /x when --allocate-node-cidrs"));
}

TEST(ConfigTest, SecretsNeverPrinted) {
  const std::string secret = "S3cr3t-Value";
  auto r =
      ParseConfig("[Global]\nuser = u\npassword = " + secret +
                      "\n[VirtualCenter \"v\"]\n[NSXT]\nhost = h\nvmc-access-token = " + secret +
                      "\nvmc-auth-host = a\nuser = x\npassword = " + secret + "\n",
                  {});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT(r->config.ToString(), Not(HasSubstr(secret)));
  EXPECT_THAT(r->config.ToString(), HasSubstr("<redacted>"));
  // Errors about a section holding a password do not echo it either.
  auto bad = ParseConfig("[Global]\npassword = " + secret + "\nport = x\n", {});
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(std::string(bad.status().message()), Not(HasSubstr(secret)));
  auto yaml = ParseConfig("global:\n  password: [" + secret + "]\n", {});
  ASSERT_FALSE(yaml.ok());
  EXPECT_THAT(std::string(yaml.status().message()), Not(HasSubstr(secret)));
}

TEST(ConfigTest, YamlFirstDetection) {
  // A YAML mapping is YAML even if a value looks like an INI header.
  auto r = ParseConfig("global:\n  user: \"[x]\"\n  password: p\n  server: s\n", {});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->format, ConfigFormat::kYaml);
  // Continuation lines and CRLF in INI.
  auto ini = ParseConfig("[Global]\r\nuser = a\\\nb\r\npassword = p\r\nserver = s\r\n", {});
  ASSERT_TRUE(ini.ok()) << ini.status();
  EXPECT_EQ(ini->config.vcenters[0].user, "ab");
}

}  // namespace
}  // namespace ccm::cloud
