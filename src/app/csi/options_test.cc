#include "app/csi/options.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace ccm::app {
namespace {

using ::testing::HasSubstr;
using Env = std::map<std::string, std::string>;

const Env kNode = {{"X_CSI_MODE", "node"}, {"CSI_ENDPOINT", "unix:///csi/csi.sock"}};
const Env kController = {{"X_CSI_MODE", "controller"},
                         {"CSI_ENDPOINT", "unix:///var/lib/csi/sockets/pluginproxy/csi.sock"}};

Env With(Env env, const std::string& k, const std::string& v) {
  env[k] = v;
  return env;
}
Env Without(Env env, const std::string& k) {
  env.erase(k);
  return env;
}

struct Case {
  std::string name;
  std::vector<std::string> flags;
  Env env;
  std::function<void(const CsiOptions&)> check;  // when it parses
  std::string error;                             // substring, when it must fail
};

class CsiOptionsTest : public ::testing::TestWithParam<Case> {};

TEST_P(CsiOptionsTest, Parses) {
  const Case& c = GetParam();
  std::vector<std::string> args = {"vsphere-csi-driver"};
  args.insert(args.end(), c.flags.begin(), c.flags.end());
  absl::StatusOr<CsiOptions> o = ParseCsiOptions(args, c.env);
  if (!c.error.empty()) {
    ASSERT_FALSE(o.ok()) << "parsed, expected an error containing: " << c.error;
    EXPECT_EQ(o.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(o.status().message()), HasSubstr(c.error));
    return;
  }
  ASSERT_TRUE(o.ok()) << o.status();
  c.check(*o);
}

INSTANTIATE_TEST_SUITE_P(
    Table, CsiOptionsTest,
    ::testing::Values(
        Case{"node_defaults",
             {},
             kNode,
             [](const CsiOptions& o) {
               EXPECT_EQ(o.mode, CsiMode::kNode);
               EXPECT_EQ(o.endpoint, "unix:///csi/csi.sock");
               EXPECT_EQ(o.config_path, "/etc/cloud/csi-vsphere.conf");
               EXPECT_EQ(o.metrics_port, 2112);
               EXPECT_EQ(o.verbosity, 0);
               EXPECT_EQ(o.shutdown_grace, absl::Seconds(10));
               EXPECT_EQ(o.vcenter_hang_timeout, absl::Seconds(30));
               EXPECT_TRUE(o.warnings.empty());
             }},
        Case{"controller_with_config_env",
             {},
             With(kController, "VSPHERE_CSI_CONFIG", "/etc/cloud/other.conf"),
             [](const CsiOptions& o) {
               EXPECT_EQ(o.mode, CsiMode::kController);
               EXPECT_EQ(o.config_path, "/etc/cloud/other.conf");
             }},
        Case{"mode_is_case_insensitive",
             {},
             With(kNode, "X_CSI_MODE", "Controller"),
             [](const CsiOptions& o) { EXPECT_EQ(o.mode, CsiMode::kController); }},
        Case{"reference_manifest_flags",
             {"--fss-name=internal-feature-states.csi.vsphere.vmware.com",
              "--fss-namespace=vmware-system-csi", "--supervisor-fss-name", "sv-fss",
              "-supervisor-fss-namespace=sv-ns"},
             kController,
             [](const CsiOptions& o) {
               EXPECT_EQ(o.fss_name, "internal-feature-states.csi.vsphere.vmware.com");
               EXPECT_EQ(o.fss_namespace, "vmware-system-csi");
               EXPECT_EQ(o.supervisor_fss_name, "sv-fss");
               EXPECT_EQ(o.supervisor_fss_namespace, "sv-ns");
               EXPECT_TRUE(o.warnings.empty());
             }},
        Case{"endpoint_flag_overrides_env",
             {"--endpoint=/tmp/x.sock"},
             kNode,
             [](const CsiOptions& o) { EXPECT_EQ(o.endpoint, "/tmp/x.sock"); }},
        Case{"endpoint_flag_alone",
             {"--endpoint", "unix:///a.sock"},
             Without(kNode, "CSI_ENDPOINT"),
             [](const CsiOptions& o) { EXPECT_EQ(o.endpoint, "unix:///a.sock"); }},
        Case{"verbosity_flag_forms",
             {"-v=5"},
             kNode,
             [](const CsiOptions& o) { EXPECT_EQ(o.verbosity, 5); }},
        Case{"verbosity_long",
             {"--v", "3"},
             kNode,
             [](const CsiOptions& o) { EXPECT_EQ(o.verbosity, 3); }},
        Case{"logger_level_development",
             {},
             With(kNode, "LOGGER_LEVEL", "DEVELOPMENT"),
             [](const CsiOptions& o) { EXPECT_EQ(o.verbosity, 4); }},
        Case{"explicit_v_beats_logger_level",
             {"--v=1"},
             With(kNode, "LOGGER_LEVEL", "DEVELOPMENT"),
             [](const CsiOptions& o) { EXPECT_EQ(o.verbosity, 1); }},
        Case{"logger_level_production",
             {},
             With(kNode, "LOGGER_LEVEL", "PRODUCTION"),
             [](const CsiOptions& o) { EXPECT_EQ(o.verbosity, 0); }},
        Case{"metrics_port",
             {"--metrics-port=0", "--metrics-bind-address=127.0.0.1"},
             kController,
             [](const CsiOptions& o) {
               EXPECT_EQ(o.metrics_port, 0);
               EXPECT_EQ(o.metrics_bind_address, "127.0.0.1");
             }},
        Case{"shutdown_grace",
             {"--shutdown-grace-period=30s"},
             kNode,
             [](const CsiOptions& o) { EXPECT_EQ(o.shutdown_grace, absl::Seconds(30)); }},
        Case{"unknown_flag_warns",
             {"--no-such-flag=1", "--use-gocsi=false"},
             kNode,
             [](const CsiOptions& o) {
               ASSERT_EQ(o.warnings.size(), 2u);
               EXPECT_THAT(o.warnings[0], HasSubstr("no-such-flag"));
               EXPECT_THAT(o.warnings[1], HasSubstr("use-gocsi"));
             }},
        Case{"vanilla_flavor",
             {},
             With(kNode, "CLUSTER_FLAVOR", "VANILLA"),
             [](const CsiOptions& o) { EXPECT_EQ(o.mode, CsiMode::kNode); }},
        Case{"version_needs_no_env",
             {"--version"},
             {},
             [](const CsiOptions& o) { EXPECT_TRUE(o.version); }},
        Case{"help_needs_no_env", {"-h"}, {}, [](const CsiOptions& o) { EXPECT_TRUE(o.help); }},
        // Errors.
        Case{"mode_missing",
             {},
             Without(kNode, "X_CSI_MODE"),
             nullptr,
             "invalid value \"\" specified for X_CSI_MODE, expecting 'node' or 'controller'"},
        Case{"mode_bad",
             {},
             With(kNode, "X_CSI_MODE", "both"),
             nullptr,
             "invalid value \"both\" specified for X_CSI_MODE"},
        Case{"endpoint_missing",
             {},
             Without(kNode, "CSI_ENDPOINT"),
             nullptr,
             "CSI endpoint cannot be empty: set CSI_ENDPOINT"},
        Case{"endpoint_tcp",
             {},
             With(kNode, "CSI_ENDPOINT", "tcp://0.0.0.0:10000"),
             nullptr,
             "only unix sockets are supported"},
        Case{"bad_verbosity", {"--v=loud"}, kNode, nullptr, "--v"},
        Case{"bad_metrics_port", {"--metrics-port=70000"}, kController, nullptr, "metrics-port"},
        Case{"hang_timeout",
             {"--vcenter-hang-timeout=45s"},
             kController,
             [](const CsiOptions& o) { EXPECT_EQ(o.vcenter_hang_timeout, absl::Seconds(45)); }},
        Case{"zero_hang_timeout",
             {"--vcenter-hang-timeout=0s"},
             kController,
             nullptr,
             "--vcenter-hang-timeout must be above 0"},
        Case{"workload_flavor",
             {},
             With(kNode, "CLUSTER_FLAVOR", "WORKLOAD"),
             nullptr,
             "VANILLA flavor"}),
    [](const ::testing::TestParamInfo<Case>& i) { return i.param.name; });

TEST(CsiUsageTest, NamesTheEnvironment) {
  const std::string u = CsiUsageText();
  for (const char* w : {"CSI_ENDPOINT", "X_CSI_MODE", "VSPHERE_CSI_CONFIG", "--fss-name",
                        "--metrics-port", "/etc/cloud/csi-vsphere.conf"}) {
    EXPECT_THAT(u, HasSubstr(w));
  }
}

}  // namespace
}  // namespace ccm::app
