// 1,000 kubelets register at once: how long until the real vsphere-cloud-controller-manager has
// initialised every Node, and what does it cost? Starts three processes: the vCenter simulator
// (1,000 generated VMs, zone/region tags), the kube-emulator binary and the controller binary.
// Once the controller's inventory is loaded (/metrics cloudprovider_vsphere_inventory_synced 1)
// the counters are reset and 1,000 Nodes are created through the emulator's debug endpoint, the
// way kubelets with --cloud-provider=external register them. Prints the time until all are
// initialised, the vCenter requests made after the inventory load (simulator counters), the
// Kubernetes requests made by the controller (emulator counters) and the controller's peak RSS.
// The bench watches the Nodes with an informer opened before the counters are reset, so its own
// requests are not counted. Also prints the Kubernetes requests per Node and, when the client-side
// rate limit binds, the time against its floor: the node controller's own budget must carry two
// writes per Node, so all N Nodes take at least (2N - burst) / qps. At the end, with the
// controller stopped, the write floor on the same emulator (issue 26): N more Nodes get the same
// two writes from a minimal client (1 thread, then one thread per worker); the controller's
// per-Node work time and its total time are printed against it. Then the conforming floor: the
// same client also sends the reference's Event per Node and keeps a second Node watch open, the
// server load no cloud-node controller avoids.
//
//   node_init_bench [--nodes N] [--workers W] [--qps Q] [--burst B] [--default-flags]
//                   [--leader-elect] [--keep-logs] [--hold SECONDS] [--hold-end SECONDS]
//                   [--images N] [--kubeconfig PATH [--server-pids PID,PID] | --peers]
// --images N: each Node's status is a real kubelet's (capacity, nodeInfo, conditions) with N
// pulled images, so the API server's answers are a real Node's size (a few kB with 20 images).
// --kubeconfig: a real API server instead of the kube-emulator (a throwaway one: the bench refuses
// a server that has any Node, registers its Nodes through the API and deletes them at the end).
// The controller's requests are then counted by its own client metrics, the handlers' share of
// the write time is not known, and the server's CPU is counted for the --server-pids processes
// (kube-apiserver, etcd) when given.
// --default-flags: the controller runs without --kube-api-qps, --kube-api-burst and
// --concurrent-node-syncs (its defaults: 20, 30, 1), as a new user would start it. Without it the
// bench is unthrottled (qps = burst = 5000) with 4 workers unless told otherwise.
// --peers: the real kube-apiserver of ../shared/peers (or $PEERS_DIR) on Debian's etcd, started
// by the bench on free loopback ports with a PKI of its own (the peers suite's KubeCluster), its
// version printed and its processes' CPU counted; without those programs the bench says so and
// exits 0.
// Environment: NODE_BENCH_CCM / NODE_BENCH_KUBE_EMULATOR override the binaries' paths.
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "cloud/core/uuid.h"
#include "common/http_client.h"
#include "common/logging.h"
#include "fixtures/vcsim/vcsim_process.h"
#include "kube/client.h"
#include "kube/config.h"
#include "kube/informer.h"
#include "kube/objects.h"
#include "kube/resource.h"
#include "node_init_server.h"
#include "peers/kube_cluster.h"
#include "peers/peers.h"
#include "testing/free_port.h"

namespace ccm::bench {
namespace {

using nlohmann::json;

struct Flags {
  int nodes = 1000;
  int workers = 4;
  int qps = 5000;
  int burst = 5000;
  bool leader_elect = false;
  bool default_flags = false;  // no --kube-api-qps/--kube-api-burst/--concurrent-node-syncs
  bool keep_logs = false;
  int hold_seconds = 0;      // pause after the inventory load (to inspect the controller process)
  int hold_end_seconds = 0;  // pause before stopping the controller at the end
  std::string kubeconfig;    // a real API server instead of the kube-emulator
  std::vector<pid_t> server_pids;  // its processes (kube-apiserver, etcd), for their CPU time
  int images = 0;      // > 0: each Node's status is a real kubelet's, with this many images
  bool peers = false;  // start the real kube-apiserver and etcd (../shared/peers)
};

std::string Spec(int vms) {
  return absl::StrCat(R"({
  "datacenters": [{
    "name": "dc1",
    "clusters": [{"name": "c1", "hosts": 8, "resource_pools": ["rp1"]}],
    "generate_vms": {"count": )",
                      vms, R"(, "prefix": "node-", "cluster": "c1",
                     "subnet": "10.1.0.0/16", "network": "VM Network"}
  }],
  "tag_categories": [{"name": "k8s-zone", "cardinality": "SINGLE"},
                     {"name": "k8s-region", "cardinality": "SINGLE"}],
  "tags": [
    {"name": "region-1", "category": "k8s-region", "attach": ["/dc1"]},
    {"name": "zone-a", "category": "k8s-zone", "attach": ["/dc1/host/c1"]},
    {"name": "zone-h0", "category": "k8s-zone", "attach": ["/dc1/host/c1/c1-host-0"]}
  ]
})");
}

// "VmHWM" / "VmRSS" / "Threads" of a process, in the units /proc prints (kB for memory).
long ProcStatus(pid_t pid, const std::string& key) {
  std::ifstream in(absl::StrCat("/proc/", pid, "/status"));
  std::string line;
  while (std::getline(in, line)) {
    if (absl::StartsWith(line, key + ":")) {
      long v = 0;
      std::istringstream(line.substr(key.size() + 1)) >> v;
      return v;
    }
  }
  return -1;
}

std::string Memory(pid_t pid) {
  return absl::StrCat("VmHWM ", ProcStatus(pid, "VmHWM"), " kB, VmRSS ", ProcStatus(pid, "VmRSS"),
                      " kB (anon ", ProcStatus(pid, "RssAnon"), " + file ",
                      ProcStatus(pid, "RssFile"), "), ", ProcStatus(pid, "Threads"), " threads");
}

