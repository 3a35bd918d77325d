#include "app/shared/config_reloader.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "testing/fake_clock.h"

namespace ccm::app {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using Action = ConfigChange::Action;
using Kind = ConfigCheck::Kind;

const char kBase[] = R"([Global]
user = u
password = p
port = 443

[VirtualCenter "10.0.0.1"]
datacenters = dc1

[Labels]
zone = k8s-zone
region = k8s-region

[Nodes]
internal-network-subnet-cidr = 10.0.0.0/8
)";

cloud::Config Parse(const std::string& text) {
  auto r = cloud::ParseConfig(text, {});
  EXPECT_TRUE(r.ok()) << r.status() << "\n" << text;
  return r.ok() ? r->config : cloud::Config{};
}

std::string Replace(std::string s, const std::string& from, const std::string& to) {
  size_t at = s.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) s.replace(at, from.size(), to);
  return s;
}

TEST(ClassifyConfigChangeTest, Table) {
  struct Case {
    std::string name;
    std::string new_config;
    Action want;
    std::string want_reason;  // substring of the joined restart reasons (kRestart) or changes
  } cases[] = {
      {"Identical", kBase, Action::kNone, ""},
      {"CommentOnly", absl::StrCat("; a comment\n", kBase), Action::kNone, ""},
      {"NodesSubnet", Replace(kBase, "10.0.0.0/8", "192.168.0.0/16"), Action::kApplyLive,
       "[Nodes] changed"},
      {"ZoneCategory", Replace(kBase, "zone = k8s-zone", "zone = other"), Action::kApplyLive,
       "[Labels] zone category changed"},
      {"RegionCategory", Replace(kBase, "region = k8s-region", "region = other"),
       Action::kApplyLive, "[Labels] region category changed"},
      {"IpFamily", Replace(kBase, "port = 443\n", "port = 443\nip-family = ipv4,ipv6\n"),
       Action::kApplyLive, "vCenter \"10.0.0.1\": ip-family changed"},
      {"Datacenters", Replace(kBase, "datacenters = dc1", "datacenters = dc1,dc2"),
       Action::kApplyLive, "datacenters changed"},
      {"VCenterAdded", absl::StrCat(kBase, "\n[VirtualCenter \"10.0.0.2\"]\n"), Action::kRestart,
       "the set of vCenters changed (added: 10.0.0.2)"},
      {"VCenterReplaced", Replace(kBase, "10.0.0.1", "10.0.0.3"), Action::kRestart,
       "(added: 10.0.0.3) (removed: 10.0.0.1)"},
      {"Port", Replace(kBase, "port = 443", "port = 8443"), Action::kRestart,
       "vCenter \"10.0.0.1\": port changed"},
      {"Insecure", Replace(kBase, "port = 443", "port = 443\ninsecure-flag = true"),
       Action::kRestart, "insecure-flag changed (TLS settings)"},
      {"Thumbprint",
       Replace(
           kBase, "port = 443",
           "port = 443\nthumbprint = AA:BB:CC:DD:EE:FF:00:11:22:33:44:55:66:77:88:99:AA:BB:CC:DD"),
       Action::kRestart, "thumbprint changed"},
      {"Password", Replace(kBase, "password = p", "password = q"), Action::kRestart,
       "password changed (credentials are routed once at start-up)"},
      {"SecretName",
       Replace(kBase, "port = 443", "port = 443\nsecret-name = s\nsecret-namespace = kube-system"),
       Action::kRestart, "secret-name changed"},
      // A restart reason wins over live changes in the same edit.
      {"LiveAndRestart",
       Replace(Replace(kBase, "10.0.0.0/8", "192.168.0.0/16"), "port = 443", "port = 8443"),
       Action::kRestart, "port changed"},
  };
  const cloud::Config base = Parse(kBase);
  for (const Case& c : cases) {
    ConfigChange got = ClassifyConfigChange(base, Parse(c.new_config));
    EXPECT_EQ(got.action, c.want) << c.name;
    const auto& list = c.want == Action::kRestart ? got.restart_reasons : got.changed;
    if (c.want_reason.empty()) {
      EXPECT_TRUE(got.changed.empty()) << c.name << ": " << got.changed.front();
    } else {
      std::string joined;
      for (const auto& s : list) absl::StrAppend(&joined, s, "; ");
      EXPECT_THAT(joined, HasSubstr(c.want_reason)) << c.name;
    }
    if (c.want != Action::kRestart) {
      EXPECT_TRUE(got.restart_reasons.empty()) << c.name;
    }
    // Never a credential value in a message.
    for (const auto& s : got.changed) EXPECT_THAT(s, ::testing::Not(HasSubstr("= q"))) << c.name;
  }
}

class ConfigReloaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/config_reloader_test.XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    path_ = dir_ + "/vsphere.conf";
    Write(path_, kBase);
  }
  void TearDown() override { (void)std::system(("rm -rf " + dir_).c_str()); }
  static void Write(const std::string& path, const std::string& text) {
    std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
  }
  ConfigReloader::Options Opts() {
    ConfigReloader::Options o;
    o.path = path_;
    o.clock = &clock_;
    o.period = absl::Seconds(10);
    return o;
  }
  std::string dir_, path_;
  FakeClock clock_;
};

