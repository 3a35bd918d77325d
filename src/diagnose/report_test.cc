#include "diagnose/report.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "nlohmann/json.hpp"

namespace ccm::diagnose::report_test {
namespace {

using ::testing::HasSubstr;

TEST(ReportTest, TextIsAlignedWithTheFixUnderneath) {
  Report r;
  r.Ok("config", "read /etc/vsphere.conf: 1 vCenter");
  r.Warn("config vc1", "certificate NOT checked", "set ca-file");
  r.Error("vcenter vc1", "login failed", "check the user and password");
  EXPECT_EQ(r.Text(),
            "ok      config       read /etc/vsphere.conf: 1 vCenter\n"
            "warning config vc1   certificate NOT checked\n"
            "                     fix: set ca-file\n"
            "error   vcenter vc1  login failed\n"
            "                     fix: check the user and password\n"
            "1 errors, 1 warnings\n");
  EXPECT_TRUE(r.HasErrors());
}

TEST(ReportTest, JsonForTools) {
  Report r;
  r.Ok("config", "fine");
  r.Warn("config vc1", "insecure", "set ca-file");
  const nlohmann::json j = nlohmann::json::parse(r.Json());
  EXPECT_EQ(j["errors"], 0);
  EXPECT_EQ(j["warnings"], 1);
  ASSERT_EQ(j["findings"].size(), 2u);
  EXPECT_EQ(j["findings"][0],
            (nlohmann::json{{"check", "config"}, {"level", "ok"}, {"message", "fine"}}));
  EXPECT_EQ(j["findings"][1]["fix"], "set ca-file");
  EXPECT_FALSE(r.HasErrors());
  EXPECT_THAT(Report().Text(), HasSubstr("0 errors, 0 warnings"));
}

}  // namespace
}  // namespace ccm::diagnose::report_test
