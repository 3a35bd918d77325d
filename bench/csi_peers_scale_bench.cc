// CSI at scale with the real sidecars (issue 55): the real kube-apiserver and
// kube-controller-manager (PV binder, attach-detach), the real external-provisioner and
// external-attacher with the default overlay's arguments, our controller and syncer as the
// manifests run them, and the vCenter simulator's CNS with CNS tasks of `task_ms`. N claims
// (Immediate binding) and N Pods with nodeNames spread over the node VMs (at most 59 disks each)
// are created at once; printed: when all claims were Bound and all VolumeAttachments attached
// (from the first claim's creation), the vCenter requests per operation by method, the
// controller's and syncer's peak RSS, the operation records; then the Pods and claims are
// deleted and the same is printed for the detaches and deletes, with what is left behind.
// The Kubernetes requests of each program (by its user agent; ours also by verb and resource,
// operation records included) come from the server's audit log (Metadata level, batched).
// Needs ../shared/peers (or $PEERS_DIR); without it prints one line and exits 0. Asserts nothing.
//
//   csi_peers_scale_bench [claims=1000] [nodes=50] [task_ms=100]
//   [provisioner=csi-provisioner-v5.2.0]
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "kube/resource.h"
#include "peers/csi_stack.h"
#include "peers/peers.h"

namespace ccm::peers {
namespace {

using json = nlohmann::json;
constexpr char kNs[] = "bench";
constexpr int kCreators = 8;

struct Args {
  int claims = 1000;
  int nodes = 50;
  int task_ms = 100;
  std::string provisioner = "csi-provisioner-v5.2.0";
  int kcm_qps = 0;  // kube-controller-manager's --kube-api-qps/burst; 0: its defaults (20/30)
};

std::string NodeName(int i) { return absl::StrCat("node-", i); }

std::string Spec(const Args& a) {
  json vms = json::array();
  for (int i = 1; i <= a.nodes; ++i) vms.push_back({{"name", NodeName(i)}, {"cluster", "c1"}});
  json spec = {{"users", {{"csi-user", "csi-pass"}}},
               {"datacenters",
                {{{"name", "dc1"},
                  {"clusters", {{{"name", "c1"}, {"hosts", 4}}}},
                  {"vms", vms},
                  {"datastores",
                   {{{"name", "ds1"},
                     {"capacity_mb", static_cast<int64_t>(a.claims) * 2048},
                     {"clusters", {"c1"}}}}}}}}};
  return spec.dump();
}

json Claim(int i) {
  return {{"apiVersion", "v1"},
          {"kind", "PersistentVolumeClaim"},
          {"metadata", {{"name", absl::StrCat("claim-", i)}, {"namespace", kNs}}},
          {"spec",
           {{"accessModes", {"ReadWriteOnce"}},
            {"storageClassName", "block"},
            {"resources", {{"requests", {{"storage", "1Gi"}}}}}}}};
}

json PodOn(int i, const std::string& node) {
  const std::string claim = absl::StrCat("claim-", i);
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"name", absl::StrCat("pod-", i)}, {"namespace", kNs}}},
          {"spec",
           {{"nodeName", node},
            {"containers",
             {{{"name", "app"},
               {"image", "busybox"},
               {"volumeMounts", {{{"name", "data"}, {"mountPath", "/data"}}}}}}},
            {"volumes", {{{"name", "data"}, {"persistentVolumeClaim", {{"claimName", claim}}}}}}}}};
}

// VmHWM of a process, in kB; -1 when it cannot be read.
long PeakRssKb(pid_t pid) {
  std::ifstream in(absl::StrCat("/proc/", pid, "/status"));
  std::string line;
  long kb = -1;
  while (std::getline(in, line)) {
    if (std::sscanf(line.c_str(), "VmHWM: %ld kB", &kb) == 1) return kb;
  }
  return -1;
}

int Count(kube::Client& c, const kube::Resource& r, const std::string& ns,
          const std::function<bool(const json&)>& pred) {
  kube::ListOptions o;
  o.limit = 500;
  int n = 0;
  absl::StatusOr<kube::ListResult> all = c.ListAll(r, ns, o, [&](json& obj) {
    if (pred(obj)) ++n;
    obj = json();
  });
  return all.ok() ? n : -1;
}

