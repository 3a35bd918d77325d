// Issue 15, the Kubernetes half of the fault matrix: the node controllers, wired in-process as the
// binary wires them (integration/node_e2e_env.h), against the API server emulator with injected
// faults and a real vCenter simulator. One test per row. In each, Nodes initialised before the
// fault carry labels and taints written by the kubelet, the controller and another writer, and
// new work (a kubelet registering, another writer labelling) arrives during or right after the
// fault. Afterwards:
//   - no Node was deleted (no DELETE request; every Node is still there),
//   - no label or taint write was lost (each one is on the Node in the API server),
//   - the controllers recovered: the new work is done (new Node initialised, cache current).
// The time from the fault clearing to that recovery is printed as "RECOVERY <row>: <ms> ms" and
// must stay under kRecoveryBound.
//
// Time: the informer and the REST client run on real time (reconnect backoff, Retry-After), as
// they are I/O; the node controller's work-queue backoff runs on the env's FakeClock, which the
// waits here advance (by `tick` per 5 ms poll) so a failed sync is retried after its backoff.
#include <atomic>
#include <functional>
#include <iostream>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "controllers/node_update.h"
#include "fixtures/vcsim/simulator_suite.h"
#include "fixtures/vcsim/vcsim_process.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "integration/node_e2e_env.h"
#include "testing/fake_clock.h"
#include "testing/static_credentials.h"

namespace ccm::integration {
namespace {

using ::ccm::testing::RequestRecord;
using ::ccm::testing::VcsimProcess;
using ::testing::ElementsAre;

constexpr absl::Duration kRecoveryBound = absl::Seconds(30);

constexpr char kSpec[] = R"({
  "users": {"admin": "secret"},
  "datacenters": [{"name": "dc1",
    "clusters": [{"name": "c1", "hosts": 1}],
    "vms": [
      {"name": "node-a", "cluster": "c1", "hostname": "node-a", "guest_id": "ubuntu64Guest",
       "cpus": 2, "memory_mb": 4096, "nics": [{"network": "VM Network", "ips": ["10.0.0.11"]}]},
      {"name": "node-b", "cluster": "c1", "hostname": "node-b", "guest_id": "ubuntu64Guest",
       "cpus": 2, "memory_mb": 4096, "nics": [{"network": "VM Network", "ips": ["10.0.0.12"]}]},
      {"name": "node-c", "cluster": "c1", "hostname": "node-c", "guest_id": "ubuntu64Guest",
       "cpus": 2, "memory_mb": 4096, "nics": [{"network": "VM Network", "ips": ["10.0.0.13"]}]},
      {"name": "node-d", "cluster": "c1", "hostname": "node-d", "guest_id": "ubuntu64Guest",
       "cpus": 2, "memory_mb": 4096, "nics": [{"network": "VM Network", "ips": ["10.0.0.14"]}]}
    ]}],
  "tag_categories": [{"name": "k8s-zone"}, {"name": "k8s-region"}],
  "tags": [{"name": "zone-a", "category": "k8s-zone", "attach": ["/dc1/host/c1"]},
           {"name": "region-1", "category": "k8s-region", "attach": ["/dc1"]}]
})";

constexpr char kOtherTaintKey[] = "dedicated.example.com/db";

class KubeFaultsTest : public ccm::testing::SimulatorSuite<KubeFaultsTest> {
 public:
  static std::vector<std::string> Specs() { return {kSpec}; }

 protected:
  void SetUpTest() override {
    config_.vcenters = {VcConfig(sim(), "dc")};
    config_.labels = {.region = "k8s-region", .zone = "k8s-zone"};
    ASSERT_TRUE(env_.Start(config_, creds_).ok());
  }
  void TearDown() override { env_.Stop(); }

  ccm::testing::KubeEmulator& emu() { return env_.emulator(); }

  void Register(const std::string& name) {
    const std::string uuid = VmUuid(sim(), name);
    ASSERT_FALSE(uuid.empty()) << name;
    auto n = env_.RegisterKubeletNode(name, uuid);
    ASSERT_TRUE(n.ok()) << n.status();
  }