TEST_F(ConfigReloaderTest, InvalidKeepsRunningThenLiveThenRestart) {
  ConfigReloader r(Opts(), Parse(kBase));
  EXPECT_EQ(r.Check().kind, Kind::kNoEffect);  // first look: same config as at start-up
  EXPECT_EQ(r.Check().kind, Kind::kUnchanged);

  Write(path_, "[Global]\nuser = [broken\n");
  ConfigCheck bad = r.Check();
  EXPECT_EQ(bad.kind, Kind::kInvalid);
  EXPECT_THAT(bad.message, HasSubstr("keeping the running one"));
  EXPECT_EQ(r.Check().kind, Kind::kUnchanged);  // reported once

  // Fixed with a live change: compared with the running config, not with the broken file.
  Write(path_, Replace(kBase, "10.0.0.0/8", "192.168.0.0/16"));
  ConfigCheck live = r.Check();
  ASSERT_EQ(live.kind, Kind::kApplyLive) << live.message;
  ASSERT_TRUE(live.config.has_value());
  EXPECT_EQ(live.config->nodes.internal_network_subnet_cidrs.at(0).ToString(), "192.168.0.0/16");
  EXPECT_THAT(live.change.changed, ElementsAre("[Nodes] changed"));

  // Back to the original bytes: a live change again (the running config moved on).
  Write(path_, kBase);
  EXPECT_EQ(r.Check().kind, Kind::kApplyLive);

  Write(path_, Replace(kBase, "port = 443", "port = 8443"));
  ConfigCheck restart = r.Check();
  EXPECT_EQ(restart.kind, Kind::kRestart);
  EXPECT_THAT(restart.message, HasSubstr("vCenter \"10.0.0.1\": port changed"));
}

TEST_F(ConfigReloaderTest, StrictModeWarningsAreInvalid) {
  ConfigReloader::Options o = Opts();
  o.strict = true;
  ConfigReloader r(o, Parse(kBase));
  Write(path_, Replace(kBase, "[Nodes]", "[Nodes]\nno-such-key = 1"));
  EXPECT_EQ(r.Check().kind, Kind::kInvalid);
}

// A ConfigMap volume: vsphere.conf -> ..data/vsphere.conf, ..data -> ..<timestamp>; an update
// writes a new timestamped directory and renames a new ..data link over the old one.
TEST_F(ConfigReloaderTest, ConfigMapSymlinkSwapAndMissingFile) {
  const std::string v1 = dir_ + "/..v1", v2 = dir_ + "/..v2";
  ASSERT_EQ(std::system(("mkdir " + v1 + " " + v2).c_str()), 0);
  Write(v1 + "/vsphere.conf", kBase);
  Write(v2 + "/vsphere.conf", Replace(kBase, "zone = k8s-zone", "zone = other"));
  ASSERT_EQ(unlink(path_.c_str()), 0);
  ASSERT_EQ(symlink("..v1", (dir_ + "/..data").c_str()), 0);
  ASSERT_EQ(symlink("..data/vsphere.conf", path_.c_str()), 0);

  ConfigReloader r(Opts(), Parse(kBase));
  EXPECT_EQ(r.Check().kind, Kind::kNoEffect);
  ASSERT_EQ(symlink("..v2", (dir_ + "/..data_tmp").c_str()), 0);
  ASSERT_EQ(rename((dir_ + "/..data_tmp").c_str(), (dir_ + "/..data").c_str()), 0);
  ConfigCheck swapped = r.Check();
  ASSERT_EQ(swapped.kind, Kind::kApplyLive) << swapped.message;
  EXPECT_EQ(swapped.config->labels.zone, "other");

  ASSERT_EQ(unlink((dir_ + "/..data").c_str()), 0);  // the link is gone for a moment
  EXPECT_EQ(r.Check().kind, Kind::kUnreadable);
  EXPECT_EQ(r.Check().kind, Kind::kUnchanged);  // reported once
  ASSERT_EQ(symlink("..v2", (dir_ + "/..data").c_str()), 0);
  EXPECT_EQ(r.Check().kind, Kind::kNoEffect);  // back, same config as running
}

// The watch thread checks once at start and then once per period of the injected clock.
TEST_F(ConfigReloaderTest, ThreadChecksEveryPeriodOnTheInjectedClock) {
  ConfigReloader r(Opts(), Parse(kBase));
  absl::Mutex mu;
  std::vector<ConfigCheck::Kind> seen;
  r.Start([&](const ConfigCheck& c) {
    absl::MutexLock l(&mu);
    seen.push_back(c.kind);
  });
  ASSERT_TRUE(clock_.WaitForSleepers(1));
  {
    absl::MutexLock l(&mu);
    EXPECT_THAT(seen, ElementsAre(Kind::kNoEffect));
  }
  Write(path_, Replace(kBase, "port = 443", "port = 8443"));
  clock_.Advance(absl::Seconds(10));
  auto two = [&] { return seen.size() == 2; };
  {
    absl::MutexLock l(&mu);
    EXPECT_TRUE(mu.AwaitWithTimeout(absl::Condition(&two), absl::Seconds(10)));
    EXPECT_THAT(seen, ElementsAre(Kind::kNoEffect, Kind::kRestart));
  }
  r.Stop();
}

}  // namespace
}  // namespace ccm::app
