// RestClient and Informer against the in-process API server emulator (TLS, auth, faults).
#include <httplib.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "common/clock.h"
#include "fixtures/kube_emulator/kube_emulator.h"
#include "gtest/gtest.h"
#include "kube/client.h"
#include "kube/config.h"
#include "kube/informer.h"
#include "kube/objects.h"
#include "testing/eventually.h"
#include "testing/fake_clock.h"

namespace ccm::kube {
namespace {

using ::ccm::testing::KubeconfigAuth;
using ::ccm::testing::KubeconfigOptions;
using ::ccm::testing::KubeEmulator;

std::string TempPath(const std::string& name) {
  static const std::string dir = [] {
    auto d = std::filesystem::temp_directory_path() / absl::StrCat("ccm-kube-emu-", getpid());
    std::filesystem::create_directories(d);
    return d.string();
  }();
  return dir + "/" + name;
}

void WriteFile(const std::string& path, const std::string& text) {
  std::ofstream(path + ".tmp") << text;
  std::filesystem::rename(path + ".tmp", path);
}

Json NodeObj(const std::string& name) {
  return {{"apiVersion", "v1"}, {"kind", "Node"}, {"metadata", {{"name", name}}}};
}

class EmulatorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto url = emu_.Start();
    ASSERT_TRUE(url.ok()) << url.status();
  }

  std::unique_ptr<RestClient> NewClient(KubeconfigOptions ko = {}, double qps = 0,
                                        RestClientOptions ro = {}) {
    std::string path = TempPath(absl::StrCat("kubeconfig-", counter_++));
    EXPECT_TRUE(emu_.WriteKubeconfig(path, ko).ok());
    auto cfg = LoadKubeconfig(path);
    EXPECT_TRUE(cfg.ok()) << cfg.status();
    cfg->qps = qps;
    auto c = RestClient::New(*cfg, ro);
    EXPECT_TRUE(c.ok()) << c.status();
    return std::move(c).value();
  }

  KubeEmulator emu_;
  int counter_ = 0;
};

TEST_F(EmulatorTest, KubeconfigVariantsAuthenticate) {
  const KubeconfigOptions variants[] = {
      {KubeconfigAuth::kToken},          {KubeconfigAuth::kTokenFile},
      {KubeconfigAuth::kClientCertData}, {KubeconfigAuth::kClientCertFiles, false, true},
      {KubeconfigAuth::kToken, true},  // insecure-skip-tls-verify
  };
  for (const auto& v : variants) {
    auto c = NewClient(v);
    auto r = c->Create(Nodes(), "", NodeObj(absl::StrCat("n-", counter_)));
    EXPECT_TRUE(r.ok()) << static_cast<int>(v.auth) << ": " << r.status();
  }
  auto anon = NewClient({KubeconfigAuth::kNone});
  EXPECT_TRUE(IsUnauthorized(anon->Get(Nodes(), "", "x").status()));
  auto bad = NewClient({KubeconfigAuth::kToken, false, false, "wrong-token"});
  EXPECT_TRUE(IsUnauthorized(bad->Get(Nodes(), "", "x").status()));
}

TEST_F(EmulatorTest, TlsServerNameRoutesToRealHost) {
  std::string path = TempPath("kc-sni");
  ASSERT_TRUE(emu_.WriteKubeconfig(path).ok());
  auto cfg = LoadKubeconfig(path);
  ASSERT_TRUE(cfg.ok());
  cfg->tls_server_name = "localhost";  // the emulator's certificate names localhost too
  auto c = RestClient::New(*cfg);
  ASSERT_TRUE(c.ok());
  EXPECT_TRUE(IsNotFoundError((*c)->Get(Nodes(), "", "none").status()));
}

TEST_F(EmulatorTest, InClusterConfigFollowsRotatingToken) {
  KubeEmulator emu;
  std::string server_tokens = TempPath("server-tokens");
  std::string sa_token = TempPath("sa-token");
  WriteFile(server_tokens, "tok-one\n");
  WriteFile(sa_token, "tok-one\n");
  ::ccm::testing::KubeEmulatorOptions eo;
  eo.tokens = {};
  eo.token_file = server_tokens;
  ASSERT_TRUE(emu.Start(eo).ok());
  WriteFile(TempPath("ca.crt"), emu.CaPem());
  WriteFile(TempPath("namespace"), "kube-system");
  std::string port = emu.url().substr(emu.url().rfind(':') + 1);
  auto env = [&](absl::string_view k) -> std::optional<std::string> {
    if (k == "KUBERNETES_SERVICE_HOST") return std::string("127.0.0.1");
    if (k == "KUBERNETES_SERVICE_PORT") return port;
    return std::nullopt;
  };
  auto cfg = InClusterConfig(env, {sa_token, TempPath("ca.crt"), TempPath("namespace")});
  ASSERT_TRUE(cfg.ok()) << cfg.status();
  auto c = RestClient::New(*cfg);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ((*c)->DefaultNamespace(), "kube-system");
  ASSERT_TRUE((*c)->Create(Nodes(), "", NodeObj("a")).ok());
  // The token rotates: the server only accepts the new one, the client re-reads its file.
  WriteFile(server_tokens, "tok-number-two\n");
  WriteFile(sa_token, "tok-number-two\n");
  auto got = (*c)->Get(Nodes(), "", "a");
  EXPECT_TRUE(got.ok()) << got.status();
}

