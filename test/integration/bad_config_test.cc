// The real binary with a bad cloud config or bad flags: it exits quickly and non-zero, naming the
// problem on stderr (flags: exit code 2 and the usage text). No fixture is needed: the config is
// read before anything connects.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "integration/harness.h"

namespace ccm::integration {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

struct Case {
  std::string name;
  std::string config;  // written to vsphere.conf; "<missing>" = no file
  std::vector<std::string> flags;
  int want_code;  // -1: any non-zero
  std::vector<std::string> want_stderr;
};

class BadConfigTest : public ::testing::TestWithParam<Case> {};

TEST_P(BadConfigTest, ExitsNonZeroNamingTheProblem) {
  const Case& c = GetParam();
  const std::string dir = MakeTempDir("badconfig");
  const std::string conf = dir + "/vsphere.conf";
  if (c.config != "<missing>") WriteFile(conf, c.config);
  std::vector<std::string> argv = {CcmBinary(), "--cloud-provider=vsphere",
                                   "--cloud-config=" + conf,
                                   "--kubeconfig=" + dir + "/no-kubeconfig", "--secure-port=0"};
  argv.insert(argv.end(), c.flags.begin(), c.flags.end());
  auto p = ChildProcess::Start(argv, dir + "/ccm");
  ASSERT_TRUE(p.ok()) << p.status();
  const absl::Time t0 = absl::Now();
  std::optional<int> code = (*p)->WaitExit(absl::Seconds(5));
  ASSERT_TRUE(code.has_value()) << "still running after 5 s";
  EXPECT_LT(absl::Now() - t0, absl::Seconds(2));
  const std::string err = (*p)->Stderr();
  if (c.want_code >= 0) {
    EXPECT_EQ(*code, c.want_code) << err;
  } else {
    EXPECT_NE(*code, 0) << err;
  }
  for (const auto& w : c.want_stderr)
    EXPECT_TRUE(absl::StrContains(err, w)) << "want \"" << w << "\" in:\n" << err;
  RemoveTempDir(dir);
}

const char kGood[] = "global:\n  user: u\n  password: p\nvcenter:\n  vc1:\n    server: 127.0.0.1\n";

INSTANTIATE_TEST_SUITE_P(
    Cases, BadConfigTest,
    ::testing::Values(
        Case{"unknown_key_strict",
             absl::StrCat(kGood, "    insecure-flag: true\n"),
             {"--strict-config"},
             1,
             {"invalid cloud config", "insecure-flag"}},
        Case{"unparsable_yaml", "global:\n  user: [unclosed\n", {}, 1, {"invalid cloud config"}},
        Case{"no_vcenter", "global:\n  user: u\n  password: p\n", {}, 1, {"invalid cloud config"}},
        Case{"missing_file", "<missing>", {}, 1, {"vsphere.conf", "cannot open"}},
        Case{"bad_duration_flag",
             kGood,
             {"--leader-elect-lease-duration=soon"},
             2,
             {"--leader-elect-lease-duration", "Usage:"}},
        Case{"bad_int_flag", kGood, {"--secure-port=abc"}, 2, {"--secure-port", "Usage:"}},
        Case{"wrong_provider", kGood, {"--cloud-provider=aws"}, 2, {"aws", "Usage:"}},
        Case{"bad_bool_flag", kGood, {"--leader-elect=maybe"}, 2, {"--leader-elect", "Usage:"}}),
    [](const ::testing::TestParamInfo<Case>& i) { return i.param.name; });

TEST(FlagsTest, VersionAndHelpExitZero) {
  const std::string dir = MakeTempDir("flags");
  for (const char* flag : {"--version", "--help"}) {
    auto p = ChildProcess::Start({CcmBinary(), flag}, dir + "/out");
    ASSERT_TRUE(p.ok()) << p.status();
    EXPECT_EQ((*p)->WaitExit(absl::Seconds(5)), 0) << flag;
    EXPECT_TRUE(absl::StrContains((*p)->Stdout(), "vsphere-cloud-controller-manager")) << flag;
  }
  RemoveTempDir(dir);
}

// `diagnose` (read-only, no fixture needed for the config checks): ok config lines for a healthy
// config, 1 naming the line of a broken one, JSON on request, 2 for a bad --output.
TEST(DiagnoseTest, ConfigChecksAndExitCodes) {
  const std::string dir = MakeTempDir("diagnose");
  const std::string good = dir + "/good.conf", bad = dir + "/bad.conf";
  WriteFile(good, absl::StrCat(kGood, "    caFile: /etc/ssl/vc.pem\n"));
  WriteFile(bad, "global:\n  port: eighty\n");
  auto run = [&](std::vector<std::string> flags) {
    flags.insert(flags.begin(), {CcmBinary(), "diagnose"});
    auto p = ChildProcess::Start(flags, dir + "/out");
    EXPECT_TRUE(p.ok()) << p.status();
    std::optional<int> code = (*p)->WaitExit(absl::Seconds(5));
    return std::make_pair(code.value_or(-1), (*p)->Stdout() + (*p)->Stderr());
  };
  // The config's own lines are ok; nothing answers on 127.0.0.1:443 (the vCenter lines, tested
  // with the simulator in diagnose_test.cc).
  auto [ok_code, ok_out] = run({"--cloud-config=" + good});
  EXPECT_EQ(ok_code, 1) << ok_out;
  EXPECT_THAT(ok_out, HasSubstr("ok      config vc1"));
  EXPECT_THAT(ok_out, Not(HasSubstr("error   config")));
  EXPECT_THAT(ok_out, HasSubstr("no TCP connection to 127.0.0.1:443"));
  auto [bad_code, bad_out] = run({"--cloud-config=" + bad, "--output", "json"});
  EXPECT_EQ(bad_code, 1) << bad_out;
  EXPECT_TRUE(absl::StrContains(bad_out, "\"level\": \"error\"")) << bad_out;
  EXPECT_TRUE(absl::StrContains(bad_out, "bad.conf")) << bad_out;
  EXPECT_EQ(run({"--cloud-config=" + good, "--output=xml"}).first, 2);
  RemoveTempDir(dir);
}

}  // namespace
}  // namespace ccm::integration