  bool IsInitialised(const std::string& name) const {
    kube::Json n = env_.GetNode(name);
    return n.is_object() && !kube::ProviderId(n).empty() &&
           !kube::HasTaint(n, controllers::kUninitializedTaintKey);
  }
  // The controllers' cache (the Node informer) has the label.
  bool CacheHasLabel(const std::string& name, const std::string& key) {
    kube::ObjectPtr n = env_.node_informer().Get(name);
    return n && kube::Label(*n, key).has_value();
  }

  // Registers and initialises `names`, then another writer (an admin) labels and taints each:
  // the writes of three writers that the fault must not lose.
  void InitialiseBaseline(const std::vector<std::string>& names = {"node-a", "node-b"}) {
    for (const auto& n : names) Register(n);
    for (const auto& n : names) ASSERT_TRUE(env_.Initialised(n)) << env_.GetNode(n).dump();
    for (const auto& n : names) {
      ASSERT_TRUE(Edit(env_, n, [](kube::Json& j) {
                    kube::SetLabel(j, "team.example.com/owner", "blue");
                    kube::AddTaint(j, {kOtherTaintKey, "true", "NoSchedule"});
                  }).ok());
      ASSERT_TRUE(env_.StoreSees(
          n, [](const kube::Json& j) { return kube::HasTaint(j, kOtherTaintKey, "NoSchedule"); }));
      Remember(n);
    }
  }

  // The Node's labels and taints now are ones that must survive.
  void Remember(const std::string& name) {
    kube::Json n = env_.GetNode(name);
    ASSERT_TRUE(n.is_object()) << name;
    kept_[name] = n;
  }

  // Another writer edits the Node: read-modify-write conditional on the resourceVersion, retried
  // on conflict, as a well-behaved client does (a blind write could undo the controller's).
  static absl::Status Edit(NodeE2eEnv& env, const std::string& name,
                           const std::function<void(kube::Json&)>& edit) {
    absl::Status s;
    for (int i = 0; i < 100; ++i) {
      absl::StatusOr<kube::Json> n = env.emulator().Get("nodes", "", name);
      if (!n.ok()) return n.status();
      edit(*n);
      s = env.emulator().Update("nodes", *n).status();
      if (!absl::IsAborted(s)) return s;  // Aborted: 409 Conflict
    }
    return s;
  }
  static absl::Status Label(NodeE2eEnv& env, const std::string& name, const std::string& key,
                            const std::string& value) {
    return Edit(env, name, [&](kube::Json& j) { kube::SetLabel(j, key, value); });
  }
  void OtherWriterLabels(const std::string& name, const std::string& key,
                         const std::string& value) {
    ASSERT_TRUE(Label(env_, name, key, value).ok());
    if (kept_.contains(name)) kube::SetLabel(kept_[name], key, value);
  }

  void ExpectNothingLost() {
    EXPECT_EQ(emu().RequestCount("delete nodes"), 0) << "a controller deleted a Node";
    for (const auto& [name, before] : kept_) {
      SCOPED_TRACE(name);
      kube::Json now = env_.GetNode(name);
      ASSERT_TRUE(now.is_object()) << "deleted";
      std::map<std::string, std::string> labels = kube::Labels(now);
      for (const auto& [k, v] : kube::Labels(before)) {
        EXPECT_EQ(labels.contains(k) ? labels[k] : "<lost>", v) << "label " << k;
      }
      for (const kube::Taint& t : kube::Taints(before)) {
        EXPECT_TRUE(kube::HasTaint(now, t.key, t.effect)) << "taint " << t.key << " lost";
      }
      EXPECT_FALSE(kube::HasTaint(now, controllers::kUninitializedTaintKey));
      EXPECT_EQ(kube::ProviderId(now), "vsphere://" + VmUuid(sim(), name));
      EXPECT_EQ(labels["topology.kubernetes.io/zone"], "zone-a");
      EXPECT_EQ(labels["node.kubernetes.io/instance-type"], "vsphere-vm.cpu-2.mem-4gb.os-ubuntu");
    }
  }