// Resident memory of a process by mapping (/proc/<pid>/smaps): shared libraries by file name,
// everything anonymous (heap, arenas, thread stacks) as "[anon]"; the largest `top`, in kB.
std::string RssByMapping(pid_t pid, int top) {
  std::ifstream in(absl::StrCat("/proc/", pid, "/smaps"));
  std::map<std::string, long> by;
  std::string line, current = "[anon]";
  while (std::getline(in, line)) {
    if (!line.empty() && std::isxdigit(static_cast<unsigned char>(line[0])) &&
        line.find('-') < line.find(' ')) {
      std::vector<std::string> f = absl::StrSplit(line, ' ', absl::SkipEmpty());
      current = f.size() >= 6 ? f[5] : "[anon]";
      if (current == "[heap]" || current == "[stack]") current = "[anon]";
      if (size_t slash = current.rfind('/'); slash != std::string::npos) {
        current = current.substr(slash + 1);
      }
      continue;
    }
    if (absl::StartsWith(line, "Rss:")) {
      long kb = 0;
      std::istringstream(line.substr(4)) >> kb;
      by[current] += kb;
    }
  }
  std::vector<std::pair<long, std::string>> sorted;
  for (const auto& [name, kb] : by) sorted.push_back({kb, name});
  std::sort(sorted.rbegin(), sorted.rend());
  std::string out;
  long rest = 0;
  for (size_t i = 0; i < sorted.size(); ++i) {
    if (static_cast<int>(i) < top) {
      absl::StrAppend(&out, "    ", sorted[i].second, " ", sorted[i].first, " kB\n");
    } else {
      rest += sorted[i].first;
    }
  }
  absl::StrAppend(&out, "    (", sorted.size() > static_cast<size_t>(top) ? sorted.size() - top : 0,
                  " other mappings) ", rest, " kB\n");
  return out;
}

// Value of the first sample of `metric` (with any labels) in Prometheus text, or -1.
double Metric(const std::string& text, const std::string& metric) {
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (!absl::StartsWith(line, metric)) continue;
    absl::string_view rest = line.substr(metric.size());
    if (!rest.empty() && rest[0] != '{' && rest[0] != ' ') continue;
    double v;
    if (absl::SimpleAtod(line.substr(line.rfind(' ') + 1), &v)) return v;
  }
  return -1;
}

// The value of the first sample of `metric` whose labels contain `label` (-1 if none).
double MetricWith(const std::string& text, const std::string& metric, const std::string& label) {
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (!absl::StartsWith(line, metric + "{") || !absl::StrContains(line, label)) continue;
    double v;
    if (absl::SimpleAtod(line.substr(line.rfind(' ') + 1), &v)) return v;
  }
  return -1;
}

// The sum of every sample of `metric` whose labels contain `label` (0 if none).
double SumWith(const std::string& text, const std::string& metric, const std::string& label) {
  double sum = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (!absl::StartsWith(line, metric + "{") || !absl::StrContains(line, label)) continue;
    double v;
    if (absl::SimpleAtod(line.substr(line.rfind(' ') + 1), &v)) sum += v;
  }
  return sum;
}

// The controller's /metrics ("" when it does not answer).
std::string Metrics(HttpClient& http, int port) {
  auto r = http.Do({.url = absl::StrCat("https://127.0.0.1:", port, "/metrics")});
  return r.ok() && r->status == 200 ? r->body : "";
}

bool Initialised(const kube::Json& n) {
  return !kube::ProviderId(n).empty() &&
         !kube::HasTaint(n, "node.cloudprovider.kubernetes.io/uninitialized");
}

// Wall time of a run and the CPU time the processes spent in it.
struct RunCpu {
  absl::Duration wall;
  absl::Duration cpu;
  absl::Duration requests;  // the floor: its requests' latencies summed (sent to whole answer)
};

// What a minimal client sends per Node besides the two writes, when it does what every cloud-node
// controller must: the reference's Event for the Node, and a watch of the Nodes open beside it.
struct FloorExtras {
  bool event = false;
  bool watch = false;
  bool together = false;  // a Node's two writes sent at once
};

// A watch of the Nodes from now on (the resourceVersion of a one-item list), read and thrown away
// on its own thread, until destroyed.
class DiscardingWatch {
 public:
  DiscardingWatch(const kube::Config& cfg, std::vector<std::pair<std::string, std::string>> auth)
      : http_(HttpClientOptions{.tls = cfg.tls}) {
    HttpRequest req{.url = cfg.server + "/api/v1/nodes?limit=1", .headers = std::move(auth)};
    req.headers.push_back({"Accept", "application/json"});
    auto list = http_.Do(req);
    const json j = list.ok() ? json::parse(list->body, nullptr, false) : json();
    const std::string rv = j.is_object() ? j["metadata"].value("resourceVersion", "") : "";
    req.url =
        cfg.server + "/api/v1/nodes?watch=true&allowWatchBookmarks=true&resourceVersion=" + rv;
    thread_ = std::thread([this, req] {
      (void)http_.Stream(
          req, [](absl::string_view) { return true; }, &cancel_);
    });
  }
  ~DiscardingWatch() {
    cancel_ = true;
    thread_.join();
  }

 private:
  HttpClient http_;
  std::atomic<bool> cancel_{false};
  std::thread thread_;
};

// The Event the controller records for an initialised Node ("Synced"), as a minimal client
// would send it.
std::string SyncedEvent(const std::string& node, int i) {
  return json{
      {"apiVersion", "v1"},
      {"kind", "Event"},
      {"metadata", {{"name", absl::StrCat(node, ".floor", i)}, {"namespace", "default"}}},
      {"involvedObject", {{"kind", "Node"}, {"name", node}, {"uid", node}, {"apiVersion", "v1"}}},
      {"reason", "Synced"},
      {"message", "Node synced successfully"},
      {"type", "Normal"},
      {"source", {{"component", "cloud-node-controller"}}},
      {"count", 1},
      {"firstTimestamp", "2026-11-27T00:00:00Z"},
      {"lastTimestamp", "2026-11-27T00:00:00Z"}}
      .dump();
}