// Waits (polling every 500 ms, at most `limit`) until `done` holds; the seconds it took from
// `from`, or -1.
double WaitFor(absl::Time from, absl::Duration limit, const std::function<bool()>& done) {
  while (absl::Now() - from < limit) {
    if (done()) return absl::ToDoubleSeconds(absl::Now() - from);
    absl::SleepFor(absl::Milliseconds(500));
  }
  return -1;
}

// The simulator's CNS and SOAP counters since the last reset, printed per operation (the CNS
// counters are not reset: `cns_before` holds them at the phase's start, and is updated).
void PrintRequests(::ccm::testing::VcsimProcess& sim, const char* phase, int operations,
                   std::map<std::string, int>& cns_before) {
  absl::StatusOr<int> total = sim.TotalRequests();
  absl::StatusOr<std::map<std::string, int>> soap = sim.SoapCounters();
  std::printf("%s: %d vCenter requests for %d operations (%.2f per operation)\n", phase,
              total.ok() ? *total : -1, operations,
              total.ok() && operations > 0 ? static_cast<double>(*total) / operations : 0.0);
  absl::StatusOr<std::map<std::string, int>> cns = sim.CnsCounters();
  if (soap.ok() && cns.ok()) {
    for (const auto& [method, n] : *cns) {
      if (n > cns_before[method]) (*soap)[method] = n - cns_before[method];
    }
    cns_before = *cns;
  }
  if (soap.ok()) {
    for (const auto& [method, n] : *soap) {
      std::printf("  %-28s %6d  (%.2f per operation)\n", method.c_str(), n,
                  static_cast<double>(n) / operations);
    }
  }
  // By the User-Agent each component sends ("k8s-csi-useragent-<cluster-id>-controller", ...).
  if (absl::StatusOr<std::map<std::string, int>> agents = sim.RequestsByAgent(); agents.ok()) {
    std::printf("%s: vCenter requests by sender\n", phase);
    for (const auto& [agent, n] : *agents) {
      std::printf("  %-44s %6d  (%.2f per operation)\n", agent.empty() ? "(none)" : agent.c_str(),
                  n, static_cast<double>(n) / operations);
    }
  }
  (void)sim.ResetCounters();
}

// The server's audit log: one line per request once it is answered.
struct AuditLog {
  std::string policy, path;
  std::streamoff read = 0;  // what the last Print counted up to
};

AuditLog MakeAuditLog() {
  char tmpl[] = "/tmp/csi-scale-audit-XXXXXX";
  const std::string dir = mkdtemp(tmpl);
  AuditLog log{dir + "/policy.yaml", dir + "/audit.log"};
  std::ofstream(log.policy) << "apiVersion: audit.k8s.io/v1\nkind: Policy\n"
                               "omitStages: [RequestReceived, ResponseStarted]\n"
                               "rules:\n- level: Metadata\n";
  return log;
}

std::vector<std::string> AuditFlags(const AuditLog& log) {
  return {"--audit-policy-file=" + log.policy,
          "--audit-log-path=" + log.path,
          "--audit-log-mode=batch",
          "--audit-log-batch-max-wait=1s",
          "--audit-log-maxsize=4000",
          "--audit-log-maxbackup=1"};
}

// From now on (what the set-up asked is not counted): waits out the batch's flush first.
void SkipAudit(AuditLog& log) {
  absl::SleepFor(absl::Seconds(2));
  std::ifstream in(log.path, std::ios::ate);
  if (in) log.read = in.tellg();
}

// The requests answered since the last call, per program (user agent up to its '/') and, for
// the CSI driver's, per verb and resource; per operation.
void PrintKubeRequests(AuditLog& log, const char* phase, int operations) {
  absl::SleepFor(absl::Seconds(2));  // the last batch written
  std::ifstream in(log.path);
  in.seekg(log.read);
  std::map<std::string, int> by_agent, ours;
  std::string line;
  while (std::getline(in, line)) {
    json e = json::parse(line, nullptr, false);
    if (!e.is_object()) continue;
    const std::string agent = e.value("userAgent", "");
    const std::string program = agent.substr(0, agent.find('/'));
    ++by_agent[program];
    if (absl::StrContains(program, "vsphere-csi")) {
      const json& ref = e.value("objectRef", json::object());
      ++ours[absl::StrCat(e.value("verb", ""), " ", ref.value("resource", ""),
                          ref.contains("subresource") ? "/" : "", ref.value("subresource", ""))];
    }
  }
  in.clear();
  log.read = in.tellg() > 0 ? static_cast<std::streamoff>(in.tellg()) : log.read;
  std::printf("%s: Kubernetes requests by program (the server's audit log):\n", phase);
  for (const auto& [program, n] : by_agent) {
    std::printf("  %-40s %6d  (%.2f per operation)\n", program.c_str(), n,
                static_cast<double>(n) / operations);
  }
  std::printf("  the CSI driver's (controller and syncer), by verb and resource:\n");
  for (const auto& [what, n] : ours) {
    std::printf("    %-38s %6d  (%.2f per operation)\n", what.c_str(), n,
                static_cast<double>(n) / operations);
  }
}

