#include "diagnose/vcenter_checks.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>

namespace ccm::diagnose::vcenter_checks_test {
namespace {

using ::testing::HasSubstr;

cloud::VirtualCenterConfig Vc() {
  cloud::VirtualCenterConfig vc;
  vc.label = vc.server = "vc.example.com";
  vc.datacenters = {"dc1"};
  return vc;
}

// Every step answered, as a healthy vCenter does.
VcenterFacts Healthy() {
  VcenterFacts f;
  f.dns = f.tcp = f.tls = f.credentials = f.login = f.datacenters = f.sessions = absl::OkStatus();
  f.addresses = {"10.0.0.5"};
  f.server_thumbprint = "AA:BB";
  f.user = "k8s@vsphere.local";
  f.full_name = "VMware vCenter Server 7.0.3";
  f.api_version = "7.0.3.0";
  f.datacenter_paths = {"/dc1", "/dc2"};
  f.datacenter_matches = {{"dc1", absl::OkStatus(), "/dc1"}};
  f.user_sessions = 1;
  f.all_sessions = 3;
  return f;
}

TEST(VcenterChecksTest, EachFailedStepNamesItsCauseAndFix) {
  struct Case {
    std::string name;
    std::function<void(cloud::VirtualCenterConfig&, VcenterFacts&)> change;
    Component component;
    std::vector<std::string> want;
    int errors, warnings;
  };
  const std::vector<Case> cases = {
      {"healthy",
       [](auto&, auto&) {},
       Component::kCsi,
       {"resolves to 10.0.0.5", "TCP connection to vc.example.com:443",
        "TLS certificate verified (thumbprint AA:BB)", "logged in as k8s@vsphere.local",
        "vSphere API 7.0.3.0", "datacenter dc1 found (/dc1)", "1 session of k8s@vsphere.local"},
       0,
       0},
      {"name does not resolve",
       [](auto&, auto& f) {
         f = {};
         f.dns = absl::NotFoundError("Name or service not known");
       },
       Component::kCpi,
       {"cannot resolve vc.example.com: Name or service not known", "DNS"},
       1,
       0},
      {"port closed",
       [](auto&, auto& f) {
         f.tcp = absl::UnavailableError("Connection refused");
         f.tls.reset();
       },
       Component::kCpi,
       {"no TCP connection to vc.example.com:443: Connection refused"},
       1,
       0},
      {"pinned thumbprint differs",
       [](auto& vc, auto& f) {
         vc.thumbprint = "11:22";
         f.tls = absl::FailedPreconditionError("SSL peer certificate was not OK");
       },
       Component::kCpi,
       {"thumbprint AA:BB, the config pins 11:22", "set thumbprint = AA:BB"},
       1,
       0},
      {"CA does not sign the certificate",
       [](auto& vc, auto& f) {
         vc.ca_file = "/etc/ca.pem";
         f.tls = absl::FailedPreconditionError("unable to get local issuer certificate");
       },
       Component::kCpi,
       {"(thumbprint AA:BB) is not trusted by the CAs in /etc/ca.pem",
        "https://vc.example.com/certs/download.zip", "or pin thumbprint = AA:BB"},
       1,
       0},
      {"insecure: the thumbprint to pin",
       [](auto& vc, auto&) { vc.insecure_flag = true; },
       Component::kCpi,
       {"TLS without verification", "fix: pin it: thumbprint = AA:BB"},
       0,
       1},
      {"Secret missing",
       [](auto& vc, auto& f) {
         vc.credential_source = cloud::CredentialSourceKind::kGlobalSecret;
         vc.secret_namespace = "kube-system";
         vc.secret_name = "vsphere-creds";
         f.credentials = absl::NotFoundError("secret kube-system/vsphere-creds not found");
       },
       Component::kCsi,
       {"no credentials: secret kube-system/vsphere-creds not found",
        "keys vc.example.com.username and vc.example.com.password"},
       1,
       0},
      {"wrong password",
       [](auto&, auto& f) {
         f.login = absl::UnauthenticatedError("InvalidLogin: Cannot complete login");
       },
       Component::kCpi,
       {"login as k8s@vsphere.local failed: InvalidLogin", "password in user and password"},
       1,
       0},
      {"old vCenter: CSI refuses",
       [](auto&, auto& f) { f.api_version = "6.5"; },
       Component::kCsi,
       {"vSphere API 6.5 is older than 6.7U3: it has no Cloud Native Storage"},
       1,
       0},
      {"old vCenter: the CPI warns",
       [](auto&, auto& f) { f.api_version = "6.7.1"; },
       Component::kCpi,
       {"older than 6.7U3, the oldest supported"},
       0,
       1},
      {"unknown datacenter",
       [](auto&, auto& f) {
         f.datacenter_matches = {{"dc9", absl::NotFoundError("no datacenter dc9"), ""}};
       },
       Component::kCpi,
       {"datacenter dc9: no datacenter dc9; the user sees /dc1, /dc2"},
       1,
       0},
      {"no datacenter visible",
       [](auto&, auto& f) {
         f.datacenter_paths.clear();
         f.datacenter_matches.clear();
       },
       Component::kCpi,
       {"the user sees no datacenter"},
       1,
       0},
      {"leaked sessions",
       [](auto&, auto& f) { f.user_sessions = 400; },
       Component::kCpi,
       {"400 sessions of k8s@vsphere.local", "does not log out"},
       0,
       1},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    cloud::VirtualCenterConfig vc = Vc();
    VcenterFacts f = Healthy();
    c.change(vc, f);
    Report r;
    JudgeVcenter(vc, f, c.component, r);
    const std::string text = r.Text();
    for (const std::string& w : c.want) EXPECT_THAT(text, HasSubstr(w));
    EXPECT_EQ(r.Count(Level::kError), c.errors) << text;
    EXPECT_EQ(r.Count(Level::kWarning), c.warnings) << text;
  }
}

TEST(VcenterChecksTest, VersionAtLeast) {
  EXPECT_TRUE(VersionAtLeast("7.0.3.0", "6.7.3"));
  EXPECT_TRUE(VersionAtLeast("6.7.3", "6.7.3"));
  EXPECT_TRUE(VersionAtLeast("8.0", "6.7.3"));
  EXPECT_FALSE(VersionAtLeast("6.7", "6.7.3"));
  EXPECT_FALSE(VersionAtLeast("6.5", "6.7.3"));
  EXPECT_FALSE(VersionAtLeast("", "6.7.3"));
  EXPECT_FALSE(VersionAtLeast("seven", "6.7.3"));
}

}  // namespace
}  // namespace ccm::diagnose::vcenter_checks_test