// The floor's two writes for Node `name` (the i-th): URL suffix, content type and body of each.
std::vector<std::tuple<std::string, std::string, std::string>> FloorWrites(const std::string& name,
                                                                           int i) {
  const std::string ip = absl::StrCat("10.1.", i / 250, ".", i % 250 + 1);
  json status = {{"status",
                  {{"addresses", json::array({{{"type", "Hostname"}, {"address", name}},
                                              {{"type", "InternalIP"}, {"address", ip}},
                                              {{"type", "ExternalIP"}, {"address", ip}}})}}}};
  json labels;
  for (const char* k : {"topology.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/zone",
                        "topology.kubernetes.io/region", "failure-domain.beta.kubernetes.io/region",
                        "node.kubernetes.io/instance-type", "beta.kubernetes.io/instance-type"}) {
    labels[k] = "value-of-about-this-size";
  }
  json node = {{"metadata", {{"labels", labels}}},
               {"spec", {{"providerID", "vsphere://" + name}, {"taints", nullptr}}}};
  return {{"/status", "application/merge-patch+json", status.dump()},
          {"", "application/merge-patch+json", node.dump()}};
}

// The floor a Node initialisation is held against (issue 26): the same two writes the
// controller makes (the status PATCH of the addresses, then one patch of providerID, the six
// topology and instance-type labels and the taint), sent by a minimal client: libcurl handles on
// persistent connections, no rate limit, queue, informer or Events (the bench's own watch of the
// Nodes stays open, as in the controller's run). With `extras`, also the Event and a second watch
// (the server load any conforming controller adds). `threads` threads share the Nodes. Returns
// the wall time for all of them, or an error.
absl::StatusOr<RunCpu> WriteFloor(ApiServer& server, const kube::Config& cfg, int n, int threads,
                                  int images, const std::string& prefix,
                                  const std::function<absl::Duration()>& cpu_now,
                                  FloorExtras extras = {}) {
  std::vector<json> bodies;
  for (int i = 0; i < n; ++i) {
    bodies.push_back(KubeletNode(absl::StrCat(prefix, "-", i), "", images));
  }
  if (!server.Register(bodies)) return absl::InternalError("registration failed");
  HttpClient api(HttpClientOptions{.tls = cfg.tls});
  std::vector<std::pair<std::string, std::string>> auth;
  if (!cfg.bearer_token.empty()) {
    auth.push_back({"Authorization", "Bearer " + cfg.bearer_token.reveal()});
  }
  std::atomic<int> failed{0};
  absl::Mutex mu;
  absl::Duration requests;
  auto write = [&](const std::string& name, int i) {
    const std::string url = cfg.server + "/api/v1/nodes/" + name;
    auto send = [&](const std::string& suffix, const std::string& type, const std::string& body) {
      auto headers = auth;
      headers.push_back({"Content-Type", type});
      const absl::Time sent = absl::Now();
      auto r = api.Do({.method = "PATCH", .url = url + suffix, .headers = headers, .body = body});
      const absl::Duration took = absl::Now() - sent;
      if (!r.ok() || r->status != 200) ++failed;
      absl::MutexLock l(&mu);
      requests += took;
    };
    const auto writes = FloorWrites(name, i);
    if (extras.together) {
      std::thread status([&] { std::apply(send, writes[0]); });
      std::apply(send, writes[1]);
      status.join();
    } else {
      for (const auto& w : writes) std::apply(send, w);
    }
    if (!extras.event) return;
    auto headers = auth;
    headers.push_back({"Content-Type", "application/json"});
    auto r = api.Do({.method = "POST",
                     .url = cfg.server + "/api/v1/namespaces/default/events",
                     .headers = headers,
                     .body = SyncedEvent(name, i)});
    if (!r.ok() || r->status != 201) ++failed;
  };
  std::optional<DiscardingWatch> watch;
  if (extras.watch) watch.emplace(cfg, auth);
  const absl::Duration cpu0 = cpu_now();
  const absl::Time t0 = absl::Now();
  std::vector<std::thread> pool;
  for (int w = 0; w < threads; ++w) {
    pool.emplace_back([&, w] {
      for (int i = w; i < n; i += threads) write(absl::StrCat(prefix, "-", i), i);
    });
  }
  for (auto& th : pool) th.join();
  const RunCpu took{absl::Now() - t0, cpu_now() - cpu0, requests};
  if (failed > 0) return absl::InternalError(absl::StrCat(failed.load(), " writes failed"));
  return took;
}

// How busy the machine was: CPU seconds per second of wall time, against its cores. When every
// core is busy, the controller's writes wait for the CPU the API server, the kubelets' writes
// and the Events also need, and the ratio to the floor measures that as much as the controller.
void ReportBusy(const char* what, const RunCpu& r) {
  std::printf("  %s: %s of CPU in %s, %.2f of %ld cores busy\n", what,
              absl::FormatDuration(r.cpu).c_str(), absl::FormatDuration(r.wall).c_str(),
              absl::ToDoubleSeconds(r.cpu) / std::max(1e-9, absl::ToDoubleSeconds(r.wall)),
              sysconf(_SC_NPROCESSORS_ONLN));
}

// Per Node, where the controller's initialisation time went (seconds).
struct ControllerShares {
  double work = 0;      // the work queue's mean work duration
  double requests = 0;  // its Node writes' latencies (rest_client_request_duration_seconds)
  double serve = 0;     // the emulator's handlers for those writes
};

