#pragma once
// The SOAP transport to vCenter's CNS endpoint (/vsanHealth), authenticated from the vim25
// session of a vsphere::Client.
//
// vCenter accepts a vim25 session cookie on /vsanHealth (govmomi's CNS client copies its cookie
// jar). Client keeps its cookie to itself, so this transport gets a session of its own from the
// Client's without credentials: SessionManager.AcquireCloneTicket through the Client (which logs
// in, re-logs in and counts as it always does), then CloneSession on /sdk. The cloned session is
// reused until an answer says NotAuthenticated; then one new clone and one retry.
// TODO(cns): a Client call that targets another endpoint path would let CNS share the one
// session; until Client offers it, one extra session per vCenter is the price.
//
// Retries of transient errors: up to soap_roundtrip_count attempts with the Client's backoff.
// Calls that change state are retried only after an HTTP 502/503/504 (vCenter did not run them);
// a dropped connection may have run them, and a second CnsCreateVolume makes a second volume, so
// that error goes back to the caller (the CSI layer's idempotency handles it). Queries retry all
// transient errors. Every round trip is reported to the Client's RequestObserver under its method
// name (CnsCreateVolume, ..., CloneSession), so cloudprovider_vsphere_api_requests_total counts
// them. Thread-safe.

#include <cstdint>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "common/http_client.h"
#include "vsphere/client.h"
#include "vsphere/soap.h"

namespace ccm::vsphere::cns {

class Session {
 public:
  // `vim` must outlive the Session.
  explicit Session(Client& vim);

  enum class Kind { kQuery, kMutation };
  // Calls a CNS method (args start with _this) and returns the parsed answer; a SOAP fault is
  // its typed status (soap.h).
  absl::StatusOr<SoapResponse> Call(absl::string_view method, absl::string_view args_xml,
                                    Kind kind);

  const std::string& url() const { return url_; }
  uint64_t clones() const;  // sessions cloned so far (tests)

 private:
  absl::StatusOr<SoapResponse> RoundTrip(absl::string_view method, const std::string& url,
                                         const std::string& envelope, const std::string& cookie,
                                         std::string* set_cookie);
  absl::StatusOr<SoapResponse> Retrying(absl::string_view method, const std::string& envelope,
                                        Kind kind);
  // A fresh cloned session unless one newer than `seen` exists.
  absl::Status Clone(uint64_t seen) ABSL_EXCLUSIVE_LOCKS_REQUIRED(clone_mu_);

  Client& vim_;
  const std::string url_;      // https://host:port/vsanHealth
  const std::string sdk_url_;  // the Client's /sdk URL
  HttpClient http_;

  absl::Mutex clone_mu_ ABSL_ACQUIRED_BEFORE(mu_);
  mutable absl::Mutex mu_;
  std::string cookie_ ABSL_GUARDED_BY(mu_);  // "vmware_soap_session=..."
  uint64_t generation_ ABSL_GUARDED_BY(mu_) = 0;
};

// "https://host:port/sdk" -> "https://host:port{path}".
std::string WithPath(absl::string_view url, absl::string_view path);

}  // namespace ccm::vsphere::cns
