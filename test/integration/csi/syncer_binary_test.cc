// vsphere-csi-driver in syncer mode (X_CSI_MODE=syncer), the real binary with the reference's
// vsphere-syncer arguments: it takes the Lease vsphere-syncer, writes the CNS metadata, serves
// its metrics on the syncer port, makes only API calls the manifest's controller roles grant, and
// on SIGTERM releases the Lease and exits 0.
#include <httplib.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "gtest/gtest.h"
#include "integration/child_process.h"
#include "integration/csi/syncer_env.h"
#include "testing/eventually.h"
#include "testing/free_port.h"

namespace ccm::csi::syncer::testing {
namespace {

using ::ccm::integration::ChildProcess;
using ::ccm::testing::Eventually;
using ::ccm::testing::FreePort;

std::string LeaseHolder(SyncerEnv& env) {
  auto l = env.emu().Get("leases", "vmware-system-csi", "vsphere-syncer");
  if (!l.ok()) return "<none>";
  return l->value("/spec/holderIdentity"_json_pointer, std::string());
}

TEST(CsiSyncerBinaryTest, SyncsUnderTheLeaseServesMetricsAndStops) {
  SyncerEnv env;
  ASSERT_TRUE(env.Start(/*start_syncer=*/false).ok());
  const std::string conf = env.dir() + "/csi-vsphere.conf";
  env.WriteCsiConf(conf);
  auto id = env.CreateVolume("pvc-bin");
  ASSERT_TRUE(id.ok());
  ASSERT_TRUE(env.PutPv("pv-bin", *id, "ns1", "bin").ok());
  ASSERT_TRUE(env.PutPvc("ns1", "bin", "pv-bin").ok());
  ASSERT_TRUE(env.PutPod("ns1", "bin-pod", "bin").ok());
  env.emu().ResetRequestCounts();
  // No cluster-distribution in the file (issue 54 item 4): the API server's version names it.
  env.emu().SetGitVersion("v1.29.3+rke2r1");

  const int metrics_port = FreePort();
  auto p = ChildProcess::Start(
      {"/usr/bin/env", "-i", "X_CSI_MODE=syncer", "VSPHERE_CSI_CONFIG=" + conf,
       "FULL_SYNC_INTERVAL_MINUTES=30", "POD_NAMESPACE=vmware-system-csi", CSI_DRIVER_BINARY,
       // The reference's vsphere-syncer container arguments, then ours.
       "--leader-election", "--leader-election-lease-duration=30s",
       "--leader-election-renew-deadline=20s", "--leader-election-retry-period=10s",
       "--fss-name=internal-feature-states.csi.vsphere.vmware.com",
       "--fss-namespace=vmware-system-csi", "--kubeconfig=" + env.kubeconfig(),
       absl::StrCat("--metrics-port=", metrics_port), "--metrics-bind-address=127.0.0.1", "--v=2"},
      env.dir() + "/syncer");
  ASSERT_TRUE(p.ok()) << p.status();
  ChildProcess& syncer = **p;

  ASSERT_TRUE(Eventually([&] {
    return env.HasEntity(*id, kEntityPv, "pv-bin") &&
           env.HasEntity(*id, kEntityPvc, "bin", "ns1") &&
           env.HasEntity(*id, kEntityPod, "bin-pod", "ns1");
  })) << syncer.Stderr();
  EXPECT_NE(LeaseHolder(env), "<none>");
  EXPECT_FALSE(LeaseHolder(env).empty());
  auto volumes = env.vcsim().CnsVolumes();
  ASSERT_TRUE(volumes.ok()) << volumes.status();
  ASSERT_EQ(volumes->size(), 1u);
  EXPECT_EQ(volumes->front().cluster_distribution, "Rancher");
  // Its vCenter session names it (the reference's user agent, the cluster-id, the component).
  auto agents = env.vcsim().RequestsByAgent();
  ASSERT_TRUE(agents.ok()) << agents.status();
  EXPECT_GT((*agents)[absl::StrCat("k8s-csi-useragent-", volumes->front().cluster_id, "-syncer")],
            0);
  EXPECT_TRUE(
      absl::StrContains(syncer.Stderr(),
                        "cluster-distribution: none in csi-vsphere.conf; Rancher from the API "
                        "server's version v1.29.3+rke2r1"));

  httplib::Client http("127.0.0.1", metrics_port);
  // CNS shows the metadata as soon as the task ran; the syncer counts the operation when its
  // wait for the task returns, and its own update a moment after that.
  EXPECT_TRUE(Eventually([&] {
    auto r = http.Get("/metrics");
    return r && absl::StrContains(r->body, "optype=\"update-volume-metadata\"") &&
           absl::StrContains(r->body, "vsphere_syncer_metadata_updates_total{result=\"success\"}");
  }));
  auto res = http.Get("/metrics");
  ASSERT_TRUE(res) << syncer.Stderr();
  EXPECT_EQ(res->status, 200);
  for (const char* m : {"vsphere_syncer_info{version=", "vsphere_full_sync_ops_histogram",
                        "vsphere_cns_volume_ops_histogram_count{optype=\"update-volume-metadata\","
                        "status=\"pass\"}",
                        "cloudprovider_vsphere_api_requests_total{vcenter=\"127.0.0.1\"",
                        "vsphere_cns_volume_pv_missing{vc=\"127.0.0.1\"} 0",
                        "vsphere_syncer_metadata_updates_total{result=\"success\"}"}) {
    EXPECT_TRUE(absl::StrContains(res->body, m)) << m << "\n" << res->body;
  }
  auto health = http.Get("/healthz");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);