// The breakdown the issue asks for: server, transport and client, and the controller's own path
// outside its requests, per Node, against the floor's. The handlers' share only on the emulator
// (a real API server does not report it; the writes' latency then includes it).
void ReportShares(const ControllerShares& c, const RunCpu& floor, double floor_serve_s, int n,
                  bool emulated) {
  const double ms = 1000.0 / n;
  const double f_requests = absl::ToDoubleSeconds(floor.requests) * ms;
  const double f_total = absl::ToDoubleSeconds(floor.wall) * ms;
  const double f_serve = floor_serve_s * ms;
  auto row = [](const char* what, double ctl, double fl) {
    std::printf("  %-56s %10.3f %6.3f\n", what, ctl, fl);
  };
  std::printf("WHERE THE TIME GOES, per Node (ms):                         controller  floor\n");
  if (emulated) {
    row("API server: its handlers for the two Node writes", c.serve * 1000, f_serve);
    row("transport and HTTP client (write latency - handlers)", (c.requests - c.serve) * 1000,
        f_requests - f_serve);
  } else {
    row("the two Node writes, latencies summed (server, transport, client)", c.requests * 1000,
        f_requests);
  }
  if (c.requests <= c.work) {
    row("outside the writes (look-up, patches, queue, log)", (c.work - c.requests) * 1000,
        f_total - f_requests);
  } else {
    std::printf("  outside the writes: not separable (the controller sends the two at once)\n");
  }
  row("total (work duration; the floor's time per Node)", c.work * 1000, f_total);
}

// A floor run and the emulator's handler seconds in it.
struct FloorRun {
  RunCpu run;
  double serve_s = 0;
};

// The median of `rounds` floor runs (fresh Nodes each time) and the range of their times; nullopt
// (after saying why) when one failed.
std::optional<std::pair<FloorRun, std::string>> MedianFloor(ApiServer& server,
                                                            const kube::Config& cfg, const Flags& f,
                                                            int threads, int rounds,
                                                            FloorExtras extras,
                                                            const std::string& prefix) {
  auto cpu_now = [&] { return server.Cpu() + CpuTime(getpid()); };
  std::vector<FloorRun> runs;
  for (int i = 0; i < rounds; ++i) {
    const double serve0 = server.NodeWriteServeSeconds();
    absl::StatusOr<RunCpu> r = WriteFloor(server, cfg, f.nodes, threads, f.images,
                                          absl::StrCat(prefix, i), cpu_now, extras);
    if (!r.ok()) {
      std::fprintf(stderr, "floor: %s\n", r.status().ToString().c_str());
      return std::nullopt;
    }
    runs.push_back({*r, server.NodeWriteServeSeconds() - serve0});
  }
  std::sort(runs.begin(), runs.end(),
            [](const FloorRun& a, const FloorRun& b) { return a.run.wall < b.run.wall; });
  const std::string range =
      absl::StrFormat("median of %d runs: %.2f-%.2f ms", rounds,
                      absl::ToDoubleMilliseconds(runs.front().run.wall) / f.nodes,
                      absl::ToDoubleMilliseconds(runs.back().run.wall) / f.nodes);
  return std::pair{runs[runs.size() / 2], range};
}

// The load no cloud-node controller can avoid besides its writes: the reference's Event per
// Node, and its own watch of the Nodes.
constexpr FloorExtras kConforming{.event = true, .watch = true};

// One worker: its work time per Node against the 1-thread floors, and where the time goes.
void ReportOneWorker(ApiServer& server, const kube::Config& cfg, const Flags& f, int rounds,
                     const FloorRun& one, const ControllerShares& c) {
  const double per_node_ms = absl::ToDoubleMilliseconds(one.run.wall) / f.nodes;
  const double work_ms = c.work * 1000;
  std::printf(
      "controller: work duration per Node (workqueue mean) %.2f ms: RATIO %.2f (target <= 1.2)\n",
      work_ms, work_ms / per_node_ms);
  ReportShares(c, one.run, one.serve_s, f.nodes, server.emulated());
  if (auto conf = MedianFloor(server, cfg, f, 1, rounds, kConforming, "floor-c-")) {
    const double conf_ms = absl::ToDoubleMilliseconds(conf->first.run.wall) / f.nodes;
    std::printf(
        "CONFORMING FLOOR (the two writes, the Event, a second Node watch), 1 thread: %.2f ms "
        "per Node (%s); controller RATIO %.2f to it\n",
        conf_ms, conf->second.c_str(), work_ms / conf_ms);
  }
  // The minimal client sending a Node's two writes at once (what sending them together would
  // gain; the controller sends them in order: addresses first).
  FloorExtras together = kConforming;
  together.together = true;
  if (auto conf = MedianFloor(server, cfg, f, 1, rounds, together, "floor-t-")) {
    const double conf_ms = absl::ToDoubleMilliseconds(conf->first.run.wall) / f.nodes;
    std::printf(
        "CONFORMING FLOOR, the two writes sent at once (the controller sends them in order): "
        "%.2f ms per Node (%s); controller RATIO %.2f to it\n",
        conf_ms, conf->second.c_str(), work_ms / conf_ms);
  }
}

// Several workers: the floors with as many threads (one run each); the plain one, or nullopt.
std::optional<RunCpu> ManyThreadFloor(ApiServer& server, const kube::Config& cfg, const Flags& f,
                                      const RunCpu& run) {
  auto many = MedianFloor(server, cfg, f, f.workers, 1, {}, "floor-n-");
  if (!many) return std::nullopt;
  std::printf("FLOOR, %d threads: %s for %d Nodes\n", f.workers,
              absl::FormatDuration(many->first.run.wall).c_str(), f.nodes);
  if (auto conf = MedianFloor(server, cfg, f, f.workers, 1, kConforming, "floor-cn-")) {
    std::printf("CONFORMING FLOOR, %d threads: %s; controller RATIO %.2f to it\n", f.workers,
                absl::FormatDuration(conf->first.run.wall).c_str(),
                absl::ToDoubleSeconds(run.wall) / absl::ToDoubleSeconds(conf->first.run.wall));
  }
  return many->first.run;
}