  // Polls `recovered` every 5 ms, moving the controllers' FakeClock by `tick` per poll; returns
  // when it became true (InfiniteFuture if not within the bound).
  absl::Time WaitRecovered(const std::function<bool()>& recovered,
                           absl::Duration tick = absl::Milliseconds(5)) {
    bool ok = Eventually(
        [&] {
          if (recovered()) return true;
          env_.clock().Advance(tick);
          return false;
        },
        kRecoveryBound + absl::Seconds(10));
    return ok ? absl::Now() : absl::InfiniteFuture();
  }

  static void Report(const std::string& row, absl::Time cleared, absl::Time recovered) {
    ASSERT_NE(recovered, absl::InfiniteFuture()) << row << ": did not recover";
    ASSERT_NE(cleared, absl::InfinitePast()) << row << ": the fault never happened";
    const absl::Duration took = recovered - cleared;
    std::cout << "RECOVERY " << row << ": " << absl::ToInt64Milliseconds(took) << " ms"
              << std::endl;
    EXPECT_LT(took, kRecoveryBound) << row;
  }

  // When the last answer with an HTTP code in [lo, hi] was sent (InfinitePast if none).
  absl::Time LastAnswer(int lo, int hi) {
    absl::Time last = absl::InfinitePast();
    for (const RequestRecord& r : emu().RequestLog())
      if (r.code >= lo && r.code <= hi) last = std::max(last, r.answered);
    return last;
  }
  int CountAnswers(int lo, int hi, const std::string& path_substring = "") {
    int n = 0;
    for (const RequestRecord& r : emu().RequestLog())
      n += r.code >= lo && r.code <= hi && absl::StrContains(r.path, path_substring);
    return n;
  }
  // The HTTP code of the last logged request on `path` with this method (0 if none).
  int LastCode(const std::string& method, const std::string& path) {
    int code = 0;
    for (const RequestRecord& r : emu().RequestLog())
      if (r.method == method && r.path == path) code = r.code;
    return code;
  }
  // The emulator logs a request after it has served it, so a poll can see a Node written before
  // the write is in the log: a recovery waits for both.
  bool LastSucceeded(const std::string& method, const std::string& path) {
    const int code = LastCode(method, path);
    return code >= 200 && code <= 299;
  }
  void ExpectLastSucceeded(const std::string& method, const std::string& path) {
    EXPECT_TRUE(LastSucceeded(method, path))
        << method << " " << path << ": last answer " << LastCode(method, path);
  }
  int64_t NodeWrites() {
    return emu().RequestCount("update nodes") + emu().RequestCount("patch nodes") +
           emu().RequestCount("update nodes/status") + emu().RequestCount("patch nodes/status");
  }

  vsphere::StaticCredentialSource creds_{{"admin", Secret("secret")}};
  cloud::Config config_;
  NodeE2eEnv env_;
  std::map<std::string, kube::Json> kept_;  // Nodes whose labels and taints must survive
};

// Row 1. The API server process restarts: the port closes, every connection and watch breaks,
// and it comes back on the same address with the same objects and resourceVersions (etcd kept
// them). The controllers carry on without a process restart of their own.
TEST_F(KubeFaultsTest, ApiServerRestart) {
  InitialiseBaseline();
  kube::Informer& informer = env_.node_informer();
  const int64_t lists = informer.lists();
  const int64_t watches = informer.watches();

  emu().StopServing();
  // Down: the informer's attempt to re-watch is refused; the controllers work from their cache
  // and a lifecycle pass deletes nothing.
  ASSERT_TRUE(Eventually([&] { return informer.watches() > watches; }))
      << "the informer tries to resume its watch";
  ASSERT_TRUE(env_.LifecyclePeriod());
  // Written meanwhile through another API server of the same cluster.
  OtherWriterLabels("node-a", "during-restart.example.com", "yes");

  ASSERT_TRUE(emu().StartServing().ok());
  const absl::Time cleared = absl::Now();
  Register("node-c");  // a kubelet registers after the restart
  const absl::Time recovered = WaitRecovered([&] {
    return IsInitialised("node-c") && CacheHasLabel("node-a", "during-restart.example.com");
  });
  Report("api-server-restart", cleared, recovered);
  Remember("node-c");
  ExpectNothingLost();
  EXPECT_EQ(informer.lists(), lists)
      << "the watch resumed from its resourceVersion (kept across the restart): no relist";
}

