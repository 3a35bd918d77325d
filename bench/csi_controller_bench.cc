// CSI controller benchmark: create + publish + unpublish, a snapshot of each, a restore of each,
// and the deletes, of 1,000 volumes through the real gRPC socket against the simulator's CNS,
// with the wiring the binary uses. Prints per phase
// the latency percentiles, the vCenter requests per operation split by method (the simulator's
// /counters), and the simulator's own CNS task time for comparison. Asserts nothing.
//
//   csi_controller_bench [volumes=1000] [workers=8] [cns_task_delay_ms=0] [idle_seconds=0]
// With idle_seconds, the volumes are created and published again and the controller left idle that
// long: the vCenter requests it makes meanwhile are printed (issue 25's goal: <= 10 per vCenter in
// 5 minutes, at the production stream waits).
// The simulator finishes a CNS task in well under a millisecond, where vCenter takes hundreds;
// a delay makes the comparison with the task time meaningful.
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "controller_env.h"

namespace {

using ccm::csi::testing::ControllerEnv;
constexpr int kNodes = 50;

std::string Spec(int volumes) {
  return absl::StrCat(R"({
  "users": {"csi-user": "csi-pass"},
  "datacenters": [{"name": "dc1", "clusters": [{"name": "c1", "hosts": 4}],
    "generate_vms": {"count": )",
                      kNodes, R"(, "prefix": "node-", "cluster": "c1"},
    "datastores": [{"name": "datastore1", "capacity_mb": 1024},
                   {"name": "shared", "capacity_mb": )",
                      (2 * volumes + 10) * 1024, R"(}]}]
})");
}

struct Phase {
  std::string name;
  std::vector<double> ms;
  int errors = 0;
  std::string first_error;
  absl::Duration wall;
  std::map<std::string, int> soap, rest, cns;
  std::map<std::string, ccm::testing::VcsimCnsTaskStat> tasks;
  std::string cns_method;  // whose simulator task time Print compares with
};

double Pct(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(p * (v.size() - 1) + 0.5))];
}

// Runs fn(i) for i in [0, n) on `workers` threads, timing each call.
template <typename Fn>
Phase Run(const std::string& name, int n, int workers, ControllerEnv& env, Fn fn) {
  Phase ph;
  ph.name = name;
  (void)env.sim().ResetCounters();
  const auto cns_before = env.sim().CnsCounters().value_or(std::map<std::string, int>{});
  std::atomic<int> next{0};
  absl::Mutex mu;
  const absl::Time start = absl::Now();
  std::vector<std::thread> threads;
  for (int w = 0; w < workers; ++w) {
    threads.emplace_back([&] {
      for (int i = next++; i < n; i = next++) {
        const absl::Time t0 = absl::Now();
        grpc::Status s = fn(i);
        const double ms = absl::ToDoubleMilliseconds(absl::Now() - t0);
        absl::MutexLock l(&mu);
        ph.ms.push_back(ms);
        if (!s.ok()) {
          if (ph.errors++ == 0) ph.first_error = s.error_message();
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  ph.wall = absl::Now() - start;
  ph.soap = env.sim().SoapCounters().value_or(std::map<std::string, int>{});
  ph.rest = env.sim().RestCounters().value_or(std::map<std::string, int>{});
  for (const auto& [m, c] : env.sim().CnsCounters().value_or(std::map<std::string, int>{})) {
    auto it = cns_before.find(m);
    const int d = c - (it == cns_before.end() ? 0 : it->second);
    if (d > 0) ph.cns[m] = d;
  }
  ph.tasks =
      env.sim().CnsTaskStats().value_or(std::map<std::string, ccm::testing::VcsimCnsTaskStat>{});
  return ph;
}

void Print(const Phase& ph, int n, const std::string& cns_method) {
  std::printf("\n== %s: %d ops in %.2f s (%.0f ops/s), errors %d%s%s\n", ph.name.c_str(), n,
              absl::ToDoubleSeconds(ph.wall), n / absl::ToDoubleSeconds(ph.wall), ph.errors,
              ph.errors ? ", first: " : "", ph.first_error.c_str());
  std::printf("   latency ms: p50 %.1f  p90 %.1f  p99 %.1f  max %.1f\n", Pct(ph.ms, 0.5),
              Pct(ph.ms, 0.9), Pct(ph.ms, 0.99), Pct(ph.ms, 1.0));
  int total = 0;
  for (const auto& [m, c] : ph.soap) total += c;
  for (const auto& [m, c] : ph.rest) total += c;
  std::printf("   vCenter requests: %d total, %.2f per op\n", total, double(total) / n);
  for (const auto& [m, c] : ph.soap)
    std::printf("     %-32s %6d  %.2f/op\n", m.c_str(), c, double(c) / n);
  for (const auto& [m, c] : ph.rest)
    std::printf("     REST %-27s %6d  %.2f/op\n", m.c_str(), c, double(c) / n);
  for (const auto& [m, c] : ph.cns) {
    std::printf("       of which CNS %-22s %6d  %.2f/op\n", m.c_str(), c, double(c) / n);
  }
  auto it = ph.tasks.find(cns_method);
  if (it != ph.tasks.end()) {
    std::printf("   simulator %s task time: p50 %.1f ms, max %.1f ms (%d tasks); p50 ratio %.2fx\n",
                cns_method.c_str(), it->second.p50_ms, it->second.max_ms, it->second.count,
                it->second.p50_ms > 0 ? Pct(ph.ms, 0.5) / it->second.p50_ms : 0.0);
  }
}

}  // namespace

// Creates and publishes n volumes, then leaves the controller idle: prints its vCenter requests.
grpc::Status Delete(::csi::v1::Controller::Stub& stub, const std::string& volume) {
  grpc::ClientContext ctx;
  ::csi::v1::DeleteVolumeRequest req;
  req.set_volume_id(volume);
  ::csi::v1::DeleteVolumeResponse resp;
  return stub.DeleteVolume(&ctx, req, &resp);
}

// A snapshot of every volume, a restore of each, and their deletes.
std::vector<Phase> SnapshotPhases(ControllerEnv& env, const std::vector<std::string>& ids,
                                  int workers) {
  const int n = static_cast<int>(ids.size());
  auto& stub = env.controller();
  std::vector<std::string> snaps(n), restored(n);
  std::vector<Phase> out;
  out.push_back(Run("CreateSnapshot", n, workers, env, [&](int i) {
    grpc::ClientContext ctx;
    ::csi::v1::CreateSnapshotRequest req;
    req.set_name(absl::StrCat("snapshot-bench-", i));
    req.set_source_volume_id(ids[i]);
    ::csi::v1::CreateSnapshotResponse resp;
    grpc::Status s = stub.CreateSnapshot(&ctx, req, &resp);
    snaps[i] = resp.snapshot().snapshot_id();
    return s;
  }));
  out.back().cns_method = "CnsCreateSnapshots";
  out.push_back(Run("CreateVolume from a snapshot", n, workers, env, [&](int i) {
    grpc::ClientContext ctx;
    auto req = ccm::csi::testing::CreateReq(absl::StrCat("pvc-restored-", i), 1024 * 1024 * 1024);
    req.mutable_volume_content_source()->mutable_snapshot()->set_snapshot_id(snaps[i]);
    ::csi::v1::CreateVolumeResponse resp;
    grpc::Status s = stub.CreateVolume(&ctx, req, &resp);
    restored[i] = resp.volume().volume_id();
    return s;
  }));
  out.back().cns_method = "CnsCreateVolume";
  out.push_back(Run("DeleteVolume (restored)", n, workers, env,
                    [&](int i) { return Delete(stub, restored[i]); }));
  out.back().cns_method = "CnsDeleteVolume";
  out.push_back(Run("DeleteSnapshot", n, workers, env, [&](int i) {
    grpc::ClientContext ctx;
    ::csi::v1::DeleteSnapshotRequest req;
    req.set_snapshot_id(snaps[i]);
    ::csi::v1::DeleteSnapshotResponse resp;
    return stub.DeleteSnapshot(&ctx, req, &resp);
  }));
  out.back().cns_method = "CnsDeleteSnapshots";
  return out;
}

void Idle(ControllerEnv& env, int n, int workers, const std::vector<std::string>& nodes,
          int seconds) {
  auto& stub = env.controller();
  Run("CreateVolume + ControllerPublishVolume", n, workers, env, [&](int i) {
    grpc::ClientContext ctx;
    ::csi::v1::CreateVolumeResponse resp;
    grpc::Status s = stub.CreateVolume(
        &ctx, ccm::csi::testing::CreateReq(absl::StrCat("pvc-idle-", i), 1024 * 1024 * 1024),
        &resp);
    if (!s.ok()) return s;
    grpc::ClientContext pctx;
    ::csi::v1::ControllerPublishVolumeRequest req;
    req.set_volume_id(resp.volume().volume_id());
    req.set_node_id(nodes[i % nodes.size()]);
    *req.mutable_volume_capability() = ccm::csi::testing::MountCap();
    ::csi::v1::ControllerPublishVolumeResponse presp;
    return stub.ControllerPublishVolume(&pctx, req, &presp);
  });
  (void)env.sim().ResetCounters();
  absl::SleepFor(absl::Seconds(seconds));
  const auto soap = env.sim().SoapCounters().value_or(std::map<std::string, int>{});
  const auto rest = env.sim().RestCounters().value_or(std::map<std::string, int>{});
  int total = 0;
  std::string by_method;
  for (const auto* counters : {&soap, &rest}) {
    for (const auto& [m, c] : *counters) {
      total += c;
      absl::StrAppend(&by_method, " ", m, "=", c);
    }
  }
  std::printf(
      "\nidle for %d s with %d volumes attached: %d vCenter requests (%.1f per 5 minutes; "
      "goal <= 10 per vCenter):%s\n",
      seconds, n, total, total * 300.0 / seconds, by_method.c_str());
}

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 1000;
  const int workers = argc > 2 ? std::atoi(argv[2]) : 8;
  const int delay_ms = argc > 3 ? std::atoi(argv[3]) : 0;
  const int idle_seconds = argc > 4 ? std::atoi(argv[4]) : 0;
  // The production refresh delay after a change (BackendOptions' default).
  auto env_or = ControllerEnv::Start(Spec(n), ccm::csi::BackendOptions().datastore_change_delay);
  if (!env_or.ok()) {
    std::fprintf(stderr, "start: %s\n", env_or.status().ToString().c_str());
    return 1;
  }
  ControllerEnv& env = **env_or;
  for (const char* m : {"CnsCreateVolume", "CnsAttachVolume", "CnsDetachVolume", "CnsDeleteVolume",
                        "CnsCreateSnapshots", "CnsDeleteSnapshots", "CnsQuerySnapshots"}) {
    (void)env.sim().SetCnsDelay(m, delay_ms);
  }
  std::vector<std::string> nodes;
  for (const auto& vm : env.sim().info().vms) nodes.push_back(vm.uuid);
  std::printf("csi_controller_bench: %d volumes, %d workers, %zu node VMs, CNS task delay %d ms\n",
              n, workers, nodes.size(), delay_ms);
  const auto inventory_before = env.backend().inventory().stats();

  std::vector<std::string> ids(n);
  auto& stub = env.controller();
  Phase create = Run("CreateVolume", n, workers, env, [&](int i) {
    grpc::ClientContext ctx;
    ::csi::v1::CreateVolumeResponse resp;
    grpc::Status s = stub.CreateVolume(
        &ctx, ccm::csi::testing::CreateReq(absl::StrCat("pvc-bench-", i), 1024 * 1024 * 1024),
        &resp);
    ids[i] = resp.volume().volume_id();
    return s;
  });
  Phase publish = Run("ControllerPublishVolume", n, workers, env, [&](int i) {
    grpc::ClientContext ctx;
    ::csi::v1::ControllerPublishVolumeRequest req;
    req.set_volume_id(ids[i]);
    req.set_node_id(nodes[i % nodes.size()]);
    *req.mutable_volume_capability() = ccm::csi::testing::MountCap();
    ::csi::v1::ControllerPublishVolumeResponse resp;
    return stub.ControllerPublishVolume(&ctx, req, &resp);
  });
  Phase unpublish = Run("ControllerUnpublishVolume", n, workers, env, [&](int i) {
    grpc::ClientContext ctx;
    ::csi::v1::ControllerUnpublishVolumeRequest req;
    req.set_volume_id(ids[i]);
    req.set_node_id(nodes[i % nodes.size()]);
    ::csi::v1::ControllerUnpublishVolumeResponse resp;
    return stub.ControllerUnpublishVolume(&ctx, req, &resp);
  });
  std::vector<Phase> snapshot_phases = SnapshotPhases(env, ids, workers);
  Phase del = Run("DeleteVolume", n, workers, env, [&](int i) { return Delete(stub, ids[i]); });
  Print(create, n, "CnsCreateVolume");
  Print(publish, n, "CnsAttachVolume");
  Print(unpublish, n, "CnsDetachVolume");
  for (const Phase& ph : snapshot_phases) Print(ph, n, ph.cns_method);
  Print(del, n, "CnsDeleteVolume");
  const auto inventory = env.backend().inventory().stats();
  std::printf(
      "\ndatastore inventory during the run: %llu quick refreshes (1 request each), %llu full "
      "refreshes, %llu changes noted; node look-ups: from the VM cache (no request)\n",
      static_cast<unsigned long long>(inventory.quick_refreshes - inventory_before.quick_refreshes),
      static_cast<unsigned long long>(inventory.full_refreshes - inventory_before.full_refreshes),
      static_cast<unsigned long long>(inventory.changes_noted - inventory_before.changes_noted));
  if (idle_seconds > 0) Idle(env, n, workers, nodes, idle_seconds);
  return 0;
}