TEST_F(EmulatorTest, EveryRequestKind) {
  auto c = NewClient();
  // create (namespaced) + get
  Json cm = {{"metadata", {{"name", "cm1"}, {"namespace", "default"}}}, {"data", {{"k", "v"}}}};
  auto created = c->Create(ConfigMaps(), "default", cm);
  ASSERT_TRUE(created.ok()) << created.status();
  EXPECT_FALSE(Uid(*created).empty());
  EXPECT_TRUE(IsAlreadyExistsError(c->Create(ConfigMaps(), "default", cm).status()));
  auto got = c->Get(ConfigMaps(), "default", "cm1");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ((*got)["data"]["k"], "v");
  auto missing = c->Get(ConfigMaps(), "default", "nope");
  EXPECT_TRUE(IsNotFoundError(missing.status()));
  EXPECT_NE(missing.status().message().find("get /api/v1/namespaces/default/configmaps/nope"),
            absl::string_view::npos)
      << missing.status();

  // update keeps unknown fields; a stale resourceVersion is a conflict
  Json upd = *got;
  upd["data"]["k2"] = "v2";
  upd["metadata"]["annotations"]["other-controller"] = "wrote-this";
  auto updated = c->Update(ConfigMaps(), upd);
  ASSERT_TRUE(updated.ok()) << updated.status();
  EXPECT_EQ((*updated)["metadata"]["annotations"]["other-controller"], "wrote-this");
  auto stale = c->Update(ConfigMaps(), upd);
  EXPECT_TRUE(IsConflict(stale.status())) << stale.status();

  // three patch types on a node and its status
  ASSERT_TRUE(c->Create(Nodes(), "", NodeObj("p1")).ok());
  ASSERT_TRUE(
      c->Patch(Nodes(), "", "p1", PatchType::kMerge, {{"metadata", {{"labels", {{"a", "1"}}}}}})
          .ok());
  ASSERT_TRUE(c->Patch(Nodes(), "", "p1", PatchType::kStrategicMerge,
                       {{"spec", {{"taints", {{{"key", "t"}, {"effect", "NoSchedule"}}}}}}})
                  .ok());
  auto jp = c->Patch(
      Nodes(), "", "p1", PatchType::kJson,
      Json::array({{{"op", "add"}, {"path", "/spec/providerID"}, {"value", "vsphere://x"}}}));
  ASSERT_TRUE(jp.ok()) << jp.status();
  auto st = c->Patch(
      Nodes(), "", "p1", PatchType::kStrategicMerge,
      {{"status", {{"addresses", {{{"type", "InternalIP"}, {"address", "10.0.0.9"}}}}}}}, "status");
  ASSERT_TRUE(st.ok()) << st.status();
  auto node = c->Get(Nodes(), "", "p1");
  ASSERT_TRUE(node.ok());
  EXPECT_EQ(Label(*node, "a"), "1");
  EXPECT_TRUE(HasTaint(*node, "t", "NoSchedule"));
  EXPECT_EQ(ProviderId(*node), "vsphere://x");
  EXPECT_EQ(NodeAddresses(*node), (std::vector<NodeAddress>{{"InternalIP", "10.0.0.9"}}));
  // status update via PUT
  Json n2 = *node;
  n2["status"]["nodeInfo"]["systemUUID"] = "uuid-1";
  auto us = c->UpdateStatus(Nodes(), n2);
  ASSERT_TRUE(us.ok()) << us.status();
  EXPECT_EQ(SystemUuid(*us), "uuid-1");

  // delete with preconditions
  DeleteOptions wrong_uid;
  wrong_uid.precondition_uid = "not-the-uid";
  EXPECT_TRUE(IsConflict(c->Delete(Nodes(), "", "p1", wrong_uid)));
  DeleteOptions right;
  right.precondition_uid = Uid(*us);
  right.precondition_resource_version = ResourceVersion(*us);
  EXPECT_TRUE(c->Delete(Nodes(), "", "p1", right).ok());
  EXPECT_TRUE(IsNotFoundError(c->Delete(Nodes(), "", "p1")));

  // other resources: secrets, leases, events.k8s.io, namespaces
  Json secret = {{"metadata", {{"name", "s"}, {"namespace", "kube-system"}}},
                 {"data", {{"u", Base64Encode("admin")}}}};
  ASSERT_TRUE(c->Create(Secrets(), "kube-system", secret).ok());
  auto sec = c->Get(Secrets(), "kube-system", "s");
  ASSERT_TRUE(sec.ok());
  EXPECT_EQ(SecretData(*sec)->at("u"), "admin");
  Json lease = {{"metadata", {{"name", "ccm"}, {"namespace", "kube-system"}}}};
  SetLeaseSpec(lease, {"me", 15, "", "", 0});
  ASSERT_TRUE(c->Create(Leases(), "kube-system", lease).ok());
  EXPECT_EQ(GetLeaseSpec(*c->Get(Leases(), "kube-system", "ccm")).holder_identity, "me");
  auto ns = c->List(Namespaces(), "", {});
  ASSERT_TRUE(ns.ok()) << ns.status();
}

// The identity variants read only the answer's metadata, and agree with what the server stored.
TEST_F(EmulatorTest, WritesForIdentityAgreeWithTheStoredObject) {
  auto c = NewClient();
  Json cm = {{"metadata", {{"name", "id1"}, {"namespace", "default"}}}, {"data", {{"k", "v"}}}};
  auto created = c->CreateForIdentity(ConfigMaps(), "default", cm);
  ASSERT_TRUE(created.ok()) << created.status();
  auto got = c->Get(ConfigMaps(), "default", "id1");
  ASSERT_TRUE(got.ok()) << got.status();
  Json want = {{"metadata",
                {{"name", "id1"},
                 {"namespace", "default"},
                 {"uid", Uid(*got)},
                 {"resourceVersion", ResourceVersion(*got)}}}};
  EXPECT_EQ(*created, want);

  ASSERT_TRUE(c->Create(Nodes(), "", NodeObj("id-node")).ok());
  auto patched = c->PatchForIdentity(
      Nodes(), "", "id-node", PatchType::kStrategicMerge,
      {{"status", {{"addresses", {{{"type", "InternalIP"}, {"address", "10.0.0.8"}}}}}}}, "status");
  ASSERT_TRUE(patched.ok()) << patched.status();
  auto node = c->Get(Nodes(), "", "id-node");
  ASSERT_TRUE(node.ok()) << node.status();
  EXPECT_EQ(NodeAddresses(*node), (std::vector<NodeAddress>{{"InternalIP", "10.0.0.8"}}));
  EXPECT_EQ((*patched)["metadata"]["resourceVersion"], ResourceVersion(*node));
  EXPECT_EQ((*patched)["metadata"]["uid"], Uid(*node));
  // Errors are the write's, as with Patch.
  auto missing = c->PatchForIdentity(Nodes(), "", "no-such-node", PatchType::kMerge,
                                     {{"metadata", {{"labels", {{"a", "1"}}}}}});
  EXPECT_TRUE(IsNotFoundError(missing.status())) << missing.status();
}