int RunBench(const Args& a) {
  AuditLog audit = MakeAuditLog();
  CsiStackOptions o;
  o.spec = Spec(a);
  o.overlay = "default";
  o.apiserver_flags = AuditFlags(audit);
  if (a.kcm_qps > 0) {
    o.kcm_flags = {absl::StrCat("--kube-api-qps=", a.kcm_qps),
                   absl::StrCat("--kube-api-burst=", a.kcm_qps)};
  }
  absl::StatusOr<std::unique_ptr<CsiStack>> started = CsiStack::Start("scale-bench", o);
  if (!started.ok()) {
    std::fprintf(stderr, "csi_peers_scale_bench: %s\n", started.status().ToString().c_str());
    return 1;
  }
  CsiStack& stack = **started;
  kube::RestClient& c = stack.client();
  for (int i = 1; i <= a.nodes; ++i) {
    if (absl::Status s = stack.AddNodeObjects(NodeName(i), 59); !s.ok()) {
      std::fprintf(stderr, "node %d: %s\n", i, s.ToString().c_str());
      return 1;
    }
  }
  (void)stack.kube().Kubectl({"create", "namespace", kNs});
  const kube::Resource sa{"", "v1", "serviceaccounts", "ServiceAccount", true};
  WaitObject(
      c, sa, kNs, "default", [](const json&) { return true; }, absl::Seconds(60));
  for (const auto& [container, program] : std::vector<std::pair<std::string, std::string>>{
           {"csi-attacher", "csi-attacher-v4.8.1"}, {"csi-provisioner", a.provisioner}}) {
    if (auto p = stack.StartSidecar(container, program, {}); !p.ok()) {
      std::fprintf(stderr, "%s: %s\n", program.c_str(), p.status().ToString().c_str());
      return 1;
    }
  }
  // Every CNS task takes the time: the changes, the snapshot check before a delete and the
  // syncer's metadata updates.
  for (const char* m : {"CnsCreateVolume", "CnsAttachVolume", "CnsDetachVolume", "CnsDeleteVolume",
                        "CnsQuerySnapshots", "CnsUpdateVolumeMetadata"}) {
    (void)stack.vcsim().SetCnsDelay(m, a.task_ms);
  }
  json sc = {{"apiVersion", "storage.k8s.io/v1"}, {"kind", "StorageClass"},
             {"metadata", {{"name", "block"}}},   {"provisioner", kDriver},
             {"reclaimPolicy", "Delete"},         {"volumeBindingMode", "Immediate"}};
  (void)c.Create(kube::StorageClasses(), "", sc);
  std::printf(
      "csi_peers_scale_bench: %d claims and Pods over %d node VMs, CNS tasks of %d ms; "
      "kube-apiserver %s, %s, csi-attacher-v4.8.1\n",
      a.claims, a.nodes, a.task_ms, stack.kube().version().c_str(), a.provisioner.c_str());
  (void)stack.vcsim().ResetCounters();
  std::map<std::string, int> cns_calls =
      stack.vcsim().CnsCounters().value_or(std::map<std::string, int>());

  SkipAudit(audit);
  // Created as a user's many clients would (kubectl apply of a big file is one client): 8 at a
  // time, each claim followed by its Pod.
  const absl::Time t0 = absl::Now();
  std::vector<std::thread> creators;
  for (int t = 0; t < kCreators; ++t) {
    creators.emplace_back([&, t] {
      for (int i = t; i < a.claims; i += kCreators) {
        (void)c.Create(kube::PersistentVolumeClaims(), kNs, Claim(i));
        (void)c.Create(kube::Pods(), kNs, PodOn(i, NodeName(1 + i % a.nodes)));
      }
    });
  }
  for (std::thread& t : creators) t.join();
  std::printf("created: %.1f s\n", absl::ToDoubleSeconds(absl::Now() - t0));
  const absl::Duration limit = absl::Seconds(900);
  auto all = [](const json&) { return true; };
  const double provisioned =
      WaitFor(t0, limit, [&] { return Count(c, kube::PersistentVolumes(), "", all) == a.claims; });
  std::printf("all %d PVs provisioned after %.1f s (external-provisioner and our CreateVolume)\n",
              a.claims, provisioned);
  const double bound = WaitFor(t0, limit, [&] {
    return Count(c, kube::PersistentVolumeClaims(), kNs, [](const json& p) {
             return p["status"].value("phase", "") == "Bound";
           }) == a.claims;
  });
  std::printf("all %d claims Bound after %.1f s\n", a.claims, bound);
  const double attached = WaitFor(t0, limit, [&] {
    return Count(c, kube::VolumeAttachments(), "",
                 [](const json& va) { return va["status"].value("attached", false); }) == a.claims;
  });
  std::printf("all %d VolumeAttachments attached after %.1f s (goal: 60 s)\n", a.claims, attached);
  PrintRequests(stack.vcsim(), "create + attach", 2 * a.claims, cns_calls);
  PrintKubeRequests(audit, "create + attach", 2 * a.claims);
  std::printf("peak RSS: controller %ld kB, syncer %ld kB\n",
              PeakRssKb(stack.controller_process().pid()), PeakRssKb(stack.syncer_process().pid()));
  const kube::Resource records{"cns.vmware.com", "v1alpha1", "cnsvolumeoperationrequests",
                               "CnsVolumeOperationRequest", true};
  std::printf("operation records: %d\n", Count(c, records, kCsiNamespace, all));

  const absl::Time t1 = absl::Now();
  (void)stack.kube().Kubectl(
      {"delete", "pods", "--all", "-n", kNs, "--grace-period=0", "--force", "--wait=false"});
  const double detached =
      WaitFor(t1, limit, [&] { return Count(c, kube::VolumeAttachments(), "", all) == 0; });
  std::printf("all detached (VolumeAttachments gone) after %.1f s\n", detached);
  (void)stack.kube().Kubectl({"delete", "pvc", "--all", "-n", kNs, "--wait=false"});
  const double deleted =
      WaitFor(t1, limit, [&] { return Count(c, kube::PersistentVolumes(), "", all) == 0; });
  std::printf("all deleted (PVs gone) after %.1f s\n", deleted);
  PrintRequests(stack.vcsim(), "detach + delete", 2 * a.claims, cns_calls);
  PrintKubeRequests(audit, "detach + delete", 2 * a.claims);
  absl::StatusOr<std::vector<::ccm::testing::VcsimCnsVolume>> left = stack.vcsim().CnsVolumes();
  std::printf("left: %d CNS volumes, %d operation records, %d VolumeAttachments\n",
              left.ok() ? static_cast<int>(left->size()) : -1,
              Count(c, records, kCsiNamespace, all), Count(c, kube::VolumeAttachments(), "", all));
  return 0;
}

}  // namespace
}  // namespace ccm::peers

int main(int argc, char** argv) {
  ccm::peers::Args a;
  if (argc > 1) (void)absl::SimpleAtoi(argv[1], &a.claims);
  if (argc > 2) (void)absl::SimpleAtoi(argv[2], &a.nodes);
  if (argc > 3) (void)absl::SimpleAtoi(argv[3], &a.task_ms);
  if (argc > 4) a.provisioner = argv[4];
  if (argc > 5) (void)absl::SimpleAtoi(argv[5], &a.kcm_qps);
  setenv("CCM_SOURCE_DIR", CCM_SOURCE_DIR, /*overwrite=*/0);  // as CTest passes them to the suite
  setenv("CCM_BINARY_DIR", CCM_BINARY_DIR, 0);
  if (ccm::peers::PackDir().empty()) {
    std::printf(
        "csi_peers_scale_bench: skipped: no real peers here (../shared/peers, $PEERS_DIR)\n");
    return 0;
  }
  return ccm::peers::RunBench(a);
}
