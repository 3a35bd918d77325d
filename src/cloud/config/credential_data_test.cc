#include "cloud/config/credential_data.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/logging.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "spdlog/sinks/ostream_sink.h"

namespace ccm::cloud {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(ParseCredentialDataTest, KeyFormats) {
  struct Case {
    const char* name;
    SecretData data;
    const char* server;
    const char* user;
    const char* password;
    const char* error;  // substring, or nullptr
  } cases[] = {
      {"dotted",
       {{"10.0.0.1.username", "u\n"}, {"10.0.0.1.password", "p\n"}},
       "10.0.0.1",
       "u",
       "p",
       nullptr},
      {"ipv6 alt",
       {{"server_a", "fd00::1"}, {"username_a", "u"}, {"password_a", "p"}},
       "fd00::1",
       "u",
       "p",
       nullptr},
      {"unknown key", {{"foo", "secretvalue"}}, "", "", "", "unknown key \"foo\""},
      {"no user for alt",
       {{"server_a", "x"}, {"password_a", "p"}},
       "",
       "",
       "",
       "key \"username_a\" is missing"},
      {"user without server",
       {{"username_b", "u"}},
       "",
       "",
       "",
       "key \"username_b\" has no matching \"server_b\" key"},
      {"server without suffix", {{"server_", "x"}}, "", "", "", "no identifier suffix"},
      {"password only",
       {{"vc.password", "p"}},
       "",
       "",
       "",
       "username or password is missing or empty for server \"vc\""},
      {"empty", {}, "", "", "", "no credentials in it"},
      {"session manager keys accepted",
       {{"vc.username", "u"}, {"vc.password", "p"}, {"vc.vc-session-manager-url", "x"}},
       "vc",
       "u",
       "p",
       nullptr},
  };
  for (const auto& c : cases) {
    auto r = ParseCredentialData(c.data, "Secret ns/n");
    if (c.error != nullptr) {
      ASSERT_FALSE(r.ok()) << c.name;
      EXPECT_THAT(std::string(r.status().message()), HasSubstr(c.error)) << c.name;
      EXPECT_THAT(std::string(r.status().message()), Not(HasSubstr("secretvalue")));
      continue;
    }
    ASSERT_TRUE(r.ok()) << c.name << r.status();
    ASSERT_EQ(r->count(c.server), 1u) << c.name;
    EXPECT_EQ(r->at(c.server).username, c.user);
    EXPECT_EQ(r->at(c.server).password.reveal(), c.password);
  }
}

}  // namespace
}  // namespace ccm::cloud
