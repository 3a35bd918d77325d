// CSI at scale (issue 25): the real vsphere-csi-driver binary against the simulator with N CNS
// volumes of the cluster and N PV + PVC + Running Pod objects in the API emulator. Prints, each
// against its goal:
// - controller: ListVolumes of every volume with max_entries 100 (as the external-attacher pages):
//   vCenter requests, time, controller CPU, its RSS before, at the peak and after the listing;
// - syncer: its first start (writes every volume's metadata), then a restart with everything in
//   sync: CNS queries and updates until its first full sync passed, the time, its RSS.
// Asserts nothing.
//
//   csi_scale_bench [volumes=1000]
#include <httplib.h>
#include <signal.h>
#include <unistd.h>

#include <fstream>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "csi/proto/csi.grpc.pb.h"
#include "fixtures/vcsim/sim_client_options.h"
#include "integration/child_process.h"
#include "integration/csi/syncer_env.h"
#include "testing/csi_socket.h"
#include "testing/eventually.h"
#include "testing/free_port.h"
#include "vsphere/cns/cns_client.h"
#include "vsphere/cns/wire.h"
#include "vsphere/property_collector.h"

namespace ccm::csi::syncer::testing {
namespace {

using ::ccm::integration::ChildProcess;
using ::ccm::testing::Eventually;

// A /proc/PID/status field in kB (VmRSS, VmHWM).
long StatusKb(pid_t pid, const std::string& field) {
  std::ifstream in(absl::StrCat("/proc/", pid, "/status"));
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(field + ":", 0) != 0) continue;
    long kb = 0;
    std::vector<std::string> parts = absl::StrSplit(line, ' ', absl::SkipWhitespace());
    if (parts.size() >= 2 && absl::SimpleAtoi(parts[1], &kb)) return kb;
  }
  return -1;
}

// User + system CPU seconds of `pid` so far.
double CpuSeconds(pid_t pid) {
  std::ifstream in(absl::StrCat("/proc/", pid, "/stat"));
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::string> f = absl::StrSplit(stat.substr(stat.rfind(')') + 2), ' ');
  double ticks = 0;
  for (int i : {11, 12}) ticks += std::stod(f.at(i));  // utime, stime (fields 14, 15)
  return ticks / static_cast<double>(sysconf(_SC_CLK_TCK));
}

double Mb(long kb) { return kb / 1024.0; }

// CNS volumes of the cluster, 500 per CnsCreateVolume; their IDs.
std::vector<std::string> CreateVolumes(SyncerEnv& env, int n) {
  vsphere::StaticCredentialSource creds{vsphere::Credentials{"admin", Secret("secret")}};
  vsphere::Client vim(ccm::testing::SimClientOptions(env.vcsim().info()), &creds);
  vsphere::cns::CnsClient cns(vim);
  auto ds = vsphere::RetrieveAllOfType(vim, "Datastore", {"name"});
  for (int done = 0; done < n;) {
    std::vector<vsphere::cns::CreateSpec> specs;
    for (; done < n && specs.size() < 500; ++done) {
      vsphere::cns::CreateSpec s;
      s.name = absl::StrCat("pvc-", done);
      s.capacity_mb = 1;
      s.datastores = {ds->front().obj};
      s.metadata.container_cluster.cluster_id = kClusterId;
      s.metadata.container_cluster.vsphere_user = "admin";
      specs.push_back(std::move(s));
    }
    vsphere::cns::Operation op{"CnsCreateVolume",
                               vsphere::cns::CreateVolumeArgs(specs),
                               "bulk create",
                               {},
                               "",
                               {},
                               0,
                               true,
                               {}};
    auto task = cns.Start(op);
    if (task.ok()) (void)cns.Wait(*task, op.what);
  }
  std::vector<std::string> ids;
  vsphere::cns::QueryFilter f;
  f.cursor = vsphere::cns::Cursor{0, 1000, 0};
  while (true) {
    auto r = cns.QueryVolume(f);
    if (!r.ok() || r->volumes.empty()) break;
    for (const auto& v : r->volumes) ids.push_back(v.volume_id);
    if (r->cursor.offset >= r->cursor.total_records) break;
    f.cursor->offset = r->cursor.offset;
  }
  return ids;
}

int SoapTotal(SyncerEnv& env) {
  int total = 0;
  for (const auto& [m, n] : env.vcsim().SoapCounters().value_or(std::map<std::string, int>{})) {
    total += n;
  }
  for (const auto& [m, n] : env.vcsim().RestCounters().value_or(std::map<std::string, int>{})) {
    total += n;
  }
  return total;
}

