#include "common/logging.h"

#include <regex>
#include <sstream>

#include "common/secret.h"
#include "gtest/gtest.h"
#include "spdlog/sinks/ostream_sink.h"

namespace ccm {
namespace {

TEST(LoggingTest, KlogFormatAndVerbosity) {
  std::ostringstream out;
  logging::SetSink(std::make_shared<spdlog::sinks::ostream_sink_mt>(out));
  logging::SetVerbosity(2);
  LOG_INFO("hello {}", 42);
  VLOG(2, "shown at v2");
  VLOG(3, "hidden at v2");
  LOG_WARN("careful");
  const std::string text = out.str();
  // I1121 19:08:00.123456    1234 logging_test.cc:17] hello 42
  EXPECT_TRUE(std::regex_search(
      text, std::regex(R"(^I\d{4} \d\d:\d\d:\d\d\.\d{6} +\d+ logging_test\.cc:\d+\] hello 42\n)")))
      << text;
  EXPECT_NE(text.find("shown at v2"), std::string::npos);
  EXPECT_EQ(text.find("hidden at v2"), std::string::npos);
  EXPECT_TRUE(std::regex_search(text, std::regex(R"(\nW\d{4} .*\] careful\n)"))) << text;
}

TEST(SecretTest, NeverPrintsValue) {
  std::ostringstream os;
  os << Secret("hunter2") << " " << Secret();
  EXPECT_EQ(os.str(), "<redacted> <empty>");
  EXPECT_EQ(Secret("hunter2").reveal(), "hunter2");
}

}  // namespace
}  // namespace ccm
