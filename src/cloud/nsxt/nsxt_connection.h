#pragma once
// One NSX-T manager connection per controller set, from vsphere.conf's [NSXT] section: the
// Policy API client with the section's TLS and authentication, and, with secret-name /
// secret-namespace, the user and password of that Secret (keys `username` and `password`, as
// the Go provider reads them), followed while it changes. A deleted Secret keeps the last
// credentials (with a warning), as for vCenter credentials.

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "cloud/config/config.h"
#include "cloud/credentials/credential_store.h"
#include "nsxt/policy_client.h"

namespace ccm::cloud {

// The client options of a [NSXT] section (host, user, password, remote-auth, VMC token and auth
// host, insecure-flag, ca-file, client certificate and key).
nsxt::PolicyClientOptions PolicyClientOptionsFor(const NsxtConfig& config);

class NsxtConnection {
 public:
  // `secrets` may be null when the section names no Secret; it must outlive this object.
  // InvalidArgument when the section's authentication is incomplete (the message names what).
  static absl::StatusOr<std::unique_ptr<NsxtConnection>> Open(const NsxtConfig& config,
                                                              SecretWatcher* secrets);
  ~NsxtConnection();

  nsxt::PolicyClient& client() { return *client_; }

 private:
  NsxtConnection() = default;
  void Apply(const SecretData& data);

  std::unique_ptr<nsxt::PolicyClient> client_;
  SecretWatcher* secrets_ = nullptr;
  int subscription_ = -1;
  std::string secret_ns_, secret_name_;
};

}  // namespace ccm::cloud
