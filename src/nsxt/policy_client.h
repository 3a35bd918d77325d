#pragma once
// A client of NSX-T Manager's Policy API (REST/JSON under https://<host>/policy/api/v1), on
// common's HttpClient (libcurl), one per manager, as the Go provider's connector:
//   - authentication as the Go provider's: HTTP basic with user/password on every request
//     ("Remote" instead of "Basic" with remote_auth, for LDAP/vIDM users), or a VMC API token
//     exchanged once at the auth host (POST https://<vmc_auth_host>, refresh_token=...) for an
//     access token sent as `csp-auth-token` (exchanged again after a 401/403), or a client
//     certificate only. Credentials can change while running (SetCredentials, from a Secret).
//   - paths are policy paths ("/infra/tier-1s/t1/static-routes/r1"); lists and searches follow
//     the `cursor` to the last page.
//   - errors carry NSX-T's answer: "NSX-T PATCH /infra/...: <error_message> (error_code N,
//     HTTP S)". 404 -> NotFound, 400 -> InvalidArgument, 401/403 -> Unauthenticated (the
//     message names the manager and the user), 409 -> AlreadyExists, 412 -> FailedPrecondition
//     (the object's _revision moved), 429/502/503/504 and transport failures -> Unavailable,
//     other 5xx -> Internal. Nothing is retried here except Update()'s 412.
// Thread-safe.

#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "common/http_client.h"
#include "common/secret.h"

namespace ccm::nsxt {

using Json = nlohmann::json;

struct PolicyClientOptions {
  std::string host;  // host[:port], as [NSXT] host
  std::string user;
  Secret password;
  bool remote_auth = false;
  Secret vmc_access_token;
  std::string vmc_auth_host;  // host and path of the token exchange
  TlsOptions tls;
  absl::Duration timeout = absl::Seconds(60);
  std::string user_agent = "vsphere-cloud-controller-manager";
  int page_size = 1000;
};

// The checks of the Go provider's connector, before anything is sent ("" = fine): a host, and
// user and password, or a VMC token with its auth host, or a client certificate with its key.
std::string CheckAuth(const PolicyClientOptions& o);

class PolicyClient {
 public:
  explicit PolicyClient(PolicyClientOptions options);
  ~PolicyClient();
  PolicyClient(const PolicyClient&) = delete;
  PolicyClient& operator=(const PolicyClient&) = delete;

  absl::StatusOr<Json> Get(const std::string& path);
  // Every object of a collection ("/infra/tier-1s/t1/static-routes"), all pages.
  absl::StatusOr<std::vector<Json>> List(const std::string& collection);
  // GET /search/query?query=..., all pages.
  absl::StatusOr<std::vector<Json>> Search(const std::string& query);
  // The realized entities of an intent path.
  absl::StatusOr<std::vector<Json>> Realized(const std::string& intent_path);
  absl::Status Patch(const std::string& path, const Json& body);
  absl::StatusOr<Json> Put(const std::string& path, const Json& body);
  // Reads the object, lets `change` edit it, PUTs it with the _revision read; on 412 (someone
  // else wrote it meanwhile) reads and edits again, at most `attempts` times.
  absl::StatusOr<Json> Update(const std::string& path, const std::function<void(Json&)>& change,
                              int attempts = 5);
  absl::Status Delete(const std::string& path);

  void SetCredentials(const std::string& user, const Secret& password);
  // Bounds every request from now on, for a process that stops (HttpClient::SetDeadline).
  void SetDeadline(absl::Time deadline) { http_.SetDeadline(deadline); }
  const std::string& host() const { return options_.host; }
  int64_t requests() const;

 private:
  absl::StatusOr<Json> Call(const std::string& method, const std::string& path_and_query,
                            const Json* body);
  absl::StatusOr<Json> Send(const std::string& method, const std::string& path_and_query,
                            const Json* body, bool* refused);
  absl::StatusOr<std::vector<Json>> AllPages(const std::string& path_and_query);
  absl::Status AuthHeaders(std::vector<Header>& headers);
  absl::Status ExchangeToken();
  absl::Status ErrorOf(const std::string& method, const std::string& path,
                       const HttpResponse& r) const;

  PolicyClientOptions options_;
  HttpClient http_;
  mutable absl::Mutex mu_;
  std::string user_ ABSL_GUARDED_BY(mu_);
  Secret password_ ABSL_GUARDED_BY(mu_);
  Secret access_token_ ABSL_GUARDED_BY(mu_);  // from the VMC exchange
  int64_t requests_ ABSL_GUARDED_BY(mu_) = 0;
};

// Lucene escaping for a search value: '/' and the query syntax's special characters.
std::string EscapeQueryValue(const std::string& v);

}  // namespace ccm::nsxt