// CNS calls by method so far (the fixture's counters are not reset with the SOAP ones).
std::map<std::string, int> CnsCalls(SyncerEnv& env) {
  return env.vcsim().CnsCounters().value_or(std::map<std::string, int>{});
}

// Waits until the simulator's CNS counters stay the same for a second (the syncer's workers are
// done), at most `limit`.
void BenchController(SyncerEnv& env, const std::string& conf, int n) {
  const std::string sock = env.dir() + "/csi.sock";
  auto p = ChildProcess::Start(
      {"/usr/bin/env", "-i", "X_CSI_MODE=controller", "CSI_ENDPOINT=unix://" + sock,
       "VSPHERE_CSI_CONFIG=" + conf, "KUBECONFIG=" + env.kubeconfig(),
       "CSI_NAMESPACE=vmware-system-csi", CSI_DRIVER_BINARY, "--metrics-port=0"},
      env.dir() + "/controller");
  if (!p.ok()) {
    std::cout << "controller: " << p.status() << "\n";
    return;
  }
  ChildProcess& c = **p;
  auto identity = ::csi::v1::Identity::NewStub(csi::testing::UnixChannel(sock));
  Eventually(
      [&] {
        grpc::ClientContext ctx;
        ::csi::v1::ProbeRequest req;
        ::csi::v1::ProbeResponse resp;
        return identity->Probe(&ctx, req, &resp).ok() && resp.ready().value();
      },
      absl::Minutes(5), absl::Milliseconds(20));
  const long rss_before = StatusKb(c.pid(), "VmRSS");
  (void)env.vcsim().ResetCounters();
  auto stub = ::csi::v1::Controller::NewStub(csi::testing::UnixChannel(sock));
  const int queries0 = CnsCalls(env)["CnsQueryVolume"];
  const double cpu0 = CpuSeconds(c.pid());
  const absl::Time start = absl::Now();
  std::string token;
  int pages = 0, entries = 0;
  grpc::Status s;
  do {
    ::csi::v1::ListVolumesResponse resp;
    grpc::ClientContext ctx;
    ::csi::v1::ListVolumesRequest req;
    req.set_starting_token(token);
    req.set_max_entries(100);
    s = stub->ListVolumes(&ctx, req, &resp);
    if (!s.ok()) break;
    ++pages;
    entries += resp.entries_size();
    token = resp.next_token();
  } while (!token.empty());
  const double secs = absl::ToDoubleSeconds(absl::Now() - start);
  const double cpu = CpuSeconds(c.pid()) - cpu0;
  const int requests = SoapTotal(env);
  const int queries = CnsCalls(env)["CnsQueryVolume"] - queries0;
  std::cout << "== controller ListVolumes, max_entries 100, " << n << " volumes\n";
  if (!s.ok()) std::cout << "   failed: " << s.error_message() << "\n";
  std::cout << "   " << entries << " entries in " << pages << " pages, " << secs
            << " s, controller CPU " << cpu << " s (goal <= 2 s)\n"
            << "   vCenter requests " << requests << " (" << queries
            << " CnsQueryVolume; goal <= 15)\n"
            << "   controller RSS: before " << Mb(rss_before) << " MB, peak (VmHWM) "
            << Mb(StatusKb(c.pid(), "VmHWM")) << " MB, after " << Mb(StatusKb(c.pid(), "VmRSS"))
            << " MB (heap and stacks " << Mb(StatusKb(c.pid(), "RssAnon")) << " MB, program pages "
            << Mb(StatusKb(c.pid(), "RssFile"))
            << " MB; goal <= 40 MB, back to the steady state)\n";
  c.Signal(SIGTERM);
  c.WaitExit(absl::Seconds(10));
}

// The syncer's metric `name` (first sample whose line starts with it), or -1.
double Metric(int port, const std::string& name) {
  httplib::Client http("127.0.0.1", port);
  auto r = http.Get("/metrics");
  if (!r || r->status != 200) return -1;
  for (absl::string_view line : absl::StrSplit(r->body, '\n')) {
    if (!absl::StartsWith(line, name)) continue;
    double v = 0;
    if (absl::SimpleAtod(line.substr(line.rfind(' ') + 1), &v)) return v;
  }
  return -1;
}

