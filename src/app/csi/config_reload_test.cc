#include "app/csi/config_reload.h"

#include <cstdlib>
#include <fstream>

#include "absl/strings/str_join.h"
#include "app/csi/config.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ccm::app {
namespace {

using Action = ConfigChange::Action;
using ::testing::HasSubstr;

constexpr char kBase[] = R"([Global]
cluster-id = "c1"
user = "u"
password = "p"
[VirtualCenter "vc1"]
datacenters = "dc1"
[VirtualCenter "vc2"]
datacenters = "dc2"
[Labels]
topology-categories = "k8s-zone"
)";

cloud::Config Parse(const std::string& text) {
  auto r = ParseCsiConfigBytes(text, "csi-vsphere.conf", {});
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? r->config : cloud::Config{};
}

std::string With(const std::string& from, const std::string& to) {
  std::string s = kBase;
  const size_t at = s.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return s.replace(at, from.size(), to);
}

TEST(ClassifyCsiConfigChangeTest, PasswordsLiveEverythingElseRestarts) {
  struct Case {
    std::string name, text;
    Action want;
    std::string reason;  // in changed (live) or restart_reasons (restart)
  };
  const std::vector<Case> cases = {
      {"same file", kBase, Action::kNone, ""},
      {"comment only", std::string("# rotated\n") + kBase, Action::kNone, ""},
      {"global password (every vCenter)", With("password = \"p\"", "password = \"q\""),
       Action::kApplyLive, "vCenter \"vc2\": password changed"},
      {"one vCenter's password",
       With("datacenters = \"dc1\"", "datacenters = \"dc1\"\npassword = \"q\""), Action::kApplyLive,
       "vCenter \"vc1\": password changed"},
      {"user", With("user = \"u\"", "user = \"v\""), Action::kRestart,
       "vCenter \"vc1\": user (CNS records it as each volume's owner) changed"},
      {"vCenter added", With("[Labels]", "[VirtualCenter \"vc3\"]\n[Labels]"), Action::kRestart,
       "vCenter added: vc3"},
      {"vCenter removed", With("[VirtualCenter \"vc2\"]\ndatacenters = \"dc2\"\n", ""),
       Action::kRestart, "vCenter removed: vc2"},
      {"thumbprint", With("datacenters = \"dc1\"", "datacenters = \"dc1\"\nthumbprint = \"AA\""),
       Action::kRestart, "vCenter \"vc1\": thumbprint changed"},
      {"datacenters", With("\"dc2\"", "\"dc3\""), Action::kRestart,
       "vCenter \"vc2\": datacenters changed"},
      {"cluster-id", With("\"c1\"", "\"c2\""), Action::kRestart, "[Global] changed"},
      {"labels", With("\"k8s-zone\"", "\"k8s-zone,k8s-rack\""), Action::kRestart,
       "[Labels] changed"},
      {"password and port", With("password = \"p\"", "password = \"q\"\nport = \"444\""),
       Action::kRestart, "port changed"},
  };
  const cloud::Config base = Parse(kBase);
  for (const Case& c : cases) {
    ConfigChange got = ClassifyCsiConfigChange(base, Parse(c.text));
    EXPECT_EQ(got.action, c.want) << c.name;
    const std::string joined =
        absl::StrJoin(c.want == Action::kRestart ? got.restart_reasons : got.changed, "; ");
    if (c.reason.empty()) {
      EXPECT_TRUE(got.changed.empty()) << c.name << ": " << joined;
    } else {
      EXPECT_THAT(joined, HasSubstr(c.reason)) << c.name;
    }
    EXPECT_THAT(absl::StrJoin(got.changed, ";"), ::testing::Not(HasSubstr("\"q\""))) << c.name;
  }
}

class CsiConfigWatchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/csi_config_watch_test.XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    path_ = dir_ + "/csi-vsphere.conf";
    Write(kBase);
    running_ = Parse(kBase);
    store_ = std::make_unique<cloud::CredentialStore>(running_, nullptr);
    ASSERT_TRUE(store_->Start().ok());
  }
  void TearDown() override { (void)std::system(("rm -rf " + dir_).c_str()); }
  void Write(const std::string& text) {
    std::ofstream(path_, std::ios::binary | std::ios::trunc) << text;
  }
  std::unique_ptr<CsiConfigWatch> Watch() {
    return std::make_unique<CsiConfigWatch>(
        CsiConfigWatch::Options{path_, {}, absl::ZeroDuration()}, running_, store_.get(), &stop_);
  }
  std::string dir_, path_;
  cloud::Config running_;
  std::unique_ptr<cloud::CredentialStore> store_;
  absl::Notification stop_;
};

TEST_F(CsiConfigWatchTest, RotatesPasswordKeepsRunning) {
  auto watch = Watch();
  EXPECT_EQ(watch->CheckNow().kind, ConfigCheck::Kind::kNoEffect);  // first look: same config
  const uint64_t generation = store_->generation();
  Write(With("password = \"p\"", "password = \"rotated\""));
  EXPECT_EQ(watch->CheckNow().kind, ConfigCheck::Kind::kApplyLive);
  EXPECT_GT(store_->generation(), generation);
  EXPECT_TRUE(store_->Get("vc1")->password == Secret("rotated"));
  EXPECT_FALSE(stop_.HasBeenNotified());
  EXPECT_FALSE(watch->restart_needed());
}

TEST_F(CsiConfigWatchTest, BrokenFileKeepsTheRunningConfig) {
  auto watch = Watch();
  Write("[Global]\nport = \"not-a-number\"\n");
  ConfigCheck bad = watch->CheckNow();
  EXPECT_EQ(bad.kind, ConfigCheck::Kind::kInvalid);
  EXPECT_THAT(bad.message, HasSubstr(path_));
  EXPECT_THAT(bad.message, HasSubstr("keeping the running one"));
  EXPECT_FALSE(stop_.HasBeenNotified());
  EXPECT_TRUE(store_->Get("vc1")->password == Secret("p"));
  // Fixed later: compared with the running config, the new password applies.
  Write(With("password = \"p\"", "password = \"fixed\""));
  EXPECT_EQ(watch->CheckNow().kind, ConfigCheck::Kind::kApplyLive);
  EXPECT_TRUE(store_->Get("vc2")->password == Secret("fixed"));
}

TEST_F(CsiConfigWatchTest, AddedVCenterStopsForARestart) {
  auto watch = Watch();
  Write(With("[Labels]", "[VirtualCenter \"vc3\"]\n[Labels]"));
  ConfigCheck c = watch->CheckNow();
  EXPECT_EQ(c.kind, ConfigCheck::Kind::kRestart);
  EXPECT_THAT(c.message, HasSubstr("vCenter added: vc3"));
  EXPECT_TRUE(stop_.HasBeenNotified());
  EXPECT_TRUE(watch->restart_needed());
}

}  // namespace
}  // namespace ccm::app