// A status PATCH read without its status: the stored metadata and spec, as Get reads them.
TEST_F(EmulatorTest, PatchWithoutStatusKeepsMetadataAndSpec) {
  auto c = NewClient();
  Json n = NodeObj("ws-node");
  n["metadata"]["labels"] = {{"a", "1"}};
  n["spec"]["providerID"] = "vsphere://x";
  ASSERT_TRUE(c->Create(Nodes(), "", n).ok());
  auto patched = c->PatchWithoutStatus(
      Nodes(), "", "ws-node", PatchType::kStrategicMerge,
      {{"status", {{"addresses", {{{"type", "InternalIP"}, {"address", "10.0.0.9"}}}}}}}, "status");
  ASSERT_TRUE(patched.ok()) << patched.status();
  auto node = c->Get(Nodes(), "", "ws-node");
  ASSERT_TRUE(node.ok()) << node.status();
  EXPECT_EQ(NodeAddresses(*node), (std::vector<NodeAddress>{{"InternalIP", "10.0.0.9"}}));
  Json want = *node;
  want.erase("status");
  EXPECT_EQ(*patched, want);
  auto missing = c->PatchWithoutStatus(Nodes(), "", "no-such-node", PatchType::kMerge,
                                       {{"metadata", {{"labels", {{"a", "1"}}}}}});
  EXPECT_TRUE(IsNotFoundError(missing.status())) << missing.status();
}

TEST_F(EmulatorTest, ListPagingAndListAll) {
  auto c = NewClient();
  for (int i = 0; i < 25; ++i)
    ASSERT_TRUE(emu_.Create("nodes", NodeObj(absl::StrCat("n", i))).ok());
  ListOptions lo;
  lo.limit = 10;
  auto page = c->List(Nodes(), "", lo);
  ASSERT_TRUE(page.ok());
  EXPECT_EQ(page->items.size(), 10u);
  EXPECT_FALSE(page->continue_token.empty());
  auto all = c->ListAll(Nodes(), "", lo);
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_EQ(all->items.size(), 25u);
  EXPECT_FALSE(all->resource_version.empty());
  EXPECT_EQ(emu_.RequestCount("list nodes"), 4);  // 1 + 3 pages
  // `each` sees every item as its page arrives (pages read so far: 1, 1, ..., 2, ..., 3) and
  // what it leaves is what is returned.
  std::vector<int> pages_read;
  auto trimmed = c->ListAll(Nodes(), "", lo, [&](Json& node) {
    pages_read.push_back(emu_.RequestCount("list nodes") - 4);
    node = {{"metadata", {{"name", node["metadata"]["name"]}}}};
  });
  ASSERT_TRUE(trimmed.ok()) << trimmed.status();
  ASSERT_EQ(pages_read.size(), 25u);
  EXPECT_EQ(pages_read.front(), 1);
  EXPECT_EQ(pages_read[10], 2);
  EXPECT_EQ(pages_read.back(), 3);
  for (const Json& node : trimmed->items) EXPECT_EQ(node.size(), 1u) << node.dump();
  ListOptions sel;
  sel.field_selector = "metadata.name=n3";
  EXPECT_EQ(c->ListAll(Nodes(), "", sel)->items.size(), 1u);
}

// A watch with a parse rule (the Node cache's) delivers what the rule keeps, from the server's
// order, including after the status's kept fields (where the parse stops).
TEST_F(EmulatorTest, WatchWithAKeepRuleDeliversWhatTheCacheKeeps) {
  auto c = NewClient();
  auto list = c->List(Nodes(), "", {});
  ASSERT_TRUE(list.ok());
  absl::Mutex mu;
  std::vector<Json> seen;
  std::atomic<bool> cancel{false};
  WatchOptions wo;
  wo.resource_version = list->resource_version;
  wo.keep = &NodeCacheRule();
  std::thread t([&] {
    (void)c->Watch(
        Nodes(), "", wo,
        [&](const WatchEvent& ev) {
          absl::MutexLock l(&mu);
          seen.push_back(ev.object);
          return true;
        },
        &cancel);
  });
  Json n = NodeObj("k1");
  n["status"] = {{"capacity", {{"cpu", "4"}}},
                 {"addresses", {{{"type", "InternalIP"}, {"address", "10.0.0.7"}}}},
                 {"conditions", {{{"type", "Ready"}, {"status", "True"}}}},
                 {"nodeInfo", {{"machineID", "m"}, {"systemUUID", "u-7"}, {"bootID", "b"}}},
                 {"images", {{{"names", {"x:1"}}, {"sizeBytes", 1}}}}};
  ASSERT_TRUE(c->Create(Nodes(), "", n).ok());
  {
    absl::MutexLock l(&mu);
    auto one = [&] { return !seen.empty(); };
    ASSERT_TRUE(mu.AwaitWithTimeout(absl::Condition(&one), absl::Seconds(10)));
    const Json& got = seen[0];
    EXPECT_EQ(Name(got), "k1");
    EXPECT_EQ(SystemUuid(got), "u-7");
    EXPECT_EQ(NodeAddresses(got), (std::vector<NodeAddress>{{"InternalIP", "10.0.0.7"}}));
    EXPECT_TRUE(IsNodeReady(got));
    EXPECT_EQ(got["status"].size(), 3u) << got.dump();  // addresses, conditions, nodeInfo
    EXPECT_EQ(got["status"]["nodeInfo"].size(), 1u) << got.dump();
  }
  cancel = true;
  t.join();
}

// A server that sends a good watch event, then a line that is not JSON: the watch ends with an
// error naming it, after delivering the good event, with or without a keep rule.
TEST(WatchMalformedTest, ABrokenLineEndsTheWatchWithAClearError) {
  httplib::Server server;
  server.Get("/api/v1/nodes", [](const httplib::Request&, httplib::Response& res) {
    res.set_content(R"({"type":"ADDED","object":{"kind":"Node","metadata":{"name":"a"},"status":{)"
                    R"("addresses":[],"conditions":[],"nodeInfo":{"systemUUID":"u"},"images":[]}}})"
                    "\n{\"type\":\"MODIFIED\",\"object\":{\"metadata\":{\"name\":\n",
                    "application/json");
  });
  const int port = server.bind_to_any_port("127.0.0.1");
  std::thread serving([&] { server.listen_after_bind(); });  // connections wait in the backlog
  Config cfg;
  cfg.server = absl::StrCat("http://127.0.0.1:", port);
  auto c = RestClient::New(cfg);
  ASSERT_TRUE(c.ok()) << c.status();
  for (const KeepRule* keep : {static_cast<const KeepRule*>(nullptr), &NodeCacheRule()}) {
    WatchOptions wo;
    wo.keep = keep;
    std::vector<std::string> seen;
    absl::Status s = (*c)->Watch(
        Nodes(), "", wo,
        [&](const WatchEvent& ev) {
          seen.push_back(Name(ev.object));
          return true;
        },
        nullptr);
    EXPECT_EQ(seen, std::vector<std::string>{"a"}) << (keep ? "with" : "without") << " a rule";
    EXPECT_EQ(s.code(), absl::StatusCode::kInternal) << s;
    EXPECT_NE(s.message().find("watch /api/v1/nodes: malformed JSON event"), std::string::npos)
        << s;
  }
  server.stop();
  serving.join();
}