  syncer.Signal(SIGTERM);
  EXPECT_EQ(syncer.WaitExit(absl::Seconds(15)), 0) << syncer.Stderr();
  EXPECT_EQ(LeaseHolder(env), "");  // released on the way out

  // Least privilege, with the Lease: every call is granted to vsphere-csi-controller.
  const std::set<std::string> allowed = ControllerGrants();
  ASSERT_FALSE(allowed.empty());
  bool leases = false;
  for (const auto& [key, count] : env.emu().RequestCounts()) {
    if (absl::StartsWith(key, "get discovery")) continue;
    leases |= absl::EndsWith(key, " leases");
    EXPECT_TRUE(allowed.count(key)) << key << " is not granted to vsphere-csi-controller";
  }
  EXPECT_TRUE(leases);
}

// Issue 42 item 4 and issue 43 for the syncer: a rotated vCenter password in csi-vsphere.conf
// applies without a restart; SIGTERM while vCenter hangs still releases the Lease and exits
// within 5 s.
TEST(CsiSyncerBinaryTest, RotatesItsPasswordLiveAndStopsWithin5sWhileVCenterHangs) {
  SyncerEnv env;
  ASSERT_TRUE(env.Start(/*start_syncer=*/false).ok());
  const std::string conf = env.dir() + "/csi-vsphere.conf";
  env.WriteCsiConf(conf);
  auto p = ChildProcess::Start(
      {"/usr/bin/env", "-i", "X_CSI_MODE=syncer", "VSPHERE_CSI_CONFIG=" + conf,
       "POD_NAMESPACE=vmware-system-csi", "POD_NAME=vsphere-csi-controller-0", CSI_DRIVER_BINARY,
       "--leader-election", "--kubeconfig=" + env.kubeconfig(), "--metrics-port=0",
       "--config-check-period=200ms", "--vcenter-hang-timeout=2s", "--v=2"},
      env.dir() + "/syncer-rotate");
  ASSERT_TRUE(p.ok()) << p.status();
  ChildProcess& syncer = **p;
  auto first = env.CreateVolume("pvc-first");
  ASSERT_TRUE(first.ok());
  ASSERT_TRUE(env.PutPv("pv-first", *first).ok());
  ASSERT_TRUE(Eventually([&] { return env.HasEntity(*first, kEntityPv, "pv-first"); }))
      << syncer.Stderr();

  // The password is rotated in vCenter (sessions end) and then in the Secret's file.
  ASSERT_TRUE(env.vcsim().SetPassword("admin", "rotated").ok());
  ASSERT_TRUE(env.vcsim().InvalidateSessions().ok());
  env.WriteCsiConf(conf + ".new", kClusterId, "rotated");
  ASSERT_EQ(std::rename((conf + ".new").c_str(), conf.c_str()), 0);
  ASSERT_TRUE(Eventually([&] { return absl::StrContains(syncer.Stderr(), "password changed"); }))
      << syncer.Stderr();
  auto second = env.CreateVolume("pvc-second");  // the test's own client logs in again too
  if (!second.ok()) {
    ASSERT_TRUE(env.vcsim().SetPassword("admin", "secret").ok());  // for the test's client
    second = env.CreateVolume("pvc-second");
    ASSERT_TRUE(env.vcsim().SetPassword("admin", "rotated").ok());
  }
  ASSERT_TRUE(second.ok()) << second.status();
  ASSERT_TRUE(env.PutPv("pv-second", *second).ok());
  ASSERT_TRUE(Eventually([&] { return env.HasEntity(*second, kEntityPv, "pv-second"); }))
      << syncer.Stderr();
  EXPECT_TRUE(syncer.Running()) << "the same process, with the new password";

  ASSERT_TRUE(env.vcsim().SetFault("blackhole").ok());
  // The idle syncer still sees the hang (its heartbeat), within --vcenter-hang-timeout plus the
  // 5 s status poll: a Warning Event on its Pod.
  const absl::Time hung = absl::Now();
  std::string event;
  ASSERT_TRUE(Eventually(
      [&] {
        for (const auto& e : env.emu().List("events", "vmware-system-csi")) {
          if (e.value("reason", "") == "VCenterUnavailable") event = e.value("message", "");
        }
        return !event.empty();
      },
      absl::Seconds(20)))
      << syncer.Stderr();
  EXPECT_LT(absl::Now() - hung, absl::Seconds(2 + 5 + 2));
  EXPECT_TRUE(absl::StrContains(event, "is not answering")) << event;
  const absl::Time term = absl::Now();
  syncer.Signal(SIGTERM);
  const std::optional<int> code = syncer.WaitExit(absl::Seconds(5));
  ASSERT_TRUE(code.has_value()) << "still running 5 s after SIGTERM\n" << syncer.Stderr();
  EXPECT_EQ(*code, 0) << syncer.Stderr();
  std::cout << "syncer exit after SIGTERM, vCenter hung: "
            << absl::FormatDuration(absl::Now() - term) << "\n";
  EXPECT_EQ(LeaseHolder(env), "");
  ASSERT_TRUE(env.vcsim().SetFault("none").ok());
}

// Issue 43, "API server hangs": the informers' watches, the Lease renewal and its release are
// held; SIGTERM still ends the syncer within 5 s.
TEST(CsiSyncerBinaryTest, StopsWithin5sWhileTheApiServerHangs) {
  SyncerEnv env;
  ASSERT_TRUE(env.Start(/*start_syncer=*/false).ok());
  const std::string conf = env.dir() + "/csi-vsphere.conf";
  env.WriteCsiConf(conf);
  auto p = ChildProcess::Start(
      {"/usr/bin/env", "-i", "X_CSI_MODE=syncer", "VSPHERE_CSI_CONFIG=" + conf,
       "POD_NAMESPACE=vmware-system-csi", CSI_DRIVER_BINARY, "--leader-election",
       "--kubeconfig=" + env.kubeconfig(), "--metrics-port=0", "--v=2"},
      env.dir() + "/syncer-hung-api");
  ASSERT_TRUE(p.ok()) << p.status();
  ChildProcess& syncer = **p;
  auto volume = env.CreateVolume("pvc-api");
  ASSERT_TRUE(volume.ok());
  ASSERT_TRUE(env.PutPv("pv-api", *volume).ok());
  ASSERT_TRUE(Eventually([&] { return env.HasEntity(*volume, kEntityPv, "pv-api"); }))
      << syncer.Stderr();
  env.emu().InjectDelay({.delay = absl::InfiniteDuration()});
  const absl::Time term = absl::Now();
  syncer.Signal(SIGTERM);
  const std::optional<int> code = syncer.WaitExit(absl::Seconds(5));
  env.emu().ClearFaults();
  ASSERT_TRUE(code.has_value()) << "still running 5 s after SIGTERM\n" << syncer.Stderr();
  EXPECT_EQ(*code, 0) << syncer.Stderr();
  std::cout << "syncer exit after SIGTERM, API server hung: "
            << absl::FormatDuration(absl::Now() - term) << "\n";
}

// Issue 54 item 4: a cluster-distribution in csi-vsphere.conf is used as it is (the API server's
// version is not asked); without one, an API server whose /version fails stops the start with an
// error naming it (the reference exits too), and the Pod's restart tries again.
TEST(CsiSyncerBinaryTest, ClusterDistributionFromTheFileOrTheApiServer) {
  SyncerEnv env;
  ASSERT_TRUE(env.Start(/*start_syncer=*/false).ok());
  env.emu().InjectError({.code = 500,
                         .count = -1,
                         .method = "GET",
                         .path_substring = "/version",
                         .whole_path = true});
  const std::string conf = env.dir() + "/csi-vsphere.conf";
  env.WriteCsiConf(conf);
  auto start = [&](const std::string& name) {
    return ChildProcess::Start(
        {"/usr/bin/env", "-i", "X_CSI_MODE=syncer", "VSPHERE_CSI_CONFIG=" + conf,
         "FULL_SYNC_INTERVAL_MINUTES=30", CSI_DRIVER_BINARY, "--kubeconfig=" + env.kubeconfig()},
        env.dir() + "/" + name);
  };
  auto failed = start("no-version");
  ASSERT_TRUE(failed.ok()) << failed.status();
  EXPECT_EQ((*failed)->WaitExit(absl::Seconds(30)), 1);
  EXPECT_TRUE(absl::StrContains((*failed)->Stderr(),
                                "cluster-distribution: none in csi-vsphere.conf, and the API "
                                "server's version could not be read"))
      << (*failed)->Stderr();

  std::string text;
  {
    std::ifstream in(conf);
    text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  ASSERT_TRUE(absl::StrContains(text, "[Global]\n"));
  std::ofstream(conf) << absl::StrReplaceAll(
      text, {{"[Global]\n", "[Global]\ncluster-distribution = \"MyDistribution\"\n"}});
  auto id = env.CreateVolume("pvc-dist");
  ASSERT_TRUE(id.ok());
  ASSERT_TRUE(env.PutPv("pv-dist", *id).ok());
  auto p = start("from-file");
  ASSERT_TRUE(p.ok()) << p.status();
  ASSERT_TRUE(Eventually([&] { return env.HasEntity(*id, kEntityPv, "pv-dist"); }))
      << (*p)->Stderr();
  auto volumes = env.vcsim().CnsVolumes();
  ASSERT_TRUE(volumes.ok()) << volumes.status();
  ASSERT_EQ(volumes->size(), 1u);
  EXPECT_EQ(volumes->front().cluster_distribution, "MyDistribution");
  (*p)->Signal(SIGTERM);
  EXPECT_EQ((*p)->WaitExit(absl::Seconds(15)), 0) << (*p)->Stderr();
}

TEST(CsiSyncerBinaryTest, StartUpErrorsNameWhatToFix) {
  char tmpl[] = "/tmp/csi-syncer-bin-XXXXXX";
  const std::string dir = mkdtemp(tmpl);
  const std::string conf = dir + "/csi-vsphere.conf";
  std::ofstream(conf) << "[VirtualCenter \"vc.example.com\"]\nuser = \"u\"\npassword = \"p\"\n";
  auto p =
      ChildProcess::Start({"/usr/bin/env", "-i", "X_CSI_MODE=syncer", "VSPHERE_CSI_CONFIG=" + conf,
                           CSI_DRIVER_BINARY, "--kubeconfig=/nonexistent"},
                          dir + "/no-cluster-id");
  ASSERT_TRUE(p.ok());
  // Without cluster-id it is read from the API (ConfigMap vsphere-csi-cluster-id): no API, no
  // start, and the error says which configuration could not be read.
  EXPECT_EQ((*p)->WaitExit(absl::Seconds(10)), 1);
  EXPECT_TRUE(absl::StrContains((*p)->Stderr(), "/nonexistent")) << (*p)->Stderr();

  auto bad = ChildProcess::Start({"/usr/bin/env", "-i", "X_CSI_MODE=syncer", CSI_DRIVER_BINARY,
                                  "--operation-mode=SOMETHING_ELSE"},
                                 dir + "/mode");
  ASSERT_TRUE(bad.ok());
  EXPECT_EQ((*bad)->WaitExit(absl::Seconds(10)), 2);
  EXPECT_TRUE(absl::StrContains((*bad)->Stderr(), "operation-mode")) << (*bad)->Stderr();
  // The webhook without its config file: exit 1 naming the file.
  auto no_config = ChildProcess::Start(
      {"/usr/bin/env", "-i", "X_CSI_MODE=syncer", "WEBHOOK_CONFIG_PATH=" + dir + "/none.config",
       CSI_DRIVER_BINARY, "--operation-mode=WEBHOOK_SERVER"},
      dir + "/webhook");
  ASSERT_TRUE(no_config.ok());
  EXPECT_EQ((*no_config)->WaitExit(absl::Seconds(10)), 1);
  EXPECT_TRUE(absl::StrContains((*no_config)->Stderr(), dir + "/none.config"))
      << (*no_config)->Stderr();
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace ccm::csi::syncer::testing