// Prints the controller's time against the floor, per Node for one worker and in all for many,
// and how busy the machine was in each. Also against the conforming floor (kConforming).
void ReportFloor(ApiServer& server, const kube::Config& cfg, const Flags& f, const RunCpu& run,
                 const ControllerShares& c) {
  const int n = f.nodes;
  // The floor varies by about 20% from run to run on a busy 2-core machine: up to 2,000 Nodes it
  // is measured three times (fresh Nodes each time) and the median run is the one compared. Once
  // when the client rate limit binds: the (2N - burst) / qps floor applies then.
  const int rounds = n <= 2000 && 2 * n <= f.burst ? 3 : 1;
  auto one = MedianFloor(server, cfg, f, 1, rounds, {}, "floor-1-");
  if (!one) return;
  std::printf(
      "\nFLOOR: the same two writes from a minimal client, 1 thread: %s for %d Nodes, %.2f ms "
      "per Node (%s)\n",
      absl::FormatDuration(one->first.run.wall).c_str(), n,
      absl::ToDoubleMilliseconds(one->first.run.wall) / n, one->second.c_str());
  if (2 * n > f.burst) {
    // The work time then includes the waits for the client's rate limiter: the (2N - burst) /
    // qps floor printed above is the one that applies.
    std::printf(
        "controller: the client rate limit binds (2N > burst); compare with the "
        "(2N - burst) / qps floor above, not with this one\n");
    return;
  }
  // Per Node against one thread only for one worker: with several, every item's time includes
  // the others' share of the machine, and the N-thread comparison is the one that applies.
  if (f.workers == 1) ReportOneWorker(server, cfg, f, rounds, one->first, c);
  RunCpu floor = one->first.run;
  if (f.workers > 1) {
    std::optional<RunCpu> many = ManyThreadFloor(server, cfg, f, run);
    if (!many) return;
    floor = *many;
  }
  std::printf(
      "controller, %d worker(s): all initialised after %s: RATIO %.2f to the %d-thread "
      "floor (target <= 1.2; meaningful when the rate limit does not bind)\n",
      f.workers, absl::FormatDuration(run.wall).c_str(),
      absl::ToDoubleSeconds(run.wall) / absl::ToDoubleSeconds(floor.wall), f.workers);
  std::printf("machine (API server, controller, simulator, this bench with its kubelets):\n");
  ReportBusy("controller's run", run);
  ReportBusy(f.workers > 1 ? "floor, many threads" : "floor, 1 thread", floor);
}

// The controller binary against the simulator and `server`, once its inventory is loaded.
struct Controller {
  Child child;
  int port = 0;
};

absl::StatusOr<Controller> StartController(const Flags& f, const std::string& dir,
                                           const ccm::testing::VcsimProcess& sim,
                                           const ApiServer& server, HttpClient& http) {
  const std::string hp = sim.host_port();
  {
    std::ofstream conf(dir + "/vsphere.conf");
    conf << "[Global]\nuser = \"user\"\npassword = \"pass\"\nport = \""
         << hp.substr(hp.rfind(':') + 1) << "\"\nca-file = \"" << sim.info().ca_file
         << "\"\n\n[VirtualCenter \"127.0.0.1\"]\ndatacenters = \"dc1\"\n\n"
         << "[Labels]\nregion = \"k8s-region\"\nzone = \"k8s-zone\"\n";
  }
  Controller c;
  c.port = ccm::testing::FreePort();
  const absl::Time t = absl::Now();
  std::vector<std::string> argv = {
      BinaryPath("NODE_BENCH_CCM", CCM_BINARY),        "--cloud-provider=vsphere",
      "--cloud-config=" + dir + "/vsphere.conf",       "--kubeconfig=" + server.kubeconfig(),
      absl::StrCat("--leader-elect=", f.leader_elect), "--bind-address=127.0.0.1",
      absl::StrCat("--secure-port=", c.port)};
  if (!f.default_flags) {
    argv.push_back(absl::StrCat("--concurrent-node-syncs=", f.workers));
    argv.push_back(absl::StrCat("--kube-api-qps=", f.qps));
    argv.push_back(absl::StrCat("--kube-api-burst=", f.burst));
  }
  absl::StatusOr<Child> child = Child::Spawn(argv, dir + "/ccm.log", /*pipe_stdout=*/false);
  if (!child.ok()) return child.status();
  c.child = *child;
  std::string m;
  const absl::Time deadline = absl::Now() + absl::Minutes(2);
  while (Metric(m = Metrics(http, c.port), "cloudprovider_vsphere_inventory_synced") != 1) {
    if (absl::Now() > deadline || waitpid(c.child.pid, nullptr, WNOHANG) == c.child.pid) {
      c.child.pid = -1;
      return absl::UnavailableError(
          absl::StrCat("the controller did not load its inventory; see ", dir, "/ccm.log"));
    }
    absl::SleepFor(absl::Milliseconds(50));
  }
  std::printf("controller inventory loaded in %s (%g VMs); controller %s\n",
              absl::FormatDuration(absl::Now() - t).c_str(),
              Metric(m, "cloudprovider_vsphere_inventory_vms"), Memory(c.child.pid).c_str());
  return c;
}

// The bench's own view of the Nodes: which are initialised, and when the last one was.
class NodeWatch {
 public:
  NodeWatch(kube::Client& client) : informer_(client, kube::Nodes(), {}) {
    auto seen = [this](const kube::Json& n) {
      if (!Initialised(n)) return;
      absl::MutexLock l(&mu_);
      if (done_.insert(kube::Name(n)).second) last_done_ = absl::Now();
    };
    informer_.AddEventHandler(
        {.on_add = seen, .on_update = [seen](const kube::Json&, const kube::Json& n) { seen(n); }});
    informer_.Start();
  }
  ~NodeWatch() { Stop(); }
  void Stop() { informer_.Stop(); }
  bool Synced() { return informer_.WaitForSync(absl::Seconds(30)); }
  // Waits until `n` Nodes are initialised (or 5 minutes); returns how many are.
  size_t Await(size_t n) {
    absl::MutexLock l(&mu_);
    auto all = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return done_.size() >= n; };
    mu_.AwaitWithTimeout(absl::Condition(&all), absl::Minutes(5));
    return done_.size();
  }
  absl::Time last_done() {
    absl::MutexLock l(&mu_);
    return last_done_;
  }
  std::vector<kube::ObjectPtr> List() { return informer_.List(); }

 private:
  kube::Informer informer_;
  absl::Mutex mu_;
  std::set<std::string> done_ ABSL_GUARDED_BY(mu_);
  absl::Time last_done_ ABSL_GUARDED_BY(mu_);
};

