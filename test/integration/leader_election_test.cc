// Two replicas of the real binary against one emulator and one simulator: exactly one leads and
// acts; SIGKILL of the leader hands the lease to the other within the lease duration; SIGTERM
// releases the lease, logs out of vCenter and exits 0 within seconds.
#include <signal.h>

#include <gtest/gtest.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
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

bool Leads(int port) {
  return MetricValue(Metrics(port), "leader_election_master_status{") == 1;
}

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

}  // namespace
}  // namespace ccm::integration
