#include "app/shared/flag_parser.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ccm::app {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

struct Flags {
  bool on = false;
  std::string name;
  int count = 0;
  absl::Duration every = absl::Seconds(1);
};

absl::Status Parse(Flags& f, std::vector<std::string> args, std::vector<std::string>* warnings) {
  FlagParser p;
  p.Bool("on", &f.on);
  p.String("name", &f.name);
  p.Int("count", &f.count, 1);
  p.Duration("every", &f.every);
  p.Ignore({"profiling", "log-dir"});
  args.insert(args.begin(), "prog");
  return p.Parse(args, warnings);
}

TEST(FlagParserTest, AcceptsTheGoForms) {
  struct Case {
    std::vector<std::string> args;
    bool on;
    std::string name;
    int count;
  };
  const Case cases[] = {
      {{"--on", "--name=a", "--count", "3"}, true, "a", 3},
      {{"-on=false", "-name", "b", "-count=2"}, false, "b", 2},
      {{"--on=t", "--", "--name=ignored"}, true, "", 0},
      {{"--on=0"}, false, "", 0},
  };
  for (const Case& c : cases) {
    Flags f;
    std::vector<std::string> warnings;
    ASSERT_TRUE(Parse(f, c.args, &warnings).ok()) << c.args[0];
    EXPECT_EQ(f.on, c.on) << c.args[0];
    EXPECT_EQ(f.name, c.name) << c.args[0];
    EXPECT_EQ(f.count, c.count) << c.args[0];
    EXPECT_TRUE(warnings.empty()) << c.args[0];
  }
}

TEST(FlagParserTest, UnknownAndIgnoredFlagsAreWarningsWithTheirValuesSkipped) {
  Flags f;
  std::vector<std::string> warnings;
  ASSERT_TRUE(
      Parse(f, {"--bogus", "x", "--profiling", "--log-dir", "/tmp", "--name=n", "stray"}, &warnings)
          .ok());
  EXPECT_EQ(f.name, "n");
  EXPECT_THAT(warnings, ElementsAre("unknown flag --bogus ignored",
                                    HasSubstr("--profiling is accepted for compatibility"),
                                    HasSubstr("--log-dir is accepted for compatibility"),
                                    "unexpected argument \"stray\" ignored"));
}

TEST(FlagParserTest, BadValuesNameTheFlagAndTheExpectedForm) {
  struct Case {
    std::vector<std::string> args;
    std::string error;
  };
  const Case cases[] = {
      {{"--on=maybe"}, "invalid value \"maybe\" for flag --on: expected true or false"},
      {{"--count=0"}, "invalid value \"0\" for flag --count: expected an integer >= 1"},
      {{"--every=soon"}, "for flag --every: expected a duration such as 15s"},
      {{"--every=-1s"}, "for flag --every: expected a duration"},
      {{"--name"}, "flag needs an argument: --name"},
  };
  for (const Case& c : cases) {
    Flags f;
    std::vector<std::string> warnings;
    absl::Status s = Parse(f, c.args, &warnings);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << c.args[0];
    EXPECT_THAT(std::string(s.message()), HasSubstr(c.error));
  }
}

}  // namespace
}  // namespace ccm::app
