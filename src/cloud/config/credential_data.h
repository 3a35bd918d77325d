#pragma once
// vCenter credentials as Secrets and secrets-directory hold them (pure parsing; the Secret and
// directory watching is in cloud/credentials/credential_store.h).
//
// Secret keys: `<server>.username` / `<server>.password`, or for IPv6 addresses
// `server_<id>` / `username_<id>` / `password_<id>`. A trailing newline is trimmed. Unknown or
// incomplete keys are an error naming the key. (`<server>.vc-session-manager-url/-token` are
// accepted and ignored, as this provider does not use a session manager.)

#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "vsphere/credential_source.h"

namespace ccm::cloud {

using SecretData = std::map<std::string, std::string>;              // key -> value (bytes)
using CredentialMap = std::map<std::string, vsphere::Credentials>;  // server -> credentials

// Parses Secret (or secrets-directory) data. `source` names it in errors ("Secret ns/name").
absl::StatusOr<CredentialMap> ParseCredentialData(const SecretData& data, absl::string_view source);

}  // namespace ccm::cloud