// Row 2. The watch connection is cut: the informer resumes from its last resourceVersion (no
// relist), and what happened while it was reconnecting reaches it through the resumed watch.
TEST_F(KubeFaultsTest, WatchDroppedResumesWithoutRelist) {
  InitialiseBaseline();
  const int64_t lists = emu().RequestCount("list nodes");
  const int64_t watches = emu().RequestCount("watch nodes");

  ASSERT_GE(emu().DropWatches(), 1);
  const absl::Time cleared = absl::Now();
  Register("node-c");
  OtherWriterLabels("node-b", "after-drop.example.com", "yes");
  const absl::Time recovered = WaitRecovered(
      [&] { return IsInitialised("node-c") && CacheHasLabel("node-b", "after-drop.example.com"); });
  Report("watch-dropped", cleared, recovered);
  EXPECT_EQ(emu().RequestCount("list nodes"), lists) << "no relist";
  EXPECT_GT(emu().RequestCount("watch nodes"), watches) << "the watch was resumed";
  Remember("node-c");
  ExpectNothingLost();
}

// Row 3. The informer's resourceVersion is compacted away while its watch is down: the watch
// answers 410 and the informer relists. Objects that still exist stay in the cache (no delete
// notification for them); the one really deleted meanwhile is reported deleted; the controllers
// write nothing because of the relist.
TEST_F(KubeFaultsTest, GoneRelistsWithoutSpuriousDeletes) {
  InitialiseBaseline({"node-a", "node-b", "node-d"});
  absl::Mutex mu;
  std::vector<std::string> deleted;
  env_.node_informer().AddEventHandler({.on_delete = [&](const kube::Json& n) {
    absl::MutexLock l(&mu);
    deleted.push_back(kube::Name(n));
  }});
  const int64_t lists = emu().RequestCount("list nodes");
  const int64_t writes = NodeWrites();

  // Hold the informer's next watch for 500 ms so that it starts after the compaction below
  // (it reconnects after a backoff of at least 720 ms anyway).
  emu().InjectDelay({.delay = absl::Milliseconds(500),
                     .count = 1,
                     .method = "watch",
                     .path_substring = "/nodes"});
  ASSERT_GE(emu().DropWatches(), 1);
  OtherWriterLabels("node-a", "before-compaction.example.com", "yes");
  ASSERT_TRUE(emu().Delete("nodes", "", "node-d").ok());  // an admin deletes it
  kept_.erase("node-d");
  emu().CompactHistory();
  const absl::Time cleared = absl::Now();
  // Handlers run after the cache is updated (as client-go's): wait for the notification too.
  const absl::Time recovered = WaitRecovered([&] {
    absl::MutexLock l(&mu);
    return emu().RequestCount("list nodes") > lists &&
           CacheHasLabel("node-a", "before-compaction.example.com") &&
           env_.node_informer().Get("node-d") == nullptr && !deleted.empty();
  });
  Report("gone-410-relist", cleared, recovered);
  EXPECT_EQ(emu().RequestCount("list nodes"), lists + 1) << "exactly one relist";
  {
    absl::MutexLock l(&mu);
    EXPECT_THAT(deleted, ElementsAre("node-d")) << "delete notifications only for the deleted Node";
  }
  // The controllers did nothing because of the relist: a lifecycle period later still no write.
  ASSERT_TRUE(env_.LifecyclePeriod());
  EXPECT_EQ(NodeWrites(), writes);
  EXPECT_EQ(env_.node_informer().Size(), 2u);
  ExpectNothingLost();
}

