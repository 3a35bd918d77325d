#include "app/csi/syncer_options.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ccm::app {
namespace {

using ::testing::HasSubstr;

TEST(CsiSyncerOptionsTest, ReferenceContainerArgsAndEnv) {
  // The reference's vsphere-syncer container (manifests/vanilla/vsphere-csi-driver.yaml).
  auto o = ParseCsiSyncerOptions(
      {"vsphere-csi-driver", "--leader-election", "--leader-election-lease-duration=30s",
       "--leader-election-renew-deadline=20s", "--leader-election-retry-period=10s",
       "--fss-name=internal-feature-states.csi.vsphere.vmware.com",
       "--fss-namespace=vmware-system-csi"},
      {{"FULL_SYNC_INTERVAL_MINUTES", "30"},
       {"VSPHERE_CSI_CONFIG", "/etc/cloud/x.conf"},
       {"LOGGER_LEVEL", "PRODUCTION"},
       {"POD_NAMESPACE", "vmware-system-csi"}});
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_TRUE(o->leader_election);
  EXPECT_EQ(o->lease_duration, absl::Seconds(30));
  EXPECT_EQ(o->renew_deadline, absl::Seconds(20));
  EXPECT_EQ(o->retry_period, absl::Seconds(10));
  EXPECT_EQ(o->full_sync_interval, absl::Minutes(30));
  EXPECT_EQ(o->config_path, "/etc/cloud/x.conf");
  EXPECT_EQ(o->leader_election_namespace, "vmware-system-csi");
  EXPECT_EQ(o->metrics_port, 2113);
  EXPECT_EQ(o->verbosity, 0);
}

TEST(CsiSyncerOptionsTest, KubeconfigFromTheEnvironmentWhenNoFlag) {
  auto from_env = ParseCsiSyncerOptions({"x"}, {{"KUBECONFIG", "/etc/k/admin.conf"}});
  ASSERT_TRUE(from_env.ok()) << from_env.status();
  EXPECT_EQ(from_env->kubeconfig, "/etc/k/admin.conf");
  auto flag_wins =
      ParseCsiSyncerOptions({"x", "--kubeconfig=/a.conf"}, {{"KUBECONFIG", "/etc/k/admin.conf"}});
  ASSERT_TRUE(flag_wins.ok()) << flag_wins.status();
  EXPECT_EQ(flag_wins->kubeconfig, "/a.conf");
  auto none = ParseCsiSyncerOptions({"x"}, {});
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->kubeconfig, "");  // in-cluster
}

TEST(CsiSyncerOptionsTest, Defaults) {
  auto o = ParseCsiSyncerOptions({"x"}, {});
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_FALSE(o->leader_election);
  EXPECT_EQ(o->full_sync_interval, absl::Minutes(30));
  EXPECT_EQ(o->config_path, "/etc/cloud/csi-vsphere.conf");
  EXPECT_EQ(o->lease_duration, absl::Seconds(15));
  EXPECT_EQ(o->retry_period, absl::Seconds(5));
}

TEST(CsiSyncerOptionsTest, WebhookMode) {
  auto webhook =
      ParseCsiSyncerOptions({"x", "--operation-mode=WEBHOOK_SERVER",
                             "--fss-name=internal-feature-states.csi.vsphere.vmware.com"},
                            {{"WEBHOOK_CONFIG_PATH", "/run/secrets/tls/webhook.config"}});
  ASSERT_TRUE(webhook.ok()) << webhook.status();
  EXPECT_TRUE(webhook->webhook);
  EXPECT_EQ(webhook->webhook_config_path, "/run/secrets/tls/webhook.config");
  auto sync = ParseCsiSyncerOptions({"x"}, {});
  ASSERT_TRUE(sync.ok());
  EXPECT_FALSE(sync->webhook);
  EXPECT_EQ(sync->webhook_config_path, "/etc/webhook/webhook.config");
}

TEST(CsiSyncerOptionsTest, Refusals) {
  auto other = ParseCsiSyncerOptions({"x", "--operation-mode=SOMETHING"}, {});
  ASSERT_FALSE(other.ok());
  EXPECT_THAT(other.status().message(), HasSubstr("METADATA_SYNC or WEBHOOK_SERVER"));
  for (const char* bad : {"0", "-5", "ten"}) {
    auto o = ParseCsiSyncerOptions({"x"}, {{"FULL_SYNC_INTERVAL_MINUTES", bad}});
    ASSERT_FALSE(o.ok()) << bad;
    EXPECT_THAT(o.status().message(), HasSubstr("FULL_SYNC_INTERVAL_MINUTES"));
  }
  auto zero = ParseCsiSyncerOptions({"x", "--vcenter-hang-timeout=0s"}, {});
  ASSERT_FALSE(zero.ok());
  EXPECT_THAT(zero.status().message(), HasSubstr("--vcenter-hang-timeout must be above 0"));
  auto dev = ParseCsiSyncerOptions({"x"}, {{"LOGGER_LEVEL", "development"}});
  ASSERT_TRUE(dev.ok());
  EXPECT_EQ(dev->verbosity, 4);
}

}  // namespace
}  // namespace ccm::app
