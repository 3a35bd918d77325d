#include "cloud/config/credential_data.h"

#include <optional>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace ccm::cloud {
namespace {

constexpr absl::string_view kServerPrefix = "server_";
constexpr absl::string_view kUserPrefix = "username_";
constexpr absl::string_view kPasswordPrefix = "password_";

std::string Trim(const std::string& v) {
  return absl::EndsWith(v, "\n") ? v.substr(0, v.size() - 1) : v;
}

absl::Status Bad(absl::string_view source, absl::string_view msg) {
  return absl::InvalidArgumentError(absl::StrCat(source, ": ", msg));
}

}  // namespace

absl::StatusOr<CredentialMap> ParseCredentialData(const SecretData& data,
                                                  absl::string_view source) {
  if (data.empty()) return Bad(source, "no credentials in it");
  struct Partial {
    std::optional<std::string> user, password;
  };
  std::map<std::string, Partial> by_server;
  std::set<std::string> ids;
  for (const auto& [key, value] : data) {
    std::string v = Trim(value);
    if (absl::EndsWith(key, ".username")) {
      by_server[key.substr(0, key.size() - 9)].user = v;
    } else if (absl::EndsWith(key, ".password")) {
      by_server[key.substr(0, key.size() - 9)].password = v;
    } else if (absl::EndsWith(key, ".vc-session-manager-url") ||
               absl::EndsWith(key, ".vc-session-manager-token")) {
      // Known to the reference; not used here.
    } else if (absl::StartsWith(key, kServerPrefix)) {
      std::string id = key.substr(kServerPrefix.size());
      if (id.empty()) return Bad(source, "key \"server_\" has no identifier suffix");
      ids.insert(id);
    } else if (absl::StartsWith(key, kUserPrefix) || absl::StartsWith(key, kPasswordPrefix)) {
      std::string id = key.substr(absl::StartsWith(key, kUserPrefix) ? kUserPrefix.size()
                                                                     : kPasswordPrefix.size());
      if (id.empty())
        return Bad(source, absl::StrCat("key \"", key, "\" has no identifier suffix"));
      if (data.count(absl::StrCat(kServerPrefix, id)) == 0) {
        return Bad(source, absl::StrCat("key \"", key, "\" has no matching \"", kServerPrefix, id,
                                        "\" key"));
      }
    } else {
      return Bad(source, absl::StrCat("unknown key \"", key,
                                      "\" (expected <server>.username, "
                                      "<server>.password, server_<id>, username_<id>, "
                                      "password_<id>)"));
    }
  }
  for (const std::string& id : ids) {
    std::string server = Trim(data.at(absl::StrCat(kServerPrefix, id)));
    auto u = data.find(absl::StrCat(kUserPrefix, id));
    auto p = data.find(absl::StrCat(kPasswordPrefix, id));
    if (u == data.end())
      return Bad(source, absl::StrCat("key \"", kUserPrefix, id, "\" is missing"));
    if (p == data.end()) {
      return Bad(source, absl::StrCat("key \"", kPasswordPrefix, id, "\" is missing"));
    }
    by_server[server].user = Trim(u->second);
    by_server[server].password = Trim(p->second);
  }
  CredentialMap out;
  for (const auto& [server, part] : by_server) {
    if (!part.user || part.user->empty() || !part.password || part.password->empty()) {
      return Bad(source, absl::StrCat("username or password is missing or empty for server \"",
                                      server, "\""));
    }
    out[server] = vsphere::Credentials{*part.user, Secret(*part.password)};
  }
  return out;
}

}  // namespace ccm::cloud
