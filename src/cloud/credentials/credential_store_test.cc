#include "cloud/credentials/credential_store.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/logging.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "spdlog/sinks/ostream_sink.h"
#include "testing/fake_secret_watcher.h"

namespace ccm::cloud {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

Config MustParse(const std::string& text) {
  auto r = ParseConfig(text, {});
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? r->config : Config{};
}

TEST(CredentialStoreTest, InlineCredentials) {
  Config cfg = MustParse("[Global]\nuser = u\npassword = p\n[VirtualCenter \"vc\"]\n");
  CredentialStore store(cfg, nullptr);
  ASSERT_TRUE(store.Start().ok());
  auto c = store.Get("vc");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->username, "u");
  EXPECT_EQ(store.Get("other").status().code(), absl::StatusCode::kNotFound);
}

TEST(CredentialStoreTest, SetInlineRotatesOnlyChangedInlineCredentials) {
  Config cfg =
      MustParse("[Global]\nuser = u\npassword = p\n[VirtualCenter \"a\"]\n[VirtualCenter \"b\"]\n");
  CredentialStore store(cfg, nullptr);
  ASSERT_TRUE(store.Start().ok());
  int calls = 0;
  const int handle = store.Subscribe([&] { ++calls; });
  const uint64_t before = store.generation();

  // Same file again: nothing changes, nobody is woken.
  EXPECT_TRUE(store.SetInline(cfg).empty());
  EXPECT_EQ(store.generation(), before);

  Config rotated = MustParse(
      "[Global]\nuser = u\npassword = p\n[VirtualCenter \"a\"]\npassword = new\n"
      "[VirtualCenter \"b\"]\n");
  EXPECT_THAT(store.SetInline(rotated), ::testing::ElementsAre("a"));
  EXPECT_EQ(store.generation(), before + 1);
  EXPECT_EQ(calls, 1);
  ASSERT_TRUE(store.Get("a").ok());
  EXPECT_TRUE(store.Get("a")->password == Secret("new"));
  EXPECT_TRUE(store.Get("b")->password == Secret("p"));
  // A vCenter the store does not route is ignored (adding one needs a restart).
  Config added = MustParse(
      "[Global]\nuser = u\npassword = p\n[VirtualCenter \"a\"]\npassword = new\n"
      "[VirtualCenter \"b\"]\n[VirtualCenter \"c\"]\n");
  EXPECT_TRUE(store.SetInline(added).empty());
  EXPECT_EQ(store.Get("c").status().code(), absl::StatusCode::kNotFound);
  store.Unsubscribe(handle);
}

TEST(CredentialStoreTest, PrecedenceAndRotationThroughSecrets) {
  Config cfg = MustParse(
      "[Global]\nsecret-name = g\nsecret-namespace = kube-system\n"
      "[VirtualCenter \"a\"]\n[VirtualCenter \"b\"]\nsecret-name = own\nsecret-namespace = ns\n"
      "user = ignored\npassword = ignored\n");
  FakeSecretWatcher watcher;
  watcher.Set(
      "kube-system", "g",
      {{"a.username", "ga"}, {"a.password", "gpa"}, {"b.username", "gb"}, {"b.password", "gpb"}});
  CredentialStore store(cfg, &watcher);
  ASSERT_TRUE(store.Start().ok());
  int calls = 0;  // the subscriber sees every change, with the new generation already visible
  uint64_t seen_generation = 0;
  const int handle = store.Subscribe([&] {
    ++calls;
    seen_generation = store.generation();
  });
  EXPECT_EQ(store.Get("a")->username, "ga");
  // b has its own Secret, which does not exist yet: unavailable, never empty credentials.
  EXPECT_EQ(store.Get("b").status().code(), absl::StatusCode::kUnavailable);
  uint64_t gen = store.generation();
  watcher.Set("ns", "own", {{"b.username", "own-b"}, {"b.password", "pw1"}});
  EXPECT_EQ(store.Get("b")->username, "own-b");  // per-VC Secret wins over the global one
  EXPECT_GT(store.generation(), gen);
  gen = store.generation();
  watcher.Set("ns", "own", {{"b.username", "own-b"}, {"b.password", "pw2"}});  // rotation
  EXPECT_EQ(store.Get("b")->password.reveal(), "pw2");
  EXPECT_EQ(store.generation(), gen + 1);
  watcher.Set("ns", "own", {{"b.username", "own-b"}, {"b.password", "pw2"}});  // no change
  EXPECT_EQ(store.generation(), gen + 1);
  watcher.Set("ns", "own", {{"bogus", "x"}});  // invalid: keep the last good
  EXPECT_EQ(store.Get("b")->password.reveal(), "pw2");
  watcher.Delete("ns", "own");  // deleted: keep the last good
  EXPECT_EQ(store.Get("b")->password.reveal(), "pw2");
  EXPECT_EQ(store.generation(), gen + 1);
  EXPECT_EQ(calls, 2);  // the new Secret and the rotation; no call for the rest
  EXPECT_EQ(seen_generation, gen + 1);
  store.Unsubscribe(handle);
  watcher.Set("ns", "own", {{"b.username", "own-b"}, {"b.password", "pw3"}});
  EXPECT_EQ(calls, 2);
}