// Every Node has providerID, addresses, instance type and region; the count per zone.
void ReportCorrectness(NodeWatch& nodes, size_t n) {
  int ok = 0;
  std::map<std::string, int> zones;
  for (const kube::ObjectPtr& node : nodes.List()) {
    auto labels = kube::Labels(*node);
    if (Initialised(*node) && kube::NodeAddresses(*node).size() == 3 &&
        absl::StartsWith(labels["node.kubernetes.io/instance-type"], "vsphere-vm.cpu-2") &&
        labels["topology.kubernetes.io/region"] == "region-1") {
      ++ok;
    }
    ++zones[labels["topology.kubernetes.io/zone"]];
  }
  std::printf("correct nodes: %d/%zu; zones:", ok, n);
  for (const auto& [z, count] : zones) std::printf(" %s=%d", z.c_str(), count);
  std::printf("\n");
}

void ReportVcenterRequests(ccm::testing::VcsimProcess& sim) {
  std::printf("\nvCenter requests after the inventory load (simulator counters):\n");
  auto soap = sim.SoapCounters();
  auto rest = sim.RestCounters();
  int soap_total = 0, rest_total = 0, waits = 0;
  if (soap.ok()) {
    for (const auto& [method, n] : *soap) {
      std::printf("  SOAP %-50s %d\n", method.c_str(), n);
      soap_total += n;
      if (method == "WaitForUpdatesEx") waits += n;
    }
  }
  if (rest.ok()) {
    for (const auto& [path, n] : *rest) {
      std::printf("  REST %-50s %d\n", path.c_str(), n);
      rest_total += n;
    }
  }
  std::printf("  total %d (%d SOAP + %d REST); without the idle WaitForUpdatesEx long polls: %d\n",
              soap_total + rest_total, soap_total, rest_total, soap_total + rest_total - waits);
}

// The controller's Kubernetes requests: by resource from the emulator's counters, or by verb
// from the controller's own client metrics on a real API server.
void ReportKubeRequests(const json& kc, const std::string& m0, const std::string& m, double n,
                        bool emulated) {
  std::printf("\nKubernetes requests by the controller (%s):\n",
              emulated ? "emulator counters" : "its rest_client_request_duration_seconds_count");
  double total = 0;
  std::map<std::string, double> counts;
  if (emulated) {
    const json c = kc.is_object() && kc.contains("counts") ? kc["counts"] : json::object();
    for (const auto& [key, v] : c.items()) counts[key] = v.get<double>();
  } else {
    for (const char* verb : {"GET", "LIST", "POST", "PUT", "PATCH", "DELETE"}) {
      const std::string label = absl::StrCat("verb=\"", verb, "\"");
      const double v = SumWith(m, "rest_client_request_duration_seconds_count", label) -
                       SumWith(m0, "rest_client_request_duration_seconds_count", label);
      if (v > 0) counts[verb] = v;
    }
  }
  for (const auto& [key, v] : counts) {
    std::printf("  %-50s %.0f\n", key.c_str(), v);
    total += v;
  }
  std::printf("  total %.0f (controller's rest_client_requests_sent: %+g)\n", total,
              Metric(m, "rest_client_requests_sent") - Metric(m0, "rest_client_requests_sent"));
  auto count = [&](const char* key) { return counts.count(key) ? counts[key] : 0.0; };
  if (emulated) {
    std::printf(
        "REQUESTS PER NODE: %.2f in all; Node writes %.2f (status patch %.2f + patch %.2f), "
        "Node GETs %.2f, Events %.2f (events dropped: %g)\n",
        total / n, (count("patch nodes/status") + count("patch nodes")) / n,
        count("patch nodes/status") / n, count("patch nodes") / n, count("get nodes") / n,
        (count("create events") + count("patch events")) / n,
        std::max(0.0, Metric(m, "events_dropped_total")));
  } else {
    std::printf("REQUESTS PER NODE: %.2f in all; PATCH %.2f, POST (Events) %.2f, GET %.2f\n",
                total / n, count("PATCH") / n, count("POST") / n, count("GET") / n);
  }
}

// After the run: the rate-limit floor, the controller's memory and the targets.
void ReportFloorAndMemory(const Flags& f, double n, absl::Duration all_init, pid_t ccm,
                          long hwm_at_done) {
  // The node controller's own budget carries its two writes per Node: burst at once, then qps.
  const double floor_s = (2.0 * n - f.burst) / f.qps;
  if (floor_s > 0) {
    std::printf(
        "FLOOR (2N - burst) / qps = (%d - %d) / %d = %.2f s; all initialised after %.2f s: "
        "RATIO %.3f (target <= 1.05)\n",
        2 * static_cast<int>(n), f.burst, f.qps, floor_s, absl::ToDoubleSeconds(all_init),
        absl::ToDoubleSeconds(all_init) / floor_s);
  } else {
    std::printf("no rate-limit floor: 2N <= burst (%d <= %d)\n", 2 * static_cast<int>(n), f.burst);
  }
  std::printf("\ncontroller process: %s; VmHWM when all were initialised: %ld kB\n",
              Memory(ccm).c_str(), hwm_at_done);
  std::printf("  resident memory by mapping:\n%s", RssByMapping(ccm, 12).c_str());
  std::printf("targets: < 2 s (%s), < 25 MB peak RSS (%ld kB)\n",
              absl::FormatDuration(all_init).c_str(), ProcStatus(ccm, "VmHWM"));
}

// CPU time of the run's processes from the first registration on.
struct CpuMarks {
  absl::Duration ccm, server, sim, self;
  static CpuMarks Now(pid_t ccm, const ApiServer& server, pid_t sim) {
    return {CpuTime(ccm), server.Cpu(), CpuTime(sim), CpuTime(getpid())};
  }
  CpuMarks operator-(const CpuMarks& o) const {
    return {ccm - o.ccm, server - o.server, sim - o.sim, self - o.self};
  }
  absl::Duration total() const { return ccm + server + sim + self; }
};