TEST_F(EmulatorTest, WatchEventsBookmarksAndCancel) {
  auto c = NewClient();
  auto list = c->List(Nodes(), "", {});
  ASSERT_TRUE(list.ok());
  absl::Mutex mu;
  std::vector<std::string> seen;
  std::atomic<bool> cancel{false};
  WatchOptions wo;
  wo.resource_version = list->resource_version;
  absl::Status result;
  std::thread t([&] {
    result = c->Watch(
        Nodes(), "", wo,
        [&](const WatchEvent& ev) {
          absl::MutexLock l(&mu);
          seen.push_back(absl::StrCat(WatchEventTypeName(ev.type), " ", Name(ev.object)));
          return true;
        },
        &cancel);
  });
  ASSERT_TRUE(c->Create(Nodes(), "", NodeObj("w1")).ok());
  ASSERT_TRUE(
      c->Patch(Nodes(), "", "w1", PatchType::kMerge, {{"metadata", {{"labels", {{"x", "y"}}}}}})
          .ok());
  ASSERT_TRUE(c->Delete(Nodes(), "", "w1").ok());
  {
    absl::MutexLock l(&mu);
    auto three = [&] { return seen.size() >= 3; };
    EXPECT_TRUE(mu.AwaitWithTimeout(absl::Condition(&three), absl::Seconds(10)));
  }
  emu_.SendBookmarks();
  {
    absl::MutexLock l(&mu);
    auto bm = [&] { return seen.size() >= 4; };
    EXPECT_TRUE(mu.AwaitWithTimeout(absl::Condition(&bm), absl::Seconds(10)));
    EXPECT_EQ(seen[0], "ADDED w1");
    EXPECT_EQ(seen[1], "MODIFIED w1");
    EXPECT_EQ(seen[2], "DELETED w1");
    EXPECT_EQ(seen[3].rfind("BOOKMARK", 0), 0u);
  }
  cancel = true;
  t.join();
  EXPECT_EQ(result.code(), absl::StatusCode::kCancelled) << result;

  // Watching from a compacted version: ERROR 410 -> IsGone.
  emu_.CompactHistory();
  absl::Status gone = c->Watch(
      Nodes(), "", wo, [](const WatchEvent&) { return true; }, nullptr);
  EXPECT_TRUE(IsGone(gone)) << gone;
}

// client-go retries a watch request answered 429 (or 503 with Retry-After) after the server's
// Retry-After, like any other request; the caller (an informer) then neither relists nor sees
// an error.
TEST_F(EmulatorTest, WatchAnswered429IsRetriedAfterRetryAfter) {
  FakeClock clock;
  RestClientOptions ro;
  ro.clock = &clock;
  auto c = NewClient({}, 0, ro);
  auto list = c->List(Nodes(), "", {});
  ASSERT_TRUE(list.ok());
  ASSERT_TRUE(c->Create(Nodes(), "", NodeObj("after-429")).ok());
  emu_.InjectError({.code = 429, .count = 2, .method = "watch", .retry_after_seconds = 2});
  WatchOptions wo;
  wo.resource_version = list->resource_version;
  std::atomic<bool> cancel{false};
  std::string seen;
  absl::Status result;
  std::thread t([&] {
    result = c->Watch(
        Nodes(), "", wo,
        [&](const WatchEvent& ev) {
          seen = absl::StrCat(WatchEventTypeName(ev.type), " ", Name(ev.object));
          return false;  // the first event is enough
        },
        &cancel);
  });
  auto watches_reach = [&](int64_t n) {
    return ::ccm::testing::Eventually([&] { return emu_.RequestCount("watch nodes") >= n; },
                                      absl::Seconds(10), absl::Milliseconds(1));
  };
  // First 429: nothing is sent again until the client's clock has moved by the whole 2 s.
  ASSERT_TRUE(watches_reach(1));
  ASSERT_TRUE(clock.WaitForSleepers(1));
  clock.Advance(absl::Milliseconds(1999));
  ASSERT_TRUE(clock.WaitForSleepers(1));
  EXPECT_EQ(emu_.RequestCount("watch nodes"), 1) << "retried before Retry-After";
  clock.Advance(absl::Milliseconds(1));
  // Second 429, then the watch starts and delivers what happened since the list.
  ASSERT_TRUE(watches_reach(2));
  ASSERT_TRUE(clock.WaitForSleepers(1));
  clock.Advance(absl::Seconds(2));
  t.join();
  EXPECT_TRUE(result.ok()) << result;
  EXPECT_EQ(seen, "ADDED after-429");
  EXPECT_EQ(emu_.RequestCount("watch nodes"), 3);

  // A cancel during a Retry-After wait ends the watch without waiting it out.
  emu_.InjectError({.code = 429, .count = -1, .method = "watch", .retry_after_seconds = 30});
  std::thread t2([&] {
    result = c->Watch(
        Nodes(), "", wo, [](const WatchEvent&) { return true; }, &cancel);
  });
  ASSERT_TRUE(clock.WaitForSleepers(1));
  cancel = true;
  clock.Advance(absl::Milliseconds(100));
  t2.join();
  EXPECT_EQ(result.code(), absl::StatusCode::kCancelled) << result;
  emu_.ClearFaults();
}

TEST_F(EmulatorTest, ConflictRetriedByCallerLoop) {
  auto c = NewClient();
  ASSERT_TRUE(c->Create(Nodes(), "", NodeObj("c1")).ok());
  emu_.ForceConflicts("nodes", "", "c1", 2);
  int attempts = 0;
  absl::Status s;
  for (; attempts < 5; ++attempts) {
    auto n = c->Get(Nodes(), "", "c1");
    ASSERT_TRUE(n.ok());
    SetLabel(*n, "done", "yes");
    s = c->Update(Nodes(), *n).status();
    if (!IsConflict(s)) break;
  }
  EXPECT_TRUE(s.ok()) << s;
  EXPECT_EQ(attempts, 2);
  EXPECT_EQ(Label(*c->Get(Nodes(), "", "c1"), "done"), "yes");
}

