#include "cloud/nsxt/nsxt_connection.h"

#include "absl/strings/str_cat.h"
#include "common/logging.h"

namespace ccm::cloud {

nsxt::PolicyClientOptions PolicyClientOptionsFor(const NsxtConfig& c) {
  nsxt::PolicyClientOptions o;
  o.host = c.host;
  o.user = c.user;
  o.password = c.password;
  o.remote_auth = c.remote_auth;
  o.vmc_access_token = c.vmc_access_token;
  o.vmc_auth_host = c.vmc_auth_host;
  o.tls.insecure = c.insecure_flag;
  o.tls.ca_file = c.ca_file;
  o.tls.client_cert_file = c.client_auth_cert_file;
  o.tls.client_key_file = c.client_auth_key_file;
  return o;
}

absl::StatusOr<std::unique_ptr<NsxtConnection>> NsxtConnection::Open(const NsxtConfig& config,
                                                                     SecretWatcher* secrets) {
  nsxt::PolicyClientOptions o = PolicyClientOptionsFor(config);
  const bool from_secret = !config.secret_name.empty();
  if (from_secret && o.user.empty()) {
    o.user = "(from Secret " + config.secret_namespace + "/" + config.secret_name + ")";
    o.password = Secret("-");  // replaced below before anything is sent
  }
  if (std::string bad = nsxt::CheckAuth(o); !bad.empty()) return absl::InvalidArgumentError(bad);
  std::unique_ptr<NsxtConnection> c(new NsxtConnection());
  c->client_ = std::make_unique<nsxt::PolicyClient>(o);
  if (!from_secret) return c;
  if (secrets == nullptr)
    return absl::FailedPreconditionError("[NSXT] secret-name is set but no Secret is watched");
  c->secrets_ = secrets;
  c->secret_ns_ = config.secret_namespace;
  c->secret_name_ = config.secret_name;
  NsxtConnection* self = c.get();
  c->subscription_ = secrets->Subscribe([self](const std::string& ns, const std::string& name,
                                               const std::optional<SecretData>& data) {
    if (ns != self->secret_ns_ || name != self->secret_name_) return;
    if (!data) {
      LOG_WARN("NSX-T Secret {}/{} was deleted; keeping the last credentials", ns, name);
      return;
    }
    self->Apply(*data);
  });
  auto data = secrets->Get(config.secret_namespace, config.secret_name);
  if (data.ok()) {
    c->Apply(*data);
  } else {
    LOG_WARN("NSX-T Secret {}/{}: {} (NSX-T calls fail until it exists)", config.secret_namespace,
             config.secret_name, data.status().message());
  }
  return c;
}

void NsxtConnection::Apply(const SecretData& data) {
  auto user = data.find("username");
  auto password = data.find("password");
  if (user == data.end() || password == data.end() || user->second.empty() ||
      password->second.empty()) {
    LOG_WARN("NSX-T Secret {}/{}: keys username and password are both required", secret_ns_,
             secret_name_);
    return;
  }
  client_->SetCredentials(user->second, Secret(password->second));
  VLOG(2, "NSX-T credentials from Secret {}/{} applied", secret_ns_, secret_name_);
}

NsxtConnection::~NsxtConnection() {
  if (secrets_ != nullptr && subscription_ >= 0) secrets_->Unsubscribe(subscription_);
}

}  // namespace ccm::cloud
