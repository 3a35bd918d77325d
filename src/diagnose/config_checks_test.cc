#include "diagnose/config_checks.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace ccm::diagnose::config_checks_test {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

absl::StatusOr<cloud::ParseResult> Parse(const std::string& text) {
  cloud::ParseOptions o;
  o.file_name = "vsphere.conf";
  return cloud::ParseConfig(text, {}, o);
}

TEST(ConfigChecksTest, EachMistakeHasItsLine) {
  struct Case {
    std::string name;
    std::string config;
    std::vector<std::string> want;  // in the report's text, in this order
    bool error;
  };
  const std::vector<Case> cases = {
      {"healthy, inline credentials, a CA",
       "[Global]\ncluster-id = \"c1\"\n[VirtualCenter \"vc.example.com\"]\nuser = \"u\"\n"
       "password = \"p4ss-w0rd\"\ndatacenters = \"dc1\"\nca-file = \"/etc/ca.pem\"\n",
       {"ok      config", "1 vCenter, cluster-id c1",
        "vc.example.com:443, dc1, credentials inline user u, certificate checked against "
        "/etc/ca.pem",
        "0 errors, 0 warnings"},
       false},
      {"an unknown key: a warning",
       "[Global]\nuser = \"u\"\npassword = \"p\"\ncolour = \"blue\"\n[VirtualCenter \"vc1\"]\n",
       {"warning config", "colour", "fix: remove or correct the key"},
       false},
      {"insecure-flag: a warning with the fix",
       "[Global]\nuser = \"u\"\npassword = \"p\"\ninsecure-flag = \"true\"\n"
       "[VirtualCenter \"vc1\"]\n",
       {"warning config vc1", "certificate NOT checked", "fix: set ca-file or thumbprint"},
       false},
      {"credentials from a Secret",
       "[Global]\nsecret-name = \"vsphere-creds\"\nsecret-namespace = \"kube-system\"\n"
       "[VirtualCenter \"vc1\"]\n",
       {"every datacenter", "credentials Secret kube-system/vsphere-creds"},
       false},
      {"a broken file: the parser's line",
       "[Global]\nport = \"not-a-port\"\n[VirtualCenter \"vc1\"]\n",
       {"error   config", "vsphere.conf:2", "fix: correct vsphere.conf"},
       true},
  };
  for (const Case& c : cases) {
    Report r;
    CheckConfig("vsphere.conf", Parse(c.config), r);
    const std::string text = r.Text();
    size_t at = 0;
    for (const std::string& w : c.want) {
      const size_t found = text.find(w, at);
      EXPECT_NE(found, std::string::npos) << c.name << ": no \"" << w << "\" in\n" << text;
      if (found != std::string::npos) at = found;
    }
    EXPECT_EQ(r.HasErrors(), c.error) << c.name << "\n" << text;
    EXPECT_THAT(text, Not(HasSubstr("p4ss-w0rd"))) << c.name;  // secrets never printed
  }
  Report missing;
  CheckConfig("/nowhere.conf", absl::NotFoundError("--cloud-config /nowhere.conf: cannot open"),
              missing);
  EXPECT_THAT(missing.Text(), HasSubstr("error   config  --cloud-config /nowhere.conf"));
}

}  // namespace
}  // namespace ccm::diagnose::config_checks_test
