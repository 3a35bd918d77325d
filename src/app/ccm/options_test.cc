#include "app/ccm/options.h"

#include "absl/strings/match.h"
#include "gtest/gtest.h"

namespace ccm::app {
namespace {

std::vector<std::string> Args(std::initializer_list<const char*> a) {
  std::vector<std::string> v = {"vsphere-cloud-controller-manager"};
  v.insert(v.end(), a.begin(), a.end());
  return v;
}

TEST(OptionsTest, DefaultsMatchTheGoBinary) {
  auto o =
      ParseOptions(Args({"--cloud-provider=vsphere", "--cloud-config=/etc/cloud/vsphere.conf"}));
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_TRUE(o->leader_elect);
  EXPECT_EQ(o->lease_duration, absl::Seconds(15));
  EXPECT_EQ(o->renew_deadline, absl::Seconds(10));
  EXPECT_EQ(o->retry_period, absl::Seconds(2));
  EXPECT_EQ(o->leader_elect_resource_name, "cloud-controller-manager");
  EXPECT_EQ(o->leader_elect_resource_namespace, "kube-system");
  EXPECT_EQ(o->secure_port, 10258);
  EXPECT_EQ(o->bind_address, "0.0.0.0");
  EXPECT_EQ(o->node_status_update_frequency, absl::Minutes(5));
  EXPECT_EQ(o->node_monitor_period, absl::Seconds(5));
  EXPECT_EQ(o->concurrent_node_syncs, 1);
  EXPECT_EQ(o->kube_api_qps, 20);
  EXPECT_EQ(o->kube_api_burst, 30);
  EXPECT_EQ(o->cloud_config_check_period, absl::Seconds(10));
  EXPECT_EQ(o->vcenter_hang_timeout, absl::Seconds(30));
  EXPECT_TRUE(ControllerEnabled(*o, "cloud-node"));
  EXPECT_TRUE(ControllerEnabled(*o, "cloud-node-lifecycle"));
  EXPECT_TRUE(o->warnings.empty());
}

TEST(OptionsTest, GoStyleForms) {
  auto o = ParseOptions(Args(
      {"--cloud-provider", "vsphere", "-cloud-config=x.conf", "-v=4", "--leader-elect=false",
       "--leader-elect-lease-duration=1m30s", "--node-monitor-period", "10s",
       "--controllers=*,-cloud-node-lifecycle", "--node-labels=a=b, c=d-e", "--kube-api-qps=5.5",
       "--concurrent-node-syncs=4", "--kubeconfig=/k", "--master=https://1.2.3.4:6443",
       "--secure-port=0", "--cloud-config-check-period=250ms", "--vcenter-hang-timeout=1m"}));
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->verbosity, 4);
  EXPECT_FALSE(o->leader_elect);
  EXPECT_EQ(o->lease_duration, absl::Seconds(90));
  EXPECT_EQ(o->node_monitor_period, absl::Seconds(10));
  EXPECT_TRUE(ControllerEnabled(*o, "cloud-node"));
  EXPECT_FALSE(ControllerEnabled(*o, "cloud-node-lifecycle"));
  EXPECT_EQ(o->node_labels.at("a"), "b");
  EXPECT_EQ(o->node_labels.at("c"), "d-e");
  EXPECT_EQ(o->kube_api_qps, 5.5);
  EXPECT_EQ(o->concurrent_node_syncs, 4);
  EXPECT_EQ(o->master, "https://1.2.3.4:6443");
  EXPECT_EQ(o->secure_port, 0);
  EXPECT_EQ(o->cloud_config_check_period, absl::Milliseconds(250));
  EXPECT_EQ(o->vcenter_hang_timeout, absl::Minutes(1));
  auto zero = ParseOptions(Args({"--cloud-config=x.conf", "--vcenter-hang-timeout=0"}));
  ASSERT_FALSE(zero.ok());
  EXPECT_TRUE(absl::StrContains(zero.status().message(), "--vcenter-hang-timeout"))
      << zero.status();
}

TEST(OptionsTest, UnimplementedAndUnknownFlagsAreWarnings) {
  auto o = ParseOptions(
      Args({"--cloud-provider=vsphere", "--cloud-config=x", "--use-service-account-credentials",
            "--min-resync-period", "10s", "--frobnicate=3", "--controllers=cloud-node,widgets"}));
  ASSERT_TRUE(o.ok()) << o.status();
  ASSERT_EQ(o->warnings.size(), 4u);
  EXPECT_NE(o->warnings[0].find("--use-service-account-credentials is accepted for compatibility"),
            std::string::npos);
  EXPECT_NE(o->warnings[2].find("unknown flag --frobnicate"), std::string::npos);
  EXPECT_NE(o->warnings[3].find("controller \"widgets\" is not implemented"), std::string::npos);
  EXPECT_TRUE(ControllerEnabled(*o, "cloud-node"));
  EXPECT_FALSE(ControllerEnabled(*o, "cloud-node-lifecycle"));
}

TEST(OptionsTest, RouteFlagsAsTheGoBinary) {
  auto o = ParseOptions(Args({"--cloud-config=x"}));
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_FALSE(o->allocate_node_cidrs);
  EXPECT_TRUE(o->configure_cloud_routes);
  EXPECT_EQ(o->route_reconciliation_period, absl::Seconds(10));
  EXPECT_TRUE(ControllerEnabled(*o, "route"));
  o = ParseOptions(Args({"--cloud-config=x", "--allocate-node-cidrs",
                         "--configure-cloud-routes=false", "--cluster-cidr=10.244.0.0/16,fd00::/48",
                         "--route-reconciliation-period=30s", "--controllers=*,-route"}));
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_TRUE(o->warnings.empty()) << o->warnings[0];
  EXPECT_TRUE(o->allocate_node_cidrs);
  EXPECT_FALSE(o->configure_cloud_routes);
  EXPECT_EQ(o->cluster_cidr, "10.244.0.0/16,fd00::/48");
  EXPECT_EQ(o->route_reconciliation_period, absl::Seconds(30));
  EXPECT_FALSE(ControllerEnabled(*o, "route"));
}

TEST(OptionsTest, Errors) {
  struct Case {
    std::vector<std::string> args;
    std::string want;
  } cases[] = {
      {Args({"--cloud-provider=aws", "--cloud-config=x"}),
       "--cloud-provider=\"aws\" is not supported: this binary only implements \"vsphere\""},
      {Args({"--cloud-provider=", "--cloud-config=x"}), "--cloud-provider=\"\" is not supported"},
      {Args({"--cloud-provider=external", "--cloud-config=x"}), "\"external\" is not supported"},
      {Args({"--cloud-provider=vsphere"}), "--cloud-config is required"},
      {Args({"--cloud-provider=vsphere", "--cloud-config=x", "--leader-elect-lease-duration=soon"}),
       "invalid value \"soon\" for flag --leader-elect-lease-duration"},
      {Args({"--cloud-provider=vsphere", "--cloud-config=x", "--leader-elect=maybe"}),
       "invalid value \"maybe\" for flag --leader-elect"},
      {Args({"--cloud-provider=vsphere", "--cloud-config=x", "--concurrent-node-syncs=0"}),
       "--concurrent-node-syncs: expected an integer >= 1"},
      {Args({"--cloud-provider=vsphere", "--cloud-config=x", "--leader-elect-renew-deadline=20s"}),
       "lease-duration > --leader-elect-renew-deadline"},
      {Args({"--cloud-provider=vsphere", "--cloud-config=x", "--node-labels=novalue"}),
       "--node-labels: expected key=value"},
      {Args({"--cloud-config=x", "--node-labels=team=a,bad key=b"}),
       "--node-labels: label key \"bad key\" is not a qualified name"},
      {Args({"--cloud-config=x", "--node-labels=Example.com/team=a"}),
       "label key \"Example.com/team\" is not a qualified name"},
      {Args({"--cloud-config=x", "--node-labels=c=d=e"}),
       "label \"c\" has an invalid value \"d=e\""},
      {Args({"--cloud-config=x", "--node-labels=team=not valid"}),
       "label \"team\" has an invalid value \"not valid\""},
      {Args({"--cloud-provider=vsphere", "--cloud-config=x",
             "--leader-elect-resource-lock=endpoints"}),
       "only \"leases\""},
      {Args({"--cloud-provider=vsphere", "--cloud-config"}),
       "flag needs an argument: --cloud-config"},
      {Args({"--cloud-provider=vsphere", "--cloud-config=x", "--tls-cert-file=a"}), "go together"},
      {Args({"--cloud-config=x", "--cluster-cidr=10.244.0.0"}),
       "--cluster-cidr: \"10.244.0.0\" is not a CIDR"},
      {Args({"--cloud-config=x", "--cluster-cidr=10.0.0.0/8,10.1.0.0/16"}),
       "one of each IP family"},
      {Args({"--cloud-config=x", "--route-reconciliation-period=0s"}),
       "--route-reconciliation-period"},
  };
  for (const auto& c : cases) {
    auto o = ParseOptions(c.args);
    ASSERT_FALSE(o.ok()) << c.want;
    EXPECT_NE(o.status().message().find(c.want), std::string::npos) << o.status();
  }
}

TEST(OptionsTest, CloudProviderMayBeOmitted) {
  auto o = ParseOptions(Args({"--cloud-config=/etc/cloud/vsphere.conf"}));
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->cloud_provider, "vsphere");
  EXPECT_TRUE(o->warnings.empty());
}

TEST(OptionsTest, NodeLabelsInKubernetesNamespacesAreIgnoredWithAWarning) {
  auto o = ParseOptions(Args({"--cloud-config=x",
                              "--node-labels=team=a,node.kubernetes.io/role=x,k8s.io/y=1,"
                              "example.com/tier=gold,kubernetes.io/z="}));
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->node_labels,
            (std::map<std::string, std::string>{{"team", "a"}, {"example.com/tier", "gold"}}));
  ASSERT_EQ(o->warnings.size(), 3u);
  EXPECT_NE(o->warnings[0].find("\"k8s.io/y\""), std::string::npos);
  EXPECT_NE(o->warnings[1].find("\"kubernetes.io/z\""), std::string::npos);
  EXPECT_NE(o->warnings[2].find("\"node.kubernetes.io/role\" is in the kubernetes.io or k8s.io "
                                "namespace"),
            std::string::npos);
}

TEST(OptionsTest, VersionAndHelpNeedNothingElse) {
  EXPECT_TRUE(ParseOptions(Args({"--version"}))->version);
  EXPECT_TRUE(ParseOptions(Args({"-h"}))->help);
}

}  // namespace
}  // namespace ccm::app