TEST_F(EmulatorTest, TooManyRequestsHonoursRetryAfter) {
  FakeClock clock;
  RestClientOptions ro;
  ro.clock = &clock;
  ro.max_retries = 2;
  auto c = NewClient({}, 0, ro);
  ::ccm::testing::ErrorFault f;
  f.code = 429;
  f.count = 1;
  f.retry_after_seconds = 3;
  emu_.InjectError(f);
  absl::StatusOr<Json> got;
  std::thread t([&] { got = c->Get(Nodes(), "", "none"); });
  ASSERT_TRUE(clock.WaitForSleepers(1));
  absl::Time before = clock.Now();
  clock.Advance(absl::Seconds(3));
  t.join();
  EXPECT_TRUE(IsNotFoundError(got.status())) << got.status();  // the retry reached the server
  EXPECT_EQ(clock.Now() - before, absl::Seconds(3));
  // Retries are bounded: persistent 429 comes back as TooManyRequests with RetryAfter.
  f.count = -1;
  f.retry_after_seconds = 1;
  emu_.InjectError(f);
  int64_t sent = c->requests_sent();
  std::thread t2([&] { got = c->Get(Nodes(), "", "none"); });
  for (int i = 1; i <= 2; ++i) {
    // Once request i has been sent, the previous sleep is over: a sleeper now is the next one.
    absl::Time deadline = absl::Now() + absl::Seconds(10);
    while (c->requests_sent() < sent + i && absl::Now() < deadline) std::this_thread::yield();
    ASSERT_TRUE(clock.WaitForSleepers(1));
    clock.Advance(absl::Seconds(1));
  }
  t2.join();
  EXPECT_TRUE(IsTooManyRequests(got.status())) << got.status();
  EXPECT_EQ(RetryAfter(got.status()), absl::Seconds(1));
  emu_.ClearFaults();
}

TEST_F(EmulatorTest, ClientSideRateLimitMeasuredWithFakeClock) {
  FakeClock clock;
  std::string path = TempPath("kc-rate");
  ASSERT_TRUE(emu_.WriteKubeconfig(path).ok());
  auto cfg = LoadKubeconfig(path);
  cfg->qps = 2;
  cfg->burst = 3;
  auto c = RestClient::New(*cfg, {&clock});
  ASSERT_TRUE(c.ok());
  std::atomic<int> done{0};
  std::thread t([&] {
    for (int i = 0; i < 7; ++i) {
      (void)(*c)->Get(Nodes(), "", "x");
      done.fetch_add(1);
    }
  });
  // Burst of 3 at once, then one every 500ms.
  auto wait_done = [&](int n) {
    absl::Time deadline = absl::Now() + absl::Seconds(10);
    while (done.load() < n && absl::Now() < deadline) std::this_thread::yield();
    return done.load() == n;
  };
  ASSERT_TRUE(clock.WaitForSleepers(1));
  EXPECT_EQ(done.load(), 3);
  for (int i = 4; i <= 7; ++i) {
    clock.Advance(absl::Milliseconds(499));
    EXPECT_EQ(clock.sleepers(), 1);
    EXPECT_EQ(done.load(), i - 1);
    clock.Advance(absl::Milliseconds(1));
    ASSERT_TRUE(wait_done(i));
    if (i < 7) {
      ASSERT_TRUE(clock.WaitForSleepers(1));
    }
  }
  t.join();
  EXPECT_EQ(done.load(), 7);
}

// client-go's one client per controller: each view has its own qps/burst budget, all share the
// connection pool and the request counter, and each names itself in the User-Agent.
TEST_F(EmulatorTest, ViewsHaveIndependentRateLimitBudgets) {
  FakeClock clock;
  std::string path = TempPath("kc-views");
  ASSERT_TRUE(emu_.WriteKubeconfig(path).ok());
  auto cfg = LoadKubeconfig(path);
  ASSERT_TRUE(cfg.ok());
  cfg->qps = 1;
  cfg->burst = 2;
  auto root = RestClient::New(*cfg, {&clock});
  ASSERT_TRUE(root.ok());
  std::unique_ptr<RestClient> a = (*root)->WithOwnRateLimit("node-controller");
  std::unique_ptr<RestClient> b = (*root)->WithOwnRateLimit("events");
  EXPECT_EQ(a->user_agent(), (*root)->user_agent() + "/node-controller");
  emu_.ResetRequestCounts();

  // `a` spends its burst; its third request waits for a token.
  (void)a->Get(Nodes(), "", "x");
  (void)a->Get(Nodes(), "", "x");
  std::atomic<bool> third_done{false};
  std::thread t([&] {
    (void)a->Get(Nodes(), "", "x");
    third_done = true;
  });
  ASSERT_TRUE(clock.WaitForSleepers(1));
  // `b` and the root still have their whole burst: they send at once while `a` waits.
  (void)b->Get(Nodes(), "", "x");
  (void)b->Get(Nodes(), "", "x");
  (void)(*root)->Get(Nodes(), "", "x");
  EXPECT_FALSE(third_done.load());
  EXPECT_EQ(emu_.RequestCount("get nodes"), 5);
  clock.Advance(absl::Seconds(1));
  t.join();
  EXPECT_TRUE(third_done.load());

  EXPECT_EQ(a->own_requests_sent(), 3);
  EXPECT_EQ(b->own_requests_sent(), 2);
  EXPECT_EQ((*root)->own_requests_sent(), 1);
  EXPECT_EQ((*root)->requests_sent(), 6);  // rest_client_requests_sent counts every view
  EXPECT_EQ(a->requests_sent(), 6);
  std::map<std::string, int> by_agent;
  for (const auto& r : emu_.RequestLog()) ++by_agent[r.user_agent];
  EXPECT_EQ(by_agent[(*root)->user_agent() + "/node-controller"], 3);
  EXPECT_EQ(by_agent[(*root)->user_agent() + "/events"], 2);
  EXPECT_EQ(by_agent[(*root)->user_agent()], 1);

  // A view outlives its root (it holds the shared connection pool and credentials).
  root->reset();
  EXPECT_EQ(b->Get(Nodes(), "", "x").status().code(), absl::StatusCode::kNotFound);
}