std::unique_ptr<ChildProcess> StartSyncer(SyncerEnv& env, const std::string& conf, int port,
                                          const std::string& name) {
  auto p = ChildProcess::Start(
      {"/usr/bin/env", "-i", "X_CSI_MODE=syncer", "VSPHERE_CSI_CONFIG=" + conf,
       "FULL_SYNC_INTERVAL_MINUTES=30", "POD_NAMESPACE=vmware-system-csi", CSI_DRIVER_BINARY,
       "--leader-election", "--kubeconfig=" + env.kubeconfig(),
       absl::StrCat("--metrics-port=", port), "--metrics-bind-address=127.0.0.1"},
      env.dir() + "/" + name);
  return p.ok() ? *std::move(p) : nullptr;
}

void WaitCnsQuiet(SyncerEnv& env, absl::Duration limit) {
  const absl::Time end = absl::Now() + limit;
  std::map<std::string, int> last = CnsCalls(env);
  while (absl::Now() < end) {
    absl::SleepFor(absl::Seconds(1));
    std::map<std::string, int> now = CnsCalls(env);
    if (now == last) return;
    last = std::move(now);
  }
}

void BenchSyncer(SyncerEnv& env, const std::string& conf, int n) {
  const std::string passed = "vsphere_full_sync_ops_histogram_count{status=\"pass\"}";
  for (const char* run :
       {"first start (writes every volume's metadata)", "restart, every volume already in sync"}) {
    (void)env.vcsim().ResetCounters();
    const std::map<std::string, int> cns0 = CnsCalls(env);
    const int port = ccm::testing::FreePort();
    const absl::Time start = absl::Now();
    std::unique_ptr<ChildProcess> p = StartSyncer(env, conf, port, "syncer");
    if (p == nullptr) return;
    const bool done = Eventually([&] { return Metric(port, passed) >= 1; }, absl::Minutes(15),
                                 absl::Milliseconds(20));
    const double synced = absl::ToDoubleSeconds(absl::Now() - start);
    WaitCnsQuiet(env, absl::Minutes(15));
    const double quiet = absl::ToDoubleSeconds(absl::Now() - start);
    std::map<std::string, int> cns = CnsCalls(env);
    for (const auto& [m, c] : cns0) cns[m] -= c;
    std::cout << "== syncer " << run << ", " << n << " PV + PVC + Pod\n"
              << "   first full sync " << (done ? "passed" : "NOT passed") << " " << synced
              << " s after the start, CNS quiet after " << quiet << " s (1 s of it waiting)\n"
              << "   CnsQueryVolume " << cns["CnsQueryVolume"] << ", CnsUpdateVolumeMetadata "
              << cns["CnsUpdateVolumeMetadata"] << ", vCenter requests " << SoapTotal(env)
              << " (restart goal: <= 15 queries)\n"
              << "   syncer RSS " << Mb(StatusKb(p->pid(), "VmRSS")) << " MB (heap and stacks "
              << Mb(StatusKb(p->pid(), "RssAnon")) << " MB, program pages "
              << Mb(StatusKb(p->pid(), "RssFile")) << " MB), peak "
              << Mb(StatusKb(p->pid(), "VmHWM")) << " MB (goal <= 60 MB)\n";
    p->Signal(SIGTERM);
    p->WaitExit(absl::Seconds(30));
  }
}

int Main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 1000;
  SyncerEnv env;
  if (absl::Status s = env.Start(/*start_syncer=*/false); !s.ok()) {
    std::cerr << s << "\n";
    return 1;
  }
  absl::Time t = absl::Now();
  const std::vector<std::string> ids = CreateVolumes(env, n);
  std::cout << "set-up: " << ids.size() << " CNS volumes in " << absl::Now() - t;
  t = absl::Now();
  for (size_t i = 0; i < ids.size(); ++i) {
    const std::string pv = absl::StrCat("pv-", i), claim = absl::StrCat("claim-", i);
    (void)env.PutPv(pv, ids[i], "ns1", claim);
    (void)env.PutPvc("ns1", claim, pv);
    (void)env.PutPod("ns1", absl::StrCat("pod-", i), claim);
  }
  std::cout << ", PV/PVC/Pod objects in " << absl::Now() - t << "\n";
  const std::string conf = env.dir() + "/csi-vsphere.conf";
  env.WriteCsiConf(conf);
  BenchController(env, conf, n);
  BenchSyncer(env, conf, n);
  return 0;
}

}  // namespace
}  // namespace ccm::csi::syncer::testing

int main(int argc, char** argv) { return ccm::csi::syncer::testing::Main(argc, argv); }