// Row 4. 429 with Retry-After on the writes of a Node being initialised and on the Node watch:
// the client waits at least Retry-After before each retry, every write succeeds afterwards, and
// the watch is retried without a relist.
TEST_F(KubeFaultsTest, TooManyRequestsHonoursRetryAfter) {
  InitialiseBaseline();
  emu().InjectError({.code = 429,
                     .count = 2,
                     .method = "patch",
                     .path_substring = "/api/v1/nodes/node-c/status",
                     .retry_after_seconds = 1});
  emu().InjectError({.code = 429,
                     .count = 1,
                     .method = "patch",
                     .path_substring = "/api/v1/nodes/node-c",
                     .retry_after_seconds = 2,
                     .whole_path = true});
  emu().InjectError({.code = 429,
                     .count = 1,
                     .method = "watch",
                     .path_substring = "/api/v1/nodes",
                     .retry_after_seconds = 1});
  const int64_t lists = emu().RequestCount("list nodes");
  ASSERT_GE(emu().DropWatches(), 1);
  Register("node-c");
  OtherWriterLabels("node-a", "during-429.example.com", "yes");
  const absl::Time recovered = WaitRecovered([&] {
    return IsInitialised("node-c") && LastSucceeded("PATCH", "/api/v1/nodes/node-c") &&
           CacheHasLabel("node-a", "during-429.example.com");
  });
  Report("too-many-requests-429", LastAnswer(429, 429), recovered);

  // Each 429 is followed by the same request, sent no sooner than its Retry-After.
  const std::vector<RequestRecord> log = emu().RequestLog();
  int n429 = 0;
  for (size_t i = 0; i < log.size(); ++i) {
    if (log[i].code != 429) continue;
    ++n429;
    int wait_s = 0;
    ASSERT_TRUE(absl::SimpleAtoi(log[i].retry_after, &wait_s)) << log[i].path;
    size_t j = i + 1;
    while (j < log.size() && (log[j].method != log[i].method || log[j].path != log[i].path)) ++j;
    ASSERT_LT(j, log.size()) << log[i].method << " " << log[i].path << " never retried";
    const absl::Duration waited = log[j].time - log[i].answered;
    EXPECT_GE(waited, absl::Seconds(wait_s)) << log[i].method << " " << log[i].path;
    std::cout << "429 on " << log[i].method << " " << log[i].path << ": Retry-After " << wait_s
              << " s, retried after " << absl::ToInt64Milliseconds(waited) << " ms" << std::endl;
  }
  EXPECT_EQ(n429, 4);
  ExpectLastSucceeded("PATCH", "/api/v1/nodes/node-c/status");
  ExpectLastSucceeded("PATCH", "/api/v1/nodes/node-c");
  EXPECT_EQ(emu().RequestCount("list nodes"), lists)
      << "a watch answered 429 is retried, not relisted";
  Remember("node-c");
  ExpectNothingLost();
}

// Row 5. Bursts of 500/503/504 on the writes of a Node being initialised, and a 500 on the
// Node watch and on the relist that follows: the sync fails, is retried with the work queue's
// backoff and succeeds; the informer relists after its backoff; nothing is lost.
TEST_F(KubeFaultsTest, ServerErrorBurstsAreRetriedWithBackoff) {
  InitialiseBaseline();
  const std::string node_c = "/api/v1/nodes/node-c";
  emu().InjectError({.code = 500, .count = 3, .method = "patch", .path_substring = node_c});
  emu().InjectError({.code = 504, .count = 2, .method = "patch", .path_substring = node_c});
  emu().InjectError(
      {.code = 503, .count = 2, .method = "patch", .path_substring = node_c, .whole_path = true});
  emu().InjectError(
      {.code = 500, .count = 2, .method = "patch", .path_substring = node_c, .whole_path = true});
  emu().InjectError({.code = 500, .count = 1, .method = "watch", .path_substring = "/nodes"});
  emu().InjectError({.code = 503, .count = 1, .method = "list", .path_substring = "/nodes"});
  ASSERT_GE(emu().DropWatches(), 1);
  Register("node-c");
  OtherWriterLabels("node-b", "during-5xx.example.com", "yes");
  const absl::Time recovered = WaitRecovered([&] {
    return IsInitialised("node-c") && LastSucceeded("PATCH", node_c) &&
           CacheHasLabel("node-b", "during-5xx.example.com");
  });
  Report("server-errors-5xx", LastAnswer(500, 599), recovered);
  EXPECT_EQ(CountAnswers(500, 599), 3 + 2 + 2 + 2 + 1 + 1) << "every injected error was met";
  ExpectLastSucceeded("PATCH", node_c + "/status");
  ExpectLastSucceeded("PATCH", node_c);
  EXPECT_TRUE(env_.WaitForEvent("node-c", "Warning", "InitializationFailed", "node-c"))
      << "a failed sync says why";
  Remember("node-c");
  ExpectNothingLost();
}

