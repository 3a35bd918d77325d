#include "csi/webhook/webhook_config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace ccm::csi::webhook_config_test {
namespace {

using ::testing::HasSubstr;

TEST(WebhookConfigTest, ReadsTheReferencesFile) {
  absl::StatusOr<WebhookConfig> c = ParseWebhookConfig(
      "[WebHookConfig]\nport = \"9443\"\ncert-file = \"/run/secrets/tls/tls.crt\"\n"
      "key-file = \"/run/secrets/tls/tls.key\"\n",
      "webhook.config");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->port, 9443);
  EXPECT_EQ(c->cert_file, "/run/secrets/tls/tls.crt");
  EXPECT_EQ(c->key_file, "/run/secrets/tls/tls.key");
  absl::StatusOr<WebhookConfig> d =
      ParseWebhookConfig("# comment\n[WebHookConfig]\ncert-file=a\nkey-file=b\n", "f");
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->port, 8443);
}

TEST(WebhookConfigTest, SaysWhatIsWrong) {
  struct Case {
    const char* text;
    const char* error;
  };
  const Case cases[] = {
      {"", "f: no [WebHookConfig] section"},
      {"[WebHookConfig]\nport = \"x\"\n", "f:2: port \"x\" is not a port number"},
      {"[WebHookConfig]\nport = \"70000\"\n", "f:2: port \"70000\""},
      {"[WebHookConfig]\nprot = \"1\"\n", "f:2: unknown key \"prot\""},
      {"[WebHookConfig]\njust a line\n", "f:2: want key = \"value\""},
      {"[WebHookConfig\n", "f:1: a section header must end with ]"},
      {"[WebHookConfig]\ncert-file = a\n", "needs cert-file and key-file"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<WebhookConfig> r = ParseWebhookConfig(c.text, "f");
    ASSERT_FALSE(r.ok()) << c.text;
    EXPECT_THAT(r.status().message(), HasSubstr(c.error)) << c.text;
  }
}

}  // namespace
}  // namespace ccm::csi::webhook_config_test