// Records handler calls in order.
class Recorder {
 public:
  ResourceEventHandler Handler() {
    return {[this](const Json& o) { Add("add " + Name(o)); },
            [this](const Json& a, const Json& b) {
              Add(absl::StrCat(ResourceVersion(a) == ResourceVersion(b) ? "resync " : "update ",
                               Name(b)));
            },
            [this](const Json& o) { Add("delete " + Name(o)); }};
  }
  bool WaitFor(const std::string& e, int count = 1) {
    absl::MutexLock l(&mu_);
    auto have = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return Count(e) >= count; };
    return mu_.AwaitWithTimeout(absl::Condition(&have), absl::Seconds(15));
  }
  int CountOf(const std::string& e) {
    absl::MutexLock l(&mu_);
    return Count(e);
  }
  std::vector<std::string> events() {
    absl::MutexLock l(&mu_);
    return events_;
  }

 private:
  void Add(std::string e) {
    absl::MutexLock l(&mu_);
    events_.push_back(std::move(e));
  }
  int Count(const std::string& e) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return static_cast<int>(std::count(events_.begin(), events_.end(), e));
  }
  absl::Mutex mu_;
  std::vector<std::string> events_ ABSL_GUARDED_BY(mu_);
};

// A Node with the label color=`color`.
Json ColoredNode(const std::string& name, const std::string& color) {
  Json n = NodeObj(name);
  SetLabel(n, "color", color);
  return n;
}

TEST_F(EmulatorTest, InformerResumesAfterDroppedWatchWithoutMissOrDuplicate) {
  auto c = NewClient();
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(emu_.Create("nodes", NodeObj(absl::StrCat("a", i))).ok());
  FakeClock clock;
  InformerOptions o;
  o.clock = &clock;
  o.page_size = 2;
  Informer inf(*c, Nodes(), o);
  Recorder rec;
  inf.AddEventHandler(rec.Handler());
  inf.Start();
  ASSERT_TRUE(inf.WaitForSync(absl::Seconds(15)));
  EXPECT_EQ(inf.Size(), 5u);
  ASSERT_TRUE(emu_.Create("nodes", NodeObj("b0")).ok());
  ASSERT_TRUE(rec.WaitFor("add b0"));
  // Cut the watch; while the informer backs off, objects change.
  while (emu_.OpenWatches() == 0) std::this_thread::yield();
  EXPECT_EQ(emu_.DropWatches(), 1);
  ASSERT_TRUE(clock.WaitForSleepers(1));
  ASSERT_TRUE(emu_.Create("nodes", NodeObj("b1")).ok());
  ASSERT_TRUE(emu_.Delete("nodes", "", "a0").ok());
  clock.Advance(absl::Minutes(1));
  ASSERT_TRUE(emu_.Create("nodes", NodeObj("b2")).ok());
  ASSERT_TRUE(rec.WaitFor("add b2"));
  ASSERT_TRUE(rec.WaitFor("delete a0"));
  EXPECT_EQ(inf.lists(), 1);  // resumed, not relisted
  EXPECT_GE(inf.watches(), 2);
  for (const char* n : {"a0", "a1", "a4", "b0", "b1", "b2"})
    EXPECT_EQ(rec.CountOf(absl::StrCat("add ", n)), 1) << n;
  EXPECT_EQ(rec.CountOf("delete a0"), 1);
  EXPECT_EQ(inf.Size(), 7u);
  EXPECT_EQ(inf.Get("a0"), nullptr);
  ASSERT_NE(inf.Get("b1"), nullptr);
}

// A watch still answered 429 after the client's own retries (none here): like client-go's
// reflector (isWatchErrorRetriable), the informer backs off and watches again from its
// resourceVersion; it does not relist.
TEST_F(EmulatorTest, InformerRewatchesWithoutRelistAfter429) {
  RestClientOptions ro;
  ro.max_retries = 0;
  auto c = NewClient({}, 0, ro);
  ASSERT_TRUE(emu_.Create("nodes", NodeObj("a")).ok());
  FakeClock clock;
  InformerOptions o;
  o.clock = &clock;
  Informer inf(*c, Nodes(), o);
  Recorder rec;
  inf.AddEventHandler(rec.Handler());
  inf.Start();
  ASSERT_TRUE(inf.WaitForSync(absl::Seconds(15)));
  while (emu_.OpenWatches() == 0) std::this_thread::yield();
  emu_.InjectError({.code = 429, .count = 1, .method = "watch", .retry_after_seconds = 1});
  emu_.DropWatches();
  ASSERT_TRUE(clock.WaitForSleepers(1));  // backoff after the cut
  clock.Advance(absl::Minutes(1));
  const absl::Time deadline = absl::Now() + absl::Seconds(10);
  while (emu_.RequestCount("watch nodes") < 2 && absl::Now() < deadline) {
    std::this_thread::yield();
  }
  ASSERT_EQ(emu_.RequestCount("watch nodes"), 2);  // the one answered 429
  ASSERT_TRUE(clock.WaitForSleepers(1));           // backoff after the 429
  ASSERT_TRUE(emu_.Create("nodes", NodeObj("b")).ok());
  clock.Advance(absl::Minutes(1));
  ASSERT_TRUE(rec.WaitFor("add b"));
  EXPECT_EQ(inf.lists(), 1) << "re-watched, not relisted";
  EXPECT_EQ(emu_.RequestCount("list nodes"), 1);
  EXPECT_EQ(rec.CountOf("update a"), 0);
}

// Fresh(): true once listed, false from a failed watch until the next event; with
// stop_when_forbidden a 403 on the watch ends the informer (no relisting over and over): its
// user reads the API server instead (the CSI operation records without the watch permission).
TEST_F(EmulatorTest, InformerFreshnessAndAForbiddenWatch) {
  auto c = NewClient();
  ASSERT_TRUE(emu_.Create("nodes", NodeObj("a")).ok());
  FakeClock clock;
  InformerOptions o;
  o.clock = &clock;
  o.stop_when_forbidden = true;
  Informer inf(*c, Nodes(), o);
  Recorder rec;
  inf.AddEventHandler(rec.Handler());
  EXPECT_FALSE(inf.Fresh());
  inf.Start();
  ASSERT_TRUE(inf.WaitForSync(absl::Seconds(15)));
  EXPECT_TRUE(inf.Fresh());
  while (emu_.OpenWatches() == 0) std::this_thread::yield();
  emu_.DropWatches();
  ASSERT_TRUE(clock.WaitForSleepers(1));  // backoff after the cut
  EXPECT_FALSE(inf.Fresh()) << "the watch failed: the store may lag";
  // Until an event comes through a watch again (the backoff of any further cut passed too).
  int created = 0;
  const absl::Time deadline = absl::Now() + absl::Seconds(20);
  while (!inf.Fresh() && absl::Now() < deadline) {
    if (clock.sleepers() > 0) clock.Advance(absl::Minutes(1));
    if (created == 0 || rec.CountOf(absl::StrCat("add b", created - 1)) == 1) {
      ASSERT_TRUE(emu_.Create("nodes", NodeObj(absl::StrCat("b", created++))).ok());
    }
    std::this_thread::yield();
  }
  ASSERT_TRUE(inf.Fresh()) << "an event came from the resumed watch";
  EXPECT_FALSE(inf.Forbidden());
  emu_.InjectError({.code = 403, .count = -1, .method = "watch"});
  emu_.DropWatches();
  while (!inf.Forbidden() && absl::Now() < deadline) {
    if (clock.sleepers() > 0) clock.Advance(absl::Minutes(1));
    std::this_thread::yield();
  }
  ASSERT_TRUE(inf.Forbidden());
  EXPECT_FALSE(inf.Fresh());
  EXPECT_EQ(inf.lists(), 1) << "a forbidden watch ends the informer, it does not relist";
  EXPECT_EQ(emu_.RequestCount("list nodes"), 1);
  ASSERT_NE(inf.Get("b0"), nullptr) << "what it had stays readable";
}

