// The secure port, logs and credentials of the real binary: /healthz /readyz /livez /metrics over
// HTTPS with the self-signed certificate, the listed metrics, klog line format, no password in
// any output, Secret rotation to another vCenter user without a restart, and an unreachable
// vCenter showing as a failed named readiness check while liveness stays 200, then the same vCenter
// restarted (sessions gone) bringing readiness back within seconds without a process restart.
#include <gtest/gtest.h>

#include <regex>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "integration/harness.h"

namespace ccm::integration {
namespace {

TEST(EndpointsTest, HealthMetricsLogsRotationAndVcenterDown) {
  auto c = Cluster::Start("endpoints");
  ASSERT_TRUE(c.ok()) << c.status();
  Cluster& cl = **c;
  int port = 0;
  auto p = cl.StartCcm("ccm", &port);
  ASSERT_TRUE(p.ok()) << p.status();
  ChildProcess& ccm = **p;
  ASSERT_TRUE(cl.WaitServing(ccm, port, absl::Seconds(20))) << ccm.Stderr();
  const std::string base = absl::StrCat("https://127.0.0.1:", port);
  auto get = [&](const std::string& path) -> HttpResponse {
    auto r = HttpsGet(base + path);
    EXPECT_TRUE(r.ok()) << path << ": " << r.status();
    return r.ok() ? *r : HttpResponse{};
  };

  ASSERT_TRUE(cl.RegisterNode("node-1").ok());
  ASSERT_TRUE(WaitFor([&] { return !cl.ProviderId("node-1").empty(); }, absl::Seconds(30)))
      << ccm.Stderr();

  // Health endpoints: all checks pass once leading and connected.
  ASSERT_TRUE(WaitFor([&] { return get("/readyz").status == 200; }, absl::Seconds(20)))
      << get("/readyz?verbose").body;
  EXPECT_EQ(get("/healthz").status, 200);
  EXPECT_EQ(get("/livez").status, 200);
  HttpResponse verbose = get("/readyz?verbose");
  EXPECT_TRUE(absl::StrContains(verbose.body, "[+]vcenter-vc-test ok")) << verbose.body;
  EXPECT_TRUE(absl::StrContains(verbose.body, "[+]leader-election ok")) << verbose.body;
  EXPECT_TRUE(absl::StrContains(verbose.body, "[+]kubernetes ok")) << verbose.body;

  // Metrics, once the Node's initialisation has been timed (its providerID is written before its
  // addresses, and the time is taken after both).
  ASSERT_TRUE(WaitFor(
      [&] {
        return MetricValue(get("/metrics").body,
                           "cloud_node_controller_initialization_duration_seconds_count") == 1;
      },
      absl::Seconds(20)))
      << get("/metrics").body;
  HttpResponse m = get("/metrics");
  EXPECT_EQ(m.status, 200);
  // Every family is declared (# TYPE) even before it has a sample (e.g. no retry yet).
  for (const char* name :
       {"workqueue_depth", "workqueue_adds_total", "workqueue_queue_duration_seconds",
        "workqueue_work_duration_seconds", "workqueue_retries_total",
        "workqueue_unfinished_work_seconds", "workqueue_longest_running_processor_seconds",
        "cloud_node_controller_initialization_duration_seconds",
        "cloudprovider_vsphere_api_requests_total",
        "cloudprovider_vsphere_api_request_duration_seconds", "cloudprovider_vsphere_session_state",
        "cloudprovider_vsphere_tag_cache_hits_total",
        "cloudprovider_vsphere_tag_cache_misses_total", "leader_election_master_status",
        "vsphere_ccm_build_info", "rest_client_request_duration_seconds",
        "rest_client_rate_limiter_duration_seconds"}) {
    EXPECT_TRUE(absl::StrContains(m.body, absl::StrCat("# TYPE ", name, " ")))
        << "missing metric " << name;
  }
  for (const char* sample :
       {"workqueue_adds_total{name=\"node\"}", "vsphere_ccm_build_info{",
        "cloudprovider_vsphere_session_state{", "cloudprovider_vsphere_tag_cache_hits_total{"}) {
    EXPECT_TRUE(absl::StrContains(m.body, absl::StrCat("\n", sample))) << "no sample " << sample;
  }
  EXPECT_EQ(MetricValue(m.body, "cloud_node_controller_initialization_duration_seconds_count"), 1);
  EXPECT_EQ(MetricValue(m.body, "leader_election_master_status{"), 1);
  // The Node's initialisation: its two writes, each timed; every request passed the rate limiter.
  EXPECT_GE(
      MetricValue(m.body, "rest_client_request_duration_seconds_count{verb=\"PATCH\",host=\""), 2)
      << m.body;
  EXPECT_GE(
      MetricValue(m.body, "rest_client_rate_limiter_duration_seconds_count{verb=\"GET\",host=\""),
      1);
  EXPECT_GE(
      MetricValue(m.body,
                  "cloudprovider_vsphere_api_requests_total{vcenter=\"vc-test\",request=\"Login\""),
      1)
      << m.body;

  // Credentials rotation: the Secret moves from user A to user B; a new Login happens without a
  // restart and the binary keeps working.
  auto soap = cl.vcsim().SoapCounters();
  ASSERT_TRUE(soap.ok());
  const int logins_before = (*soap)["Login"];
  ASSERT_TRUE(cl.SetCredentials(kUserB, kPasswordB).ok());
  ASSERT_TRUE(WaitFor(
      [&] {
        auto s = cl.vcsim().SoapCounters();
        return s.ok() && (*s)["Login"] > logins_before;
      },
      absl::Seconds(20)))
      << ccm.Stderr();
  EXPECT_TRUE(WaitFor(
      [&] { return absl::StrContains(ccm.Stderr(), "credentials changed, logging in again"); },
      absl::Seconds(5)));
  ASSERT_TRUE(cl.RegisterNode("node-2").ok());
  ASSERT_TRUE(WaitFor([&] { return !cl.ProviderId("node-2").empty(); }, absl::Seconds(30)))
      << ccm.Stderr();
  EXPECT_TRUE(ccm.Running());

  // vCenter down: a failed named readiness check, liveness unaffected, the process keeps running.
  cl.StopVcsim();
  ASSERT_TRUE(WaitFor([&] { return get("/readyz").status == 500; }, absl::Seconds(30)))
      << get("/readyz?verbose").body;
  verbose = get("/readyz?verbose");
  EXPECT_TRUE(absl::StrContains(verbose.body, "[-]vcenter-vc-test failed")) << verbose.body;
  EXPECT_EQ(get("/healthz").status, 500);
  EXPECT_EQ(get("/livez").status, 200) << get("/livez?verbose").body;
  EXPECT_TRUE(ccm.Running());
  const std::string metrics_text = get("/metrics").body;

  // vCenter back (a reboot: every session gone): ready again within seconds, a new session, and
  // node initialisation works again, without a restart of the process.
  ASSERT_TRUE(cl.RestartVcsim().ok());
  const absl::Time back = absl::Now();
  ASSERT_TRUE(WaitFor([&] { return get("/readyz").status == 200; }, absl::Seconds(30)))
      << get("/readyz?verbose").body << ccm.Stderr();
  const absl::Duration recovery = absl::Now() - back;
  std::printf("RECOVERY binary-vcenter-restart (/readyz 200 again): %lld ms\n",
              static_cast<long long>(absl::ToInt64Milliseconds(recovery)));
  EXPECT_LT(recovery, absl::Seconds(10));
  EXPECT_GE(MetricValue(get("/metrics").body,
                        "cloudprovider_vsphere_session_generation{vcenter=\"vc-test\"}"),
            3);  // A, B after rotation, then the session after the restart
  ASSERT_TRUE(cl.RegisterNode("node-3").ok());
  ASSERT_TRUE(WaitFor([&] { return !cl.ProviderId("node-3").empty(); }, absl::Seconds(30)))
      << ccm.Stderr();
  EXPECT_FALSE(cl.ProviderId("node-1").empty());  // nothing was deleted meanwhile

  ccm.Signal(SIGTERM);
  ASSERT_TRUE(ccm.WaitExit(absl::Seconds(10)).has_value());

  // Logs: klog's header on every line; no password anywhere.
  const std::string err = ccm.Stderr();
  const std::regex klog(R"(^[IWEF]\d{4} \d\d:\d\d:\d\d\.\d{6} +\d+ [^ ]+:\d+\] .*)");
  int lines = 0;
  for (absl::string_view line : absl::StrSplit(err, '\n', absl::SkipEmpty())) {
    ++lines;
    EXPECT_TRUE(std::regex_match(std::string(line), klog)) << "not klog format: " << line;
  }
  EXPECT_GT(lines, 10);
  for (const char* pw : {kPasswordA, kPasswordB}) {
    EXPECT_FALSE(absl::StrContains(err, pw)) << "password in stderr";
    EXPECT_FALSE(absl::StrContains(ccm.Stdout(), pw)) << "password in stdout";
    EXPECT_FALSE(absl::StrContains(metrics_text, pw)) << "password in /metrics";
    EXPECT_FALSE(absl::StrContains(verbose.body, pw)) << "password in /readyz";
  }
}

}  // namespace
}  // namespace ccm::integration
