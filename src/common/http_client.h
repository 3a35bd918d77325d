#pragma once
// A small HTTP(S) client on libcurl shared by the vSphere (SOAP, vAPI REST) and Kubernetes layers.
// - Keep-alive: curl handles are pooled and reused, so connections persist between calls.
// - TLS: verification on unless `insecure`; CA from a PEM file or PEM text; client certificates;
//   SHA-1 thumbprint pinning (vSphere style "AA:BB:..."), which replaces chain verification.
// - Errors: network failures -> Unavailable, timeouts -> DeadlineExceeded, TLS verification ->
//   FailedPrecondition; each message names the URL and curl's reason. HTTP status codes are not
//   errors here: callers map them (SOAP faults, Kubernetes Status bodies).
// Thread-safe: one HttpClient may be used from many threads at once.

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace ccm {

struct TlsOptions {
  bool insecure = false;         // skip all verification
  std::string ca_file;           // PEM bundle path
  std::string ca_pem;            // PEM bundle text
  std::string thumbprint;        // SHA-1 of the server certificate, hex with or without ':'
  std::string client_cert_file;  // PEM
  std::string client_cert_pem;
  std::string client_key_file;  // PEM
  std::string client_key_pem;
};

struct HttpClientOptions {
  TlsOptions tls;
  absl::Duration connect_timeout = absl::Seconds(10);
  absl::Duration timeout = absl::Seconds(60);  // whole request; streams use their own
  std::string user_agent = "vsphere-cloud-controller-manager";
  // Optional "host:port:connect-host:connect-port" (curl CONNECT_TO), e.g. for tls-server-name.
  std::string connect_to;
};

using Header = std::pair<std::string, std::string>;

struct HttpRequest {
  std::string method = "GET";
  std::string url;
  std::vector<Header> headers;
  std::string body;
  absl::Duration timeout = absl::ZeroDuration();  // zero: the client's default
  // The caller's deadline (common/call_deadline.h): the timeout is cut to end by it, and a
  // request not sent by then fails at once with DeadlineExceeded.
  absl::Time deadline = absl::InfiniteFuture();
  // Stream() only (Do() always asks for gzip): off for watches, where a compressing server may
  // hold events back; on for a big answer read piece by piece (curl inflates as it goes).
  bool accept_gzip = false;
};

struct HttpResponse {
  int status = 0;
  std::vector<Header> headers;  // names lower-cased
  std::string body;
  // First header with this (case-insensitive) name, or "".
  std::string header(absl::string_view name) const;
  std::vector<std::string> all_headers(absl::string_view name) const;
};

class HttpClient {
 public:
  explicit HttpClient(HttpClientOptions options);
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  absl::StatusOr<HttpResponse> Do(const HttpRequest& req);

  // Streams the response body to `on_data` as it arrives (e.g. a Kubernetes watch, a big SOAP
  // answer). Returns the response with status and headers (body empty) when the stream ends,
  // `on_data` returns false, or `cancel` becomes true (then the status is Cancelled). Non-2xx
  // bodies are returned whole in `body`, never passed to `on_data`. No timeout unless
  // req.timeout is set. A request that could not be sent on a pooled connection (the server had
  // closed it) is sent once more on a fresh one, as Do() does; nothing else is retried.
  absl::StatusOr<HttpResponse> Stream(const HttpRequest& req,
                                      const std::function<bool(absl::string_view)>& on_data,
                                      const std::atomic<bool>* cancel);

  // Bounds every request from now on, for a process that stops: a request's timeout is cut to
  // end by `deadline`; one started at or after it fails at once with Cancelled ("the client is
  // shutting down"); transfers already under way end within about a second of it (Cancelled).
  // May be called from any thread, more than once (the earliest deadline wins).
  void SetDeadline(absl::Time deadline);
  bool PastDeadline() const;

  const HttpClientOptions& options() const { return options_; }
  // Drops pooled connections (e.g. after credentials change or to force a new TLS handshake).
  void CloseIdleConnections();

 private:
  struct Handle;
  std::unique_ptr<Handle> Acquire();
  void Release(std::unique_ptr<Handle> h);

  // The timeout of a request of `base` (zero: none) under the deadline; Cancelled past it.
  absl::StatusOr<absl::Duration> Bounded(const HttpRequest& req, absl::Duration base) const;

  HttpClientOptions options_;
  std::atomic<int64_t> deadline_ns_{INT64_MAX};  // absl::ToUnixNanos; INT64_MAX: none
  absl::Mutex mu_;
  std::vector<std::unique_ptr<Handle>> idle_ ABSL_GUARDED_BY(mu_);
};

// Normalises a thumbprint to upper-case hex pairs joined by ':'.
std::string NormalizeThumbprint(absl::string_view t);

}  // namespace ccm