// Row 6. A 409 storm on a Node being initialised while another writer keeps labelling it (its
// own writes meet the same conflicts and are retried): the controller re-reads and converges,
// and keeps every label of the other writer. Its Node write is a JSON patch guarded only by the
// values it computed from, so the other writer's labels (every 20 ms, faster than a read and a
// write under ThreadSanitizer) cannot make it conflict: a PUT with the resourceVersion would.
TEST_F(KubeFaultsTest, ConflictStormConvergesAndKeepsOtherWritersLabels) {
  InitialiseBaseline();
  // Every sync meets one on its status PATCH before it can try the Node write: 10 failed syncs in a
  // row (a storm far longer than real contention makes), so the work queue's per-item backoff (5 ms
  // doubling, as client-go's default) reaches 2.5 s. The wait moves the controllers' clock at about
  // real speed, so the recovery time is what a real clock would give.
  constexpr int kConflicts = 10;
  emu().ForceConflicts("nodes", "", "node-c", kConflicts);
  const absl::Time registered = absl::Now();
  Register("node-c");
  // The other writer labels node-c every 20 ms until the controller is done, so its writes
  // land between the controller's reads and writes all through the storm.
  std::atomic<bool> stop{false};
  std::atomic<int> written{0}, failed{0}, written_by_hook{0};
  std::thread writer([&] {
    for (int i = 0; !stop.load() && i < 1000; ++i) {
      if (Label(env_, "node-c", absl::StrCat("other.example.com/l", i), "v").ok()) {
        ++written;
      } else {
        ++failed;
      }
      absl::SleepFor(absl::Milliseconds(20));  // spacing of the writes, not a wait for a result
    }
  });
  // And once the status PATCH finally passes, right before the controller's Node write: a label
  // that makes its copy stale, and three more forced conflicts for the write's re-read loop.
  std::atomic<bool> hooked{false};
  env_.client().SetAfterPatch([&](absl::string_view name, absl::string_view sub) {
    if (name != "node-c" || sub != "status" || hooked.exchange(true)) return;
    if (Label(env_, "node-c", "hook.example.com/after-patch", "v").ok()) ++written_by_hook;
    emu().ForceConflicts("nodes", "", "node-c", 3);
  });
  const absl::Time recovered = WaitRecovered([&] { return IsInitialised("node-c"); });
  stop = true;
  writer.join();
  env_.client().SetAfterPatch(nullptr);
  EXPECT_TRUE(hooked.load());
  EXPECT_EQ(written_by_hook.load(), 1);
  EXPECT_EQ(kube::Label(env_.GetNode("node-c"), "hook.example.com/after-patch"), "v");
  Report("conflict-storm-409", LastAnswer(409, 409), recovered);
  std::cout << "conflict storm: node-c initialised "
            << absl::ToInt64Milliseconds(recovered - registered) << " ms after it registered"
            << std::endl;
  EXPECT_EQ(failed.load(), 0);
  EXPECT_GE(written.load(), 10);
  EXPECT_GE(CountAnswers(409, 409, "/api/v1/nodes/node-c"), kConflicts + 3)
      << "the controller met the storm";
  std::map<std::string, std::string> labels = kube::Labels(env_.GetNode("node-c"));
  for (int i = 0; i < written.load(); ++i) {
    EXPECT_EQ(labels[absl::StrCat("other.example.com/l", i)], "v") << "other writer's label " << i;
  }
  int write_conflicts = 0;
  for (const RequestRecord& r : emu().RequestLog())
    write_conflicts += r.method == "PATCH" && r.path == "/api/v1/nodes/node-c" && r.code == 409;
  EXPECT_EQ(write_conflicts, 3)
      << "only the forced conflicts: other writers' labels do not conflict";
  std::cout << "other writer: " << written.load() << " labels during the storm; the controller's "
            << "Node write met " << write_conflicts << " conflict(s) and re-read" << std::endl;
  Remember("node-c");
  ExpectNothingLost();
}

}  // namespace
}  // namespace ccm::integration