void ReportTimes(size_t n, absl::Duration registered, bool failed, absl::Duration all_init,
                 absl::Duration after_last, const CpuMarks& cpu, bool server_cpu_known) {
  double load[3] = {0, 0, 0};
  getloadavg(load, 3);
  std::printf("\nregistered %zu nodes in %s%s\n", n, absl::FormatDuration(registered).c_str(),
              failed ? " (some failed)" : "");
  std::printf("ALL INITIALISED after %s from the first registration (%s after the last)\n",
              absl::FormatDuration(all_init).c_str(), absl::FormatDuration(after_last).c_str());
  std::printf(
      "CPU time from the first registration until all were initialised: controller %s, API "
      "server %s, vcsim %s, this bench (registration + informer) %s; machine load average %.1f\n",
      absl::FormatDuration(cpu.ccm).c_str(),
      server_cpu_known ? absl::FormatDuration(cpu.server).c_str() : "(not measured)",
      absl::FormatDuration(cpu.sim).c_str(), absl::FormatDuration(cpu.self).c_str(), load[0]);
  const double ccm_ms_per_node = absl::ToDoubleMilliseconds(cpu.ccm) / n;
  std::printf(
      "controller CPU per Node: %.3f ms, %.1f s for 10,000 Nodes at this rate (goal <= 0.5 ms, "
      "5 s; all the process did during the run, so meaningful when the rate limit does not "
      "bind)\n",
      ccm_ms_per_node, ccm_ms_per_node * 10);
}

// Registers one Node per simulated VM at once and waits until the controller has initialised
// them; prints what it took. Returns the run's wall and CPU time and the controller's shares.
std::pair<RunCpu, ControllerShares> RunOnce(const Flags& f, ccm::testing::VcsimProcess& sim,
                                            ApiServer& server, Controller& ccm, HttpClient& http,
                                            NodeWatch& nodes) {
  const std::string m0 = Metrics(http, ccm.port);
  const double patch_s_before =
      SumWith(m0, "rest_client_request_duration_seconds_sum", "verb=\"PATCH\"");
  std::vector<json> bodies;
  for (const auto& vm : sim.info().vms) {
    bodies.push_back(
        KubeletNode(vm.name, cloud::SwapUuidByteOrder(vm.uuid).value_or(""), f.images));
  }
  const CpuMarks cpu0 = CpuMarks::Now(ccm.child.pid, server, sim.pid());
  const absl::Time t0 = absl::Now();
  const bool failed = !server.Register(bodies);
  const absl::Time t_registered = absl::Now();
  const size_t seen = nodes.Await(bodies.size());
  if (seen < bodies.size()) {
    std::fprintf(stderr, "only %zu of %zu nodes initialised after 5 minutes\n", seen,
                 bodies.size());
  }
  const absl::Duration all_init = nodes.last_done() - t0;
  const long hwm_at_done = ProcStatus(ccm.child.pid, "VmHWM");
  const CpuMarks cpu = CpuMarks::Now(ccm.child.pid, server, sim.pid()) - cpu0;
  // Let trailing work (Events) finish: wait until the request counts stop moving.
  json kc;
  std::string m, last;
  for (int i = 0; i < 100; ++i) {
    kc = server.Counters();
    m = Metrics(http, ccm.port);
    const std::string now = absl::StrCat(kc.is_object() ? kc.value("total", int64_t{-1}) : -1, "/",
                                         Metric(m, "rest_client_requests_sent"));
    if (now == last) break;
    last = now;
    absl::SleepFor(absl::Milliseconds(300));
  }
  const double n = static_cast<double>(bodies.size());
  ReportTimes(bodies.size(), t_registered - t0, failed, all_init,
              std::max(absl::ZeroDuration(), t0 + all_init - t_registered), cpu,
              server.cpu_known());
  ReportCorrectness(nodes, bodies.size());
  ReportVcenterRequests(sim);
  ReportKubeRequests(kc, m0, m, n, server.emulated());
  ReportFloorAndMemory(f, n, all_init, ccm.child.pid, hwm_at_done);
  ControllerShares shares;
  shares.work =
      MetricWith(m, "workqueue_work_duration_seconds_sum", "name=\"node\"") /
      std::max(1.0, MetricWith(m, "workqueue_work_duration_seconds_count", "name=\"node\""));
  shares.requests =
      (SumWith(m, "rest_client_request_duration_seconds_sum", "verb=\"PATCH\"") - patch_s_before) /
      n;
  shares.serve = server.NodeWriteServeSeconds() / n;
  return {RunCpu{all_init, cpu.total(), absl::ZeroDuration()}, shares};
}

void PrintBanner(const Flags& f, const std::string& server, const std::string& dir) {
  std::printf(
      "node_init_bench: %d nodes, %s--concurrent-node-syncs=%d --kube-api-qps=%d "
      "--kube-api-burst=%d --leader-elect=%s, API server: %s (logs in %s)\n",
      f.nodes, f.default_flags ? "default flags: " : "", f.workers, f.qps, f.burst,
      f.leader_elect ? "true" : "false", server.c_str(), dir.c_str());
}

