#include "csi/webhook/webhook_config.h"

#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace ccm::csi {
namespace {

absl::string_view Unquote(absl::string_view v) {
  v = absl::StripAsciiWhitespace(v);
  if (v.size() >= 2 && v.front() == '"' && v.back() == '"') v = v.substr(1, v.size() - 2);
  return v;
}

}  // namespace

absl::StatusOr<WebhookConfig> ParseWebhookConfig(absl::string_view text, absl::string_view file) {
  WebhookConfig c;
  bool in_section = false, seen_section = false;
  int n = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++n;
    auto bad = [&](absl::string_view why) {
      return absl::InvalidArgumentError(absl::StrCat(file, ":", n, ": ", why));
    };
    line = absl::StripAsciiWhitespace(line);
    if (line.empty() || line[0] == '#' || line[0] == ';') continue;
    if (line.front() == '[') {
      if (line.back() != ']') return bad("a section header must end with ]");
      in_section = absl::EqualsIgnoreCase(line, "[WebHookConfig]");
      seen_section |= in_section;
      continue;
    }
    if (!in_section) continue;  // another section: not the webhook's
    std::vector<absl::string_view> kv = absl::StrSplit(line, absl::MaxSplits('=', 1));
    if (kv.size() != 2) return bad("want key = \"value\"");
    const std::string key = absl::AsciiStrToLower(absl::StripAsciiWhitespace(kv[0]));
    const absl::string_view value = Unquote(kv[1]);
    if (key == "port") {
      if (!absl::SimpleAtoi(value, &c.port) || c.port <= 0 || c.port > 65535) {
        return bad(absl::StrCat("port \"", value, "\" is not a port number"));
      }
    } else if (key == "cert-file") {
      c.cert_file = std::string(value);
    } else if (key == "key-file") {
      c.key_file = std::string(value);
    } else if (key != "ca-file") {  // client certificate verification: not used
      return bad(absl::StrCat("unknown key \"", key, "\" (port, cert-file, key-file)"));
    }
  }
  if (!seen_section) {
    return absl::InvalidArgumentError(absl::StrCat(file, ": no [WebHookConfig] section"));
  }
  if (c.cert_file.empty() || c.key_file.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(file, ": [WebHookConfig] needs cert-file and key-file"));
  }
  return c;
}

}  // namespace ccm::csi