class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/ccm-cred-XXXXXX";
    path_ = mkdtemp(tmpl);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  void Write(const std::string& name, const std::string& value) const {
    std::string tmp = path_ + "/.tmp-" + name;
    { std::ofstream(tmp) << value; }
    std::filesystem::rename(tmp, path_ + "/" + name);  // atomic, like a volume update
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

TEST(CredentialStoreTest, SecretsDirectoryChangePickedUp) {
  TempDir dir;
  dir.Write("vc.username", "u\n");
  dir.Write("vc.password", "p1\n");
  Config cfg =
      MustParse("[Global]\nsecrets-directory = " + dir.path() + "\n[VirtualCenter \"vc\"]\n");
  CredentialStore store(cfg, nullptr);
  ASSERT_TRUE(store.Start().ok());
  ASSERT_TRUE(store.Get("vc").ok()) << store.Get("vc").status();
  EXPECT_EQ(store.Get("vc")->password.reveal(), "p1");
  uint64_t gen = store.generation();
  dir.Write("vc.password", "p2\n");
  ASSERT_TRUE(store.WaitForGeneration(gen + 1, absl::Seconds(20)));
  EXPECT_EQ(store.Get("vc")->password.reveal(), "p2");
  store.Stop();
}

TEST(CredentialStoreTest, NoSecretValueInAnyLogLine) {
  std::ostringstream logs;
  logging::SetSink(std::make_shared<spdlog::sinks::ostream_sink_mt>(logs));
  const std::string secret = "Sup3r-S3cret";
  Config cfg =
      MustParse("[Global]\nsecret-name = s\nsecret-namespace = ns\n[VirtualCenter \"vc\"]\n");
  FakeSecretWatcher watcher;
  CredentialStore store(cfg, &watcher);
  ASSERT_TRUE(store.Start().ok());
  watcher.Set("ns", "s", {{"vc.username", "u"}, {"vc.password", secret}});
  watcher.Set("ns", "s", {{"vc.username", "u"}, {"vc.password", secret + "2"}});
  watcher.Set("ns", "s", {{"vc.username", "u"}, {"bogus-key", secret}});  // invalid key
  watcher.Set("ns", "s", {{"vc.username", secret}});                      // incomplete
  watcher.Delete("ns", "s");
  EXPECT_EQ(store.Get("vc")->password.reveal(), secret + "2");
  std::string text = logs.str();
  EXPECT_THAT(text, HasSubstr("was deleted; keeping the last known credentials"));
  EXPECT_THAT(text, HasSubstr("updated"));
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    EXPECT_THAT(line, Not(HasSubstr("Sup3r"))) << line;
  }
  logging::SetSink(std::make_shared<spdlog::sinks::ostream_sink_mt>(std::cerr));
}

}  // namespace
}  // namespace ccm::cloud