// The API server the flags name: the kube-emulator, a given kubeconfig, or (--peers) the real
// kube-apiserver started here, kept in `cluster`; its description for the banner in `what`.
absl::StatusOr<std::unique_ptr<ApiServer>> StartServer(Flags& f, const std::string& dir,
                                                       std::unique_ptr<peers::KubeCluster>& cluster,
                                                       std::string& what) {
  if (f.peers) {
    peers::KubeClusterOptions options;
    // NODE_BENCH_PROFILE=1: the server's /debug/pprof on (for `go tool pprof` beside the run).
    if (const char* p = std::getenv("NODE_BENCH_PROFILE"); p && *p == '1') {
      options.apiserver_flags.push_back("--profiling=true");
    }
    auto started = peers::KubeCluster::Start("node-init-bench", options);
    if (!started.ok()) return started.status();
    cluster = *std::move(started);
    f.kubeconfig = cluster->kubeconfig();
    f.server_pids = {cluster->apiserver().pid(), cluster->etcd().pid()};
    what = absl::StrCat("kube-apiserver ", cluster->version(), " of ../shared/peers on etcd ",
                        peers::VersionOf("etcd"), " at ", cluster->server());
  } else {
    what = f.kubeconfig.empty() ? "kube-emulator" : f.kubeconfig;
  }
  return f.kubeconfig.empty() ? ApiServer::StartEmulator(dir)
                              : ApiServer::Connect(f.kubeconfig, f.server_pids);
}

int Run(Flags f) {
  logging::Init(0);
  setvbuf(stdout, nullptr, _IOLBF, 0);
  if (f.peers && peers::PackDir().empty()) {
    std::printf("node_init_bench --peers: skipped: no ../shared/peers (or $PEERS_DIR) here\n");
    return 0;
  }
  char tmpl[] = "/tmp/node-init-bench-XXXXXX";
  const std::string dir = mkdtemp(tmpl);
  auto cleanup = [&] {
    if (f.keep_logs) return;
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  };
  std::unique_ptr<peers::KubeCluster> cluster;
  std::string what;
  absl::StatusOr<std::unique_ptr<ApiServer>> server = StartServer(f, dir, cluster, what);
  PrintBanner(f, what, dir);
  if (!server.ok()) {
    std::fprintf(stderr, "API server: %s\n", server.status().ToString().c_str());
    cleanup();
    return 1;
  }
  const absl::Time t = absl::Now();
  auto sim = ccm::testing::VcsimProcess::Start(Spec(f.nodes));
  if (!sim.ok()) {
    std::fprintf(stderr, "simulator: %s\n", sim.status().ToString().c_str());
    return 1;
  }
  std::printf("simulator up in %s\n", absl::FormatDuration(absl::Now() - t).c_str());
  HttpClient http(HttpClientOptions{.tls = {.insecure = true}});
  absl::StatusOr<Controller> ccm = StartController(f, dir, **sim, **server, http);
  if (!ccm.ok()) {
    std::fprintf(stderr, "%s\n", ccm.status().ToString().c_str());
    return 1;
  }
  if (f.hold_seconds > 0) {
    std::printf("holding %d s; controller pid %d\n", f.hold_seconds, ccm->child.pid);
    absl::SleepFor(absl::Seconds(f.hold_seconds));
    std::printf("after holding: controller %s\n", Memory(ccm->child.pid).c_str());
  }
  // The bench's own view of the Nodes, opened before the counters are reset.
  auto kcfg = kube::LoadKubeconfig((*server)->kubeconfig());
  if (!kcfg.ok()) return 1;
  kcfg->qps = 1000;
  kcfg->burst = 1000;
  auto client = kube::RestClient::New(*kcfg);
  if (!client.ok()) return 1;
  NodeWatch nodes(**client);
  if (!nodes.Synced()) return 1;
  if (!(*sim)->ResetCounters().ok() || !(*server)->ResetCounters().ok()) return 1;
  auto [run_cpu, shares] = RunOnce(f, **sim, **server, *ccm, http, nodes);
  if (f.hold_end_seconds > 0) {
    std::printf("holding %d s at the end; controller pid %d\n", f.hold_end_seconds, ccm->child.pid);
    absl::SleepFor(absl::Seconds(f.hold_end_seconds));
  }
  // The floor, on the same server once the controller is gone (it would initialise the floor's
  // Nodes too). The bench's own Node watch stays open during the floor: the measuring instrument
  // loads the server (a watch event per write) and this process the same in both runs.
  ccm->child.Terminate();
  ReportFloor(**server, *kcfg, f, run_cpu, shares);
  nodes.Stop();
  (*server)->Stop();
  cleanup();
  return 0;
}

}  // namespace
}  // namespace ccm::bench

int main(int argc, char** argv) {
  ccm::bench::Flags f;
  for (int i = 1; i < argc; ++i) {
    auto next = [&] { return i + 1 < argc ? std::atoi(argv[++i]) : 0; };
    if (std::strcmp(argv[i], "--nodes") == 0)
      f.nodes = next();
    else if (std::strcmp(argv[i], "--workers") == 0)
      f.workers = next();
    else if (std::strcmp(argv[i], "--qps") == 0)
      f.qps = next();
    else if (std::strcmp(argv[i], "--burst") == 0)
      f.burst = next();
    else if (std::strcmp(argv[i], "--leader-elect") == 0)
      f.leader_elect = true;
    else if (std::strcmp(argv[i], "--default-flags") == 0)
      f.default_flags = true;
    else if (std::strcmp(argv[i], "--hold") == 0)
      f.hold_seconds = next();
    else if (std::strcmp(argv[i], "--images") == 0)
      f.images = next();
    else if (std::strcmp(argv[i], "--hold-end") == 0)
      f.hold_end_seconds = next();
    else if (std::strcmp(argv[i], "--keep-logs") == 0)
      f.keep_logs = true;
    else if (std::strcmp(argv[i], "--peers") == 0)
      f.peers = true;
    else if (std::strcmp(argv[i], "--kubeconfig") == 0 && i + 1 < argc)
      f.kubeconfig = argv[++i];
    else if (std::strcmp(argv[i], "--server-pids") == 0 && i + 1 < argc)
      for (absl::string_view p : absl::StrSplit(argv[++i], ',', absl::SkipEmpty())) {
        int pid = 0;
        if (absl::SimpleAtoi(p, &pid)) f.server_pids.push_back(pid);
      }
  }
  if (f.default_flags) {  // the binary's defaults, for the floor and the banner
    f.qps = 20;
    f.burst = 30;
    f.workers = 1;
  }
  return ccm::bench::Run(f);
}
