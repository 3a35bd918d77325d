#pragma once
// The webhook's configuration file (WEBHOOK_CONFIG_PATH, default /etc/webhook/webhook.config), as
// the reference reads it:
//   [WebHookConfig]
//   port = "8443"
//   cert-file = "/run/secrets/tls/tls.crt"
//   key-file = "/run/secrets/tls/tls.key"
// Errors name the file and line. Pure.

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ccm::csi {

struct WebhookConfig {
  int port = 8443;
  std::string cert_file;
  std::string key_file;
};

absl::StatusOr<WebhookConfig> ParseWebhookConfig(absl::string_view text, absl::string_view file);

}  // namespace ccm::csi
