// Two replicas of the real binary against one emulator and one simulator: exactly one leads and
// acts; SIGKILL of the leader hands the lease to the other within the lease duration; SIGTERM
// releases the lease, logs out of vCenter and exits 0 within seconds; a lease taken over by
// another holder makes the leader stop acting and exit 1 (issue 15, leader row).
#include <gtest/gtest.h>
#include <signal.h>

#include <iostream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "integration/harness.h"

namespace ccm::integration {
namespace {

std::string Metrics(int port) {
  auto r = HttpsGet(absl::StrCat("https://127.0.0.1:", port, "/metrics"));
  return r.ok() ? r->body : "";
}

bool LogSays(ChildProcess& p, const std::string& text) {
  return WaitFor([&] { return absl::StrContains(p.Stderr(), text); }, absl::Seconds(5));
}

// The message of the first Event with `reason` ("" when there is none).
std::string EventMessage(testing::KubeEmulator& emu, const std::string& reason) {
  for (const auto& e : emu.List("events")) {
    if (e.value("reason", "") == reason) return e.value("message", "");
  }
  return "";
}

bool Leads(int port) { return MetricValue(Metrics(port), "leader_election_master_status{") == 1; }

TEST(LeaderElectionTest, OneLeaderActsAndTheOtherTakesOverAfterSigkill) {
  auto c = Cluster::Start("leader");
  ASSERT_TRUE(c.ok()) << c.status();
  Cluster& cl = **c;
  int port_a = 0, port_b = 0;
  auto a = cl.StartCcm("replica-a", &port_a);
  ASSERT_TRUE(a.ok()) << a.status();
  auto b = cl.StartCcm("replica-b", &port_b);
  ASSERT_TRUE(b.ok()) << b.status();
  ASSERT_TRUE(cl.WaitServing(**a, port_a, absl::Seconds(20))) << (*a)->Stderr();
  ASSERT_TRUE(cl.WaitServing(**b, port_b, absl::Seconds(20))) << (*b)->Stderr();
  ASSERT_TRUE(WaitFor([&] { return Leads(port_a) || Leads(port_b); }, absl::Seconds(20)));

  ASSERT_TRUE(cl.RegisterNode("node-1").ok());
  ASSERT_TRUE(WaitFor([&] { return !cl.ProviderId("node-1").empty(); }, absl::Seconds(30)))
      << (*a)->Stderr() << (*b)->Stderr();
  EXPECT_EQ(cl.ProviderId("node-1"), "vsphere://" + cl.VmUuid("node-1"));

  const bool a_leads = Leads(port_a);
  ChildProcess& leader = a_leads ? **a : **b;
  ChildProcess& standby = a_leads ? **b : **a;
  const int standby_port = a_leads ? port_b : port_a;
  EXPECT_NE(Leads(port_a), Leads(port_b)) << "exactly one replica leads";
  const std::string holder = cl.LeaseHolder();
  ASSERT_FALSE(holder.empty());
  EXPECT_TRUE(absl::StrContains(leader.Stderr(), "became leader (" + holder + ")"));
  // The log line follows the Node update: wait for it.
  EXPECT_TRUE(LogSays(leader, "initialised node node-1"));
  EXPECT_FALSE(absl::StrContains(standby.Stderr(), "became leader"));
  EXPECT_FALSE(absl::StrContains(standby.Stderr(), "initialised node"));
  // The standby does not even connect to vCenter: one SOAP Login in total.
  auto soap = cl.vcsim().SoapCounters();
  ASSERT_TRUE(soap.ok());
  EXPECT_EQ((*soap)["Login"], 1);

  // SIGKILL: no release; the standby must wait out the lease (4 s) and then take over.
  const absl::Time killed = absl::Now();
  leader.Signal(SIGKILL);
  ASSERT_TRUE(leader.WaitExit(absl::Seconds(5)).has_value());
  ASSERT_TRUE(WaitFor([&] { return Leads(standby_port); }, absl::Seconds(15))) << standby.Stderr();
  const absl::Duration takeover = absl::Now() - killed;
  // The standby measures expiry from when it last saw the lease change (up to one retry period,
  // 1 s + jitter, before the kill), then tries every retry period: typically 5-7 s. The bound
  // leaves room for a failed attempt or two: a pooled connection the emulator closed after its
  // 2 s keep-alive fails with "Send failure: Broken pipe" and costs a retry (seen up to 10.6 s).
  EXPECT_LT(takeover, absl::Seconds(12));
  EXPECT_NE(cl.LeaseHolder(), holder);
  std::cout << "takeover after SIGKILL of the leader: " << absl::FormatDuration(takeover) << "\n";

  // The new leader acts: a newly registered Node is initialised by it.
  ASSERT_TRUE(cl.RegisterNode("node-2").ok());
  ASSERT_TRUE(WaitFor([&] { return !cl.ProviderId("node-2").empty(); }, absl::Seconds(30)))
      << standby.Stderr();
  EXPECT_TRUE(LogSays(standby, "initialised node node-2"));
}

TEST(LeaderElectionTest, SigtermReleasesTheLeaseLogsOutAndExitsZero) {
  auto c = Cluster::Start("sigterm");
  ASSERT_TRUE(c.ok()) << c.status();
  Cluster& cl = **c;
  int port = 0;
  auto p = cl.StartCcm("ccm", &port);
  ASSERT_TRUE(p.ok()) << p.status();
  ASSERT_TRUE(cl.RegisterNode("node-1").ok());
  ASSERT_TRUE(WaitFor([&] { return !cl.ProviderId("node-1").empty(); }, absl::Seconds(30)))
      << (*p)->Stderr();
  ASSERT_FALSE(cl.LeaseHolder().empty());
  ASSERT_TRUE(cl.vcsim().ResetCounters().ok());

  const absl::Time t0 = absl::Now();
  (*p)->Signal(SIGTERM);
  std::optional<int> code = (*p)->WaitExit(absl::Seconds(10));
  const absl::Duration took = absl::Now() - t0;
  ASSERT_TRUE(code.has_value()) << "still running 10 s after SIGTERM\n" << (*p)->Stderr();
  EXPECT_EQ(*code, 0) << (*p)->Stderr();
  EXPECT_LT(took, absl::Seconds(5));
  std::cout << "exit after SIGTERM: " << absl::FormatDuration(took) << "\n";
  EXPECT_EQ(cl.LeaseHolder(), "") << "the lease is released (holderIdentity emptied)";
  auto soap = cl.vcsim().SoapCounters();
  ASSERT_TRUE(soap.ok());
  EXPECT_GE((*soap)["Logout"], 1) << "SOAP SessionManager.Logout";
  auto rest = cl.vcsim().RestCounters();
  ASSERT_TRUE(rest.ok());
  EXPECT_GE((*rest)["DELETE /rest/com/vmware/cis/session"], 1) << "vAPI session deleted";
  EXPECT_TRUE(absl::StrContains((*p)->Stderr(), "logged out of 1 vCenter(s)"));
}

// Issue 43: the same stop while vCenter hangs (accepts connections, answers nothing: a storage
// outage, a half-dead load balancer). Before, the inventory stream's long poll and the logout
// held the process 156 s, past the pod's 30 s grace: the Lease was never released.
TEST(LeaderElectionTest, SigtermWithAHungVCenterStillReleasesTheLeaseAndExitsWithin5s) {
  auto c = Cluster::Start("sigterm-hung");
  ASSERT_TRUE(c.ok()) << c.status();
  Cluster& cl = **c;
  int port = 0;
  auto p = cl.StartCcm("ccm", &port, {"--vcenter-hang-timeout=2s"});
  ASSERT_TRUE(p.ok()) << p.status();
  ASSERT_TRUE(cl.RegisterNode("node-1").ok());
  ASSERT_TRUE(WaitFor([&] { return !cl.ProviderId("node-1").empty(); }, absl::Seconds(30)))
      << (*p)->Stderr();
  ASSERT_FALSE(cl.LeaseHolder().empty());
  // The vCenter is seen usable first (its status is polled every 5 s).
  ASSERT_TRUE(WaitFor(
      [&] { return MetricValue(Metrics(port), "cloudprovider_vsphere_vcenter_ready{") == 1; },
      absl::Seconds(20)))
      << Metrics(port);
  ASSERT_TRUE(cl.vcsim().SetFault("blackhole").ok());
  const absl::Time hung = absl::Now();
  // A Node that registers now is being initialised against the hung vCenter.
  ASSERT_TRUE(cl.RegisterNode("node-2").ok());

  // Reported within --vcenter-hang-timeout plus the 5 s status poll: /healthz names it, the
  // gauge drops to 0, a Warning Event says why.
  const std::string healthz = absl::StrCat("https://127.0.0.1:", port, "/healthz?verbose");
  ASSERT_TRUE(WaitFor(
      [&] {
        return MetricValue(Metrics(port), "cloudprovider_vsphere_vcenter_ready{") == 0 &&
               !EventMessage(cl.emu(), "VCenterUnavailable").empty();
      },
      absl::Seconds(20)))
      << Metrics(port) << (*p)->Stderr();
  const absl::Duration reported = absl::Now() - hung;
  std::cout << "hung vCenter reported after " << absl::FormatDuration(reported) << "\n";
  EXPECT_LT(reported, absl::Seconds(2 + 5 + 2));
  auto health = HttpsGet(healthz);
  ASSERT_TRUE(health.ok()) << health.status();
  EXPECT_EQ(health->status, 500);
  EXPECT_TRUE(absl::StrContains(health->body, "is not answering")) << health->body;
  EXPECT_TRUE(absl::StrContains((*p)->Stderr(), "is not answering")) << (*p)->Stderr();
  EXPECT_TRUE(absl::StrContains(EventMessage(cl.emu(), "VCenterUnavailable"), "is not answering"));

  const absl::Time t0 = absl::Now();
  (*p)->Signal(SIGTERM);
  std::optional<int> code = (*p)->WaitExit(absl::Seconds(5));
  const absl::Duration took = absl::Now() - t0;
  ASSERT_TRUE(code.has_value()) << "still running 5 s after SIGTERM\n" << (*p)->Stderr();
  EXPECT_EQ(*code, 0) << (*p)->Stderr();
  std::cout << "exit after SIGTERM, vCenter hung: " << absl::FormatDuration(took) << "\n";
  EXPECT_EQ(cl.LeaseHolder(), "") << "the lease is released (holderIdentity emptied)";
  ASSERT_TRUE(cl.vcsim().SetFault("none").ok());
}

// Issue 43, "API server hangs": every Kubernetes request is held (the watch streams, the lease
// renewal, the release). SIGTERM still ends the process within 5 s; the Lease cannot be
// released, so another replica takes over when it expires, as after a crash.
TEST(LeaderElectionTest, SigtermWithAHungApiServerExitsWithin5s) {
  auto c = Cluster::Start("sigterm-hung-api");
  ASSERT_TRUE(c.ok()) << c.status();
  Cluster& cl = **c;
  int port = 0;
  auto p = cl.StartCcm("ccm", &port);
  ASSERT_TRUE(p.ok()) << p.status();
  ASSERT_TRUE(cl.RegisterNode("node-1").ok());
  ASSERT_TRUE(WaitFor([&] { return !cl.ProviderId("node-1").empty(); }, absl::Seconds(30)))
      << (*p)->Stderr();
  cl.emu().InjectDelay({.delay = absl::InfiniteDuration()});
  const absl::Time t0 = absl::Now();
  (*p)->Signal(SIGTERM);
  std::optional<int> code = (*p)->WaitExit(absl::Seconds(5));
  const absl::Duration took = absl::Now() - t0;
  cl.emu().ClearFaults();
  ASSERT_TRUE(code.has_value()) << "still running 5 s after SIGTERM\n" << (*p)->Stderr();
  EXPECT_EQ(*code, 0) << (*p)->Stderr();
  std::cout << "exit after SIGTERM, API server hung: " << absl::FormatDuration(took) << "\n";
}

// Issue 15, row 7: another holder overwrites the Lease while our binary leads (a replica that
// judged it expired, or an admin), with a renewTime in the future. Like the Go binary, ours
// finds out at its next renewal, stops every controller, exits 1 (to restart as a candidate),
// and writes nothing after that: no Node write, and the other holder's Lease is left alone.
TEST(LeaderElectionTest, LeaseTakenByAnotherHolderStopsControllersAndExitsNonZero) {
  auto c = Cluster::Start("lease-lost");
  ASSERT_TRUE(c.ok()) << c.status();
  Cluster& cl = **c;
  int port = 0;
  auto p = cl.StartCcm("ccm", &port);
  ASSERT_TRUE(p.ok()) << p.status();
  ASSERT_TRUE(cl.RegisterNode("node-1").ok());
  ASSERT_TRUE(WaitFor([&] { return !cl.ProviderId("node-1").empty(); }, absl::Seconds(30)))
      << (*p)->Stderr();
  const std::string us = cl.LeaseHolder();
  ASSERT_FALSE(us.empty());

  // Keep the node controller busy writing: node-2's status PATCH fails for ever, so its sync is
  // retried with backoff until the controllers stop.
  cl.emu().InjectError(
      {.code = 500, .count = -1, .method = "patch", .path_substring = "/api/v1/nodes/node-2"});
  ASSERT_TRUE(cl.RegisterNode("node-2").ok());
  ASSERT_TRUE(
      WaitFor([&] { return cl.emu().RequestCount("patch nodes/status") >= 3; }, absl::Seconds(10)))
      << (*p)->Stderr();

  auto lease = cl.emu().Get("leases", "kube-system", "cloud-controller-manager");
  ASSERT_TRUE(lease.ok()) << lease.status();
  const absl::Time taken = absl::Now();
  auto micro = [](absl::Time t) {
    return absl::FormatTime("%Y-%m-%dT%H:%M:%E6SZ", t, absl::UTCTimeZone());
  };
  nlohmann::json& spec = (*lease)["spec"];
  spec["holderIdentity"] = "another-holder";
  spec["leaseDurationSeconds"] = 60;
  spec["acquireTime"] = micro(taken);
  spec["renewTime"] = micro(taken + absl::Seconds(60));
  spec["leaseTransitions"] = spec.value("leaseTransitions", 0) + 1;
  ASSERT_TRUE(cl.emu().Put("leases", *lease).ok());

  std::optional<int> code = (*p)->WaitExit(absl::Seconds(15));
  const absl::Duration took = absl::Now() - taken;
  ASSERT_TRUE(code.has_value()) << "still running 15 s after losing the lease\n" << (*p)->Stderr();
  EXPECT_EQ(*code, 1) << (*p)->Stderr();
  // One retry period (1 s + up to 120 % jitter) until the next renewal finds the new holder.
  EXPECT_LT(took, absl::Seconds(5));
  std::cout << "RECOVERY leader-lease-lost (exit after the lease was taken): "
            << absl::ToInt64Milliseconds(took) << " ms" << std::endl;
  EXPECT_TRUE(absl::StrContains((*p)->Stderr(), "leader election lost: lease"));
  EXPECT_TRUE(absl::StrContains((*p)->Stderr(), "every controller stopped"));
  EXPECT_EQ(cl.LeaseHolder(), "another-holder") << "the loser must not release or retake it";

  // The moment the binary learned of the loss: its first read of the Lease after the takeover
  // (its optimistic renewal got 409 first). It writes nothing after that, to Nodes, Events or
  // the Lease (50 ms grace for a request already on its way when the answer arrived).
  const std::vector<testing::RequestRecord> log = cl.emu().RequestLog();
  absl::Time lost = absl::InfiniteFuture();
  for (const auto& r : log) {
    if (r.key == "get leases" && r.time > taken) {
      lost = r.answered;
      break;
    }
  }
  ASSERT_NE(lost, absl::InfiniteFuture()) << "the binary never read the Lease again";
  int node_writes_before = 0;
  for (const auto& r : log) {
    if (r.method == "GET") continue;
    if (r.time <= lost && absl::StrContains(r.key, " nodes")) ++node_writes_before;
    EXPECT_LE(r.time, lost + absl::Milliseconds(50))
        << r.method << " " << r.path << " " << absl::ToInt64Milliseconds(r.time - lost)
        << " ms after the loss was known";
  }
  EXPECT_GE(node_writes_before, 3) << "the controllers were writing until then";
}

}  // namespace
}  // namespace ccm::integration