TEST_F(EmulatorTest, InformerRelistsAfterGone) {
  auto c = NewClient();
  ASSERT_TRUE(emu_.Create("nodes", NodeObj("keep")).ok());
  ASSERT_TRUE(emu_.Create("nodes", NodeObj("gone")).ok());
  FakeClock clock;
  InformerOptions o;
  o.clock = &clock;
  Informer inf(*c, Nodes(), o);
  Recorder rec;
  inf.AddEventHandler(rec.Handler());
  inf.Start();
  ASSERT_TRUE(inf.WaitForSync(absl::Seconds(15)));
  while (emu_.OpenWatches() == 0) std::this_thread::yield();
  emu_.DropWatches();
  ASSERT_TRUE(clock.WaitForSleepers(1));
  ASSERT_TRUE(emu_.Delete("nodes", "", "gone").ok());
  ASSERT_TRUE(emu_.Create("nodes", NodeObj("new")).ok());
  emu_.CompactHistory();  // the informer's resourceVersion is now too old
  clock.Advance(absl::Minutes(1));
  ASSERT_TRUE(rec.WaitFor("add new"));
  ASSERT_TRUE(rec.WaitFor("delete gone"));
  EXPECT_EQ(inf.lists(), 2);
  EXPECT_EQ(rec.CountOf("update keep") + rec.CountOf("resync keep"), 1);  // Replace semantics
  EXPECT_EQ(inf.Size(), 2u);
}

// With a transform and the compact (CBOR) store, handlers, Get and List see the transformed
// objects, update/delete handlers get the right previous states, and a relist after 410 Gone
// still replaces the store like client-go.
TEST_F(EmulatorTest, InformerCompactStoreWithTransform) {
  auto c = NewClient();
  auto node = [](const std::string& name, const std::string& color) {
    Json n = ColoredNode(name, color);
    n["status"] = {{"images", Json::array({{{"names", {"busybox"}}}})},
                   {"addresses", Json::array({{{"type", "InternalIP"}, {"address", "10.0.0.1"}}})}};
    return n;
  };
  ASSERT_TRUE(emu_.Create("nodes", node("a", "red")).ok());
  ASSERT_TRUE(emu_.Create("nodes", node("gone", "red")).ok());
  FakeClock clock;
  InformerOptions o;
  o.clock = &clock;
  o.transform = TrimNodeForCache;
  o.compact_store = true;
  Informer inf(*c, Nodes(), o);
  absl::Mutex mu;
  std::vector<std::string> seen;  // "kind name old-color new-color images?"
  auto images = [](const Json& n) {
    return n.contains("status") && n["status"].contains("images");
  };
  auto record = [&](std::string e) {
    absl::MutexLock l(&mu);
    seen.push_back(std::move(e));
  };
  inf.AddEventHandler(
      {[&](const Json& n) { record(absl::StrCat("add ", Name(n), images(n) ? " images" : "")); },
       [&](const Json& a, const Json& b) {
         record(absl::StrCat("update ", Name(b), " ", Label(a, "color").value_or(""), "->",
                             Label(b, "color").value_or("")));
       },
       [&](const Json& n) {
         record(absl::StrCat("delete ", Name(n), " ", Label(n, "color").value_or("")));
       }});
  inf.Start();
  ASSERT_TRUE(inf.WaitForSync(absl::Seconds(15)));
  auto wait_for = [&](const std::string& e) {
    absl::MutexLock l(&mu);
    auto have = [&] { return std::count(seen.begin(), seen.end(), e) > 0; };
    return mu.AwaitWithTimeout(absl::Condition(&have), absl::Seconds(15));
  };
  ASSERT_TRUE(wait_for("add a"));  // no " images": trimmed before the handlers
  ASSERT_TRUE(emu_.Put("nodes", node("a", "blue")).ok());
  ASSERT_TRUE(wait_for("update a red->blue"));
  ObjectPtr a = inf.Get("a");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(Label(*a, "color"), "blue");
  EXPECT_FALSE(images(*a));
  EXPECT_EQ(NodeAddresses(*a).size(), 1u);
  EXPECT_EQ(ResourceVersion(*a), ResourceVersion(*emu_.Get("nodes", "", "a")));
  EXPECT_EQ(*a, *inf.Get("a"));  // decoded again, same content

  // Relist after 410: "gone" disappears (delete with its last state), "a" gets update.
  while (emu_.OpenWatches() == 0) std::this_thread::yield();
  emu_.DropWatches();
  ASSERT_TRUE(clock.WaitForSleepers(1));
  ASSERT_TRUE(emu_.Delete("nodes", "", "gone").ok());
  ASSERT_TRUE(emu_.Put("nodes", node("a", "green")).ok());
  emu_.CompactHistory();
  clock.Advance(absl::Minutes(1));
  ASSERT_TRUE(wait_for("delete gone red"));
  ASSERT_TRUE(wait_for("update a blue->green"));
  EXPECT_EQ(inf.lists(), 2);
  ASSERT_EQ(inf.List().size(), 1u);
  EXPECT_EQ(Label(*inf.List()[0], "color"), "green");
  EXPECT_EQ(inf.Keys(), std::vector<std::string>{"a"});
}

// The compact store keeps the last `hot_objects` watched objects decoded (Get hands out the same
// object, no decode) and the others packed (a fresh decode each time); an object leaving the hot
// queue and coming back keeps its content, and update handlers get the right old state.
TEST_F(EmulatorTest, InformerCompactStoreKeepsTheLastWatchedDecoded) {
  auto c = NewClient();
  InformerOptions o;
  o.compact_store = true;
  o.hot_objects = 2;
  Informer inf(*c, Nodes(), o);
  Recorder rec;
  inf.AddEventHandler(rec.Handler());
  inf.Start();
  ASSERT_TRUE(inf.WaitForSync(absl::Seconds(15)));
  for (int i = 0; i < 4; ++i) {
    ASSERT_TRUE(emu_.Create("nodes", ColoredNode(absl::StrCat("n", i), "red")).ok());
    ASSERT_TRUE(rec.WaitFor(absl::StrCat("add n", i)));
  }
  auto hot = [&](const std::string& key) { return inf.Get(key) == inf.Get(key); };
  EXPECT_TRUE(hot("n3"));
  EXPECT_TRUE(hot("n2"));
  EXPECT_FALSE(hot("n1"));
  EXPECT_FALSE(hot("n0"));
  ASSERT_NE(inf.Get("n0"), nullptr);
  EXPECT_EQ(Label(*inf.Get("n0"), "color"), "red");
  // n0 comes back: decoded again, its old state from the packed copy.
  Json blue = *emu_.Get("nodes", "", "n0");
  SetLabel(blue, "color", "blue");
  ASSERT_TRUE(emu_.Put("nodes", blue).ok());
  ASSERT_TRUE(rec.WaitFor("update n0"));
  EXPECT_TRUE(hot("n0"));
  EXPECT_EQ(Label(*inf.Get("n0"), "color"), "blue");
  EXPECT_FALSE(hot("n2"));  // the oldest of the hot ones left
  EXPECT_EQ(Label(*inf.Get("n2"), "color"), "red");
  EXPECT_EQ(inf.Size(), 4u);
}

// A selection follows the store through adds, updates, deletes and a relist after 410 Gone (it
// is updated with the store, under its lock, before the handlers run), and one added to a synced
// informer starts from what is stored.
TEST_F(EmulatorTest, InformerSelectionFollowsTheStore) {
  auto c = NewClient();
  ASSERT_TRUE(emu_.Create("nodes", ColoredNode("a", "red")).ok());
  ASSERT_TRUE(emu_.Create("nodes", ColoredNode("b", "blue")).ok());
  FakeClock clock;
  InformerOptions o;
  o.clock = &clock;
  o.compact_store = true;
  Informer inf(*c, Nodes(), o);
  auto red = [](const Json& n) { return Label(n, "color") == "red"; };
  const Informer::SelectionId early = inf.AddSelection(red);
  Recorder rec;  // handlers run once the store and its selections have the change
  inf.AddEventHandler(rec.Handler());
  inf.Start();
  ASSERT_TRUE(inf.WaitForSync(absl::Seconds(15)));
  using Keys = std::vector<std::string>;
  EXPECT_EQ(inf.Selected(early), Keys{"a"});
  const Informer::SelectionId late = inf.AddSelection(red);
  EXPECT_EQ(inf.Selected(late), Keys{"a"});
  auto selected = [&](Keys want) {
    return inf.Selected(early) == want && inf.Selected(late) == want;
  };
  ASSERT_TRUE(emu_.Put("nodes", ColoredNode("b", "red")).ok());
  ASSERT_TRUE(rec.WaitFor("update b"));
  EXPECT_TRUE(selected({"a", "b"}));
  ASSERT_TRUE(emu_.Create("nodes", ColoredNode("c", "red")).ok());
  ASSERT_TRUE(rec.WaitFor("add c"));
  EXPECT_TRUE(selected({"a", "b", "c"}));
  ASSERT_TRUE(emu_.Put("nodes", ColoredNode("a", "green")).ok());
  ASSERT_TRUE(rec.WaitFor("update a"));
  EXPECT_TRUE(selected({"b", "c"}));
  ASSERT_TRUE(emu_.Delete("nodes", "", "c").ok());
  ASSERT_TRUE(rec.WaitFor("delete c"));
  EXPECT_TRUE(selected({"b"}));
  // Relist after 410: changes missed by the watch come in with the new list.
  while (emu_.OpenWatches() == 0) std::this_thread::yield();
  emu_.DropWatches();
  ASSERT_TRUE(clock.WaitForSleepers(1));
  ASSERT_TRUE(emu_.Put("nodes", ColoredNode("a", "red")).ok());
  ASSERT_TRUE(emu_.Delete("nodes", "", "b").ok());
  emu_.CompactHistory();
  clock.Advance(absl::Minutes(1));
  ASSERT_TRUE(rec.WaitFor("delete b"));
  EXPECT_TRUE(selected({"a"}));
  EXPECT_EQ(inf.lists(), 2);
  inf.RemoveSelection(late);
  EXPECT_EQ(inf.Selected(late), Keys{});
  EXPECT_EQ(inf.Selected(early), Keys{"a"});
}

TEST_F(EmulatorTest, InformerResyncSelectorsAndFactory) {
  auto c = NewClient();
  Json labelled = NodeObj("l1");
  SetLabel(labelled, "role", "cp");
  ASSERT_TRUE(emu_.Create("nodes", labelled).ok());
  ASSERT_TRUE(emu_.Create("nodes", NodeObj("u1")).ok());
  FakeClock clock;
  InformerOptions o;
  o.clock = &clock;
  o.resync_period = absl::Minutes(5);
  SharedInformerFactory factory(*c, o);
  Informer& a = factory.For(Nodes(), "", "role=cp");
  Informer& b = factory.For(Nodes(), "", "role=cp");
  EXPECT_EQ(&a, &b);
  Recorder rec;
  a.AddEventHandler(rec.Handler());
  factory.Start();
  ASSERT_TRUE(factory.WaitForSync(absl::Seconds(15)));
  EXPECT_EQ(a.Size(), 1u);
  ASSERT_NE(a.Get("l1"), nullptr);
  // Late handlers get the cache as adds.
  Recorder late;
  a.AddEventHandler(late.Handler());
  EXPECT_EQ(late.CountOf("add l1"), 1);
  ASSERT_TRUE(clock.WaitForSleepers(1));  // the resync thread
  clock.Advance(absl::Minutes(5));
  ASSERT_TRUE(rec.WaitFor("resync l1"));
  ASSERT_TRUE(late.WaitFor("resync l1"));
  EXPECT_EQ(rec.CountOf("add u1"), 0);
  factory.Stop();
}

}  // namespace
}  // namespace ccm::kube
