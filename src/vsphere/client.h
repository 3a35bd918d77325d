#pragma once
// A vim25 SOAP session with one vCenter: login, cookie, keep-alive, retries and re-login.
//
// - Login = RetrieveServiceContent + SessionManager.Login with credentials from the
//   CredentialSource. Credentials are read before the first login and never sent empty.
// - Every Call() first makes sure a session exists; if CredentialSource::generation() changed
//   since the last login, it logs in again with the new credentials first.
// - A call failing with NotAuthenticated (session expired / invalidated) triggers one re-login and
//   one retry; a second NotAuthenticated is returned as is (Unauthenticated). A RetrieveProperties
//   (Ex) answer that reports NotAuthenticated per property in a missingSet (how vCenter and the
//   simulator answer a session they no longer know, e.g. after a restart) counts the same.
// - Transient errors (Unavailable from the HTTP layer: refused / dropped connection; HTTP 502/503/
//   504) are retried up to soap_roundtrip_count attempts in total with backoff. Timeouts
//   (DeadlineExceeded), TLS failures and faults are not retried.
// - session_generation() increases on every successful (re)login: caches that hold server-side
//   state (PropertyFilters, views) compare it to know when to rebuild.
// - One session for every SOAP service of vCenter (Endpoint): vim25 at /sdk, CNS at /vsanHealth,
//   SPBM at /pbm/sdk. The same cookie, retries, re-login and RequestObserver serve them all;
//   service endpoints also get the session in the SOAP header (<vcSessionCookie>), as vCenter's
//   PBM service requires and govmomi sends to every service endpoint.
// - A call that changes state (CallKind::kChange) is retried only after HTTP 502/503/504 (vCenter
//   did not run it); a dropped connection may have run it (a second CnsCreateVolume makes a second
//   volume), so that error goes back to the caller.
// Thread-safe: one Client may be used from many threads; concurrent re-logins collapse into one.

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/backoff.h"
#include "common/clock.h"
#include "common/http_client.h"
#include "vsphere/answer_tracker.h"
#include "vsphere/credential_source.h"
#include "vsphere/moref.h"
#include "vsphere/soap.h"

namespace ccm::vsphere {

// Called after every HTTP round trip (so retries are counted): SOAP method, result, latency.
using RequestObserver =
    std::function<void(absl::string_view method, absl::StatusCode code, absl::Duration latency)>;

// A SOAP service of vCenter reached over the vim25 session.
struct Endpoint {
  absl::string_view path;       // URL path on the vCenter: "/sdk", "/vsanHealth", "/pbm/sdk"
  absl::string_view ns;         // XML namespace of its methods
  absl::string_view action;     // SOAPAction prefix
  absl::string_view version;    // SOAPAction version; empty: ClientOptions::api_version
  bool session_header = false;  // <vcSessionCookie> in the SOAP header
};
inline constexpr Endpoint kVim25Endpoint{"/sdk", "urn:vim25", "urn:vim25", "", false};
// CNS, as govmomi's cns client speaks to it (namespace and version of the vim25 session).
inline constexpr Endpoint kCnsEndpoint{"/vsanHealth", "urn:vsan", "urn:vsan", "", true};
// SPBM: vCenter refuses "urn:pbm/" without a version; 2.0 is what VMware's SDKs send.
inline constexpr Endpoint kPbmEndpoint{"/pbm/sdk", "urn:pbm", "urn:pbm", "2.0", true};

// Whether a call may be sent again after a connection that broke without an answer.
enum class CallKind { kQuery, kChange };

struct ClientOptions {
  std::string url;  // https://host:port/sdk
  std::string
      server;      // key for CredentialSource::Get (the configured VC address); default: URL host
  TlsOptions tls;  // ca_file, thumbprint, insecure
  int soap_roundtrip_count = 3;  // attempts per call for transient errors (vsphere.conf default 3)
  BackoffPolicy retry_backoff{absl::Milliseconds(100), absl::Seconds(2), 2.0, 0.0};
  absl::Duration connect_timeout = absl::Seconds(10);
  absl::Duration timeout = absl::Seconds(60);  // per round trip
  // A request waiting this long beyond what it expects makes the vCenter "not answering"
  // (answer_tracker.h), as does any request that times out.
  absl::Duration answer_within = absl::Seconds(30);
  std::string user_agent = "vsphere-cloud-controller-manager";
  std::string api_version = "7.0";  // SOAPAction: urn:vim25/<api_version>
  RequestObserver observer;         // optional
  Clock* clock = nullptr;           // for retry backoff; null = real clock
};

struct ServiceContent {
  Moref root_folder, property_collector, view_manager, search_index, session_manager;
  Moref vstorage_object_manager;  // VcenterVStorageObjectManager (First Class Disks)
  Moref authorization_manager;
  std::string api_version;  // about.apiVersion
  std::string full_name;    // about.fullName
  std::string instance_uuid;
};

enum class SessionState { kLoggedOut, kLoggedIn, kLoginFailed };
absl::string_view ToString(SessionState s);

struct SessionStatus {
  SessionState state = SessionState::kLoggedOut;
  uint64_t generation = 0;        // session_generation()
  absl::Time logged_in_at;        // of the current session
  absl::Status last_login_error;  // OK unless state == kLoginFailed
};

class Client {
 public:
  // `creds` must outlive the client.
  Client(ClientOptions options, CredentialSource* creds);
  ~Client();  // logs out (best effort) when a session exists
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  // Makes sure a session with the current credentials exists (no-op when one does).
  absl::Status Login();
  // Ends the session (SessionManager.Logout). Later calls log in again.
  absl::Status Logout();
  // For a process that stops (issue 43): every call from now on ends by `deadline` (a call under
  // way is cut there, one started later fails at once with Cancelled) and is not retried past
  // it. The earliest deadline set wins.
  void SetDeadline(absl::Time deadline) { http_.SetDeadline(deadline); }

  // Invokes a vim25 method: `args_xml` is the method's arguments, starting with
  // MorefXml("_this", ...). Returns the parsed <methodResponse> (see SoapResponse::returnval()).
  absl::StatusOr<SoapResponse> Call(absl::string_view method, absl::string_view args_xml);
  // The same on another endpoint of this vCenter (CNS, SPBM), over the same session.
  absl::StatusOr<SoapResponse> Call(const Endpoint& endpoint, absl::string_view method,
                                    absl::string_view args_xml, CallKind kind = CallKind::kQuery);

  // The same for answers too big to hold whole (a full WaitForUpdatesEx): the body of an HTTP 200
  // answer goes to `sink` piece by piece as it arrives, then sink.Finish(); the result is the
  // first error of the transfer, of the sink or of Finish, else OK. Other HTTP answers are small
  // and read whole as in Call (typed SOAP fault, else Unavailable "HTTP <code>"). Login, transient
  // retries and the re-login after NotAuthenticated are Call's, with sink.Reset() before every
  // attempt; once sink.emitted() nothing is sent again and the error is returned as is.
  // `timeout` (when not zero) replaces options().timeout for each round trip, e.g. a
  // WaitForUpdatesEx with maxWaitSeconds, so an unanswered call is noticed soon. When `cancel`
  // (nullable) becomes true the transfer ends within about a second with Cancelled.
  absl::Status CallStreaming(absl::string_view method, absl::string_view args_xml,
                             SoapStreamSink& sink, absl::Duration timeout = absl::ZeroDuration(),
                             const std::atomic<bool>* cancel = nullptr);

  // A consumer found the session unusable in an answer the Client cannot check itself (a
  // NotAuthenticated in a WaitForUpdatesEx missingSet): the next call logs in again, unless the
  // session changed since `generation` (someone already did).
  void InvalidateSession(uint64_t generation);

  // One cheap unauthenticated round trip (RetrieveServiceContent) with `timeout` and no retry:
  // OK when vCenter answers. For a prober that waits for vCenter to come back. When the answer
  // shows another vCenter instance (instanceUuid changed: a restore, a redeploy), the cached
  // ServiceContent is replaced and the session dropped.
  absl::Status Probe(absl::Duration timeout);

  // Fetched once (unauthenticated) and cached.
  absl::StatusOr<ServiceContent> GetServiceContent();

  uint64_t session_generation() const;
  SessionStatus session_status() const;
  // Whether vCenter answers (answer_tracker.h): OK, or Unavailable saying which request waited.
  absl::Status Answering() const { return answers_.Check(absl::Now()); }
  const AnswerTracker& answers() const { return answers_; }
  const ClientOptions& options() const { return options_; }

 private:
  // One HTTP round trip of `method`; returns its result (the answer goes where the caller's
  // closure puts it). `may_retry` is false once a failed attempt must not be repeated.
  using Attempt = absl::FunctionRef<absl::Status()>;
  using MayRetry = absl::FunctionRef<bool()>;
  // Makes sure a session exists, runs Retrying(), and after NotAuthenticated logs in again once
  // and runs it again (the class comment's rules; shared by Call and CallStreaming).
  absl::Status WithSession(absl::string_view method, Attempt attempt, MayRetry may_retry,
                           CallKind kind = CallKind::kQuery);
  // Runs `attempt` up to soap_roundtrip_count times while it fails transiently.
  absl::Status Retrying(absl::string_view method, Attempt attempt, MayRetry may_retry,
                        CallKind kind = CallKind::kQuery);
  // Buffered round trips without the session logic (Login, Logout, RetrieveServiceContent).
  absl::StatusOr<SoapResponse> RoundTrips(absl::string_view method, absl::string_view args_xml);
  // One HTTP round trip of an envelope built by the caller (Envelope()) to `endpoint`.
  absl::StatusOr<SoapResponse> RoundTrip(absl::string_view method, const std::string& envelope,
                                         absl::Duration timeout = absl::ZeroDuration(),
                                         const Endpoint& endpoint = kVim25Endpoint);
  absl::Status StreamRoundTrip(absl::string_view method, const std::string& envelope,
                               SoapStreamSink& sink, absl::Duration timeout,
                               const std::atomic<bool>* cancel);
  // The envelope of `method` on `endpoint` with the session header when the endpoint takes one.
  std::string Envelope(const Endpoint& endpoint, absl::string_view method,
                       absl::string_view args_xml) const;
  std::string UrlOf(const Endpoint& endpoint) const;
  HttpRequest SoapRequest(const std::string& envelope,
                          const Endpoint& endpoint = kVim25Endpoint) const;
  // Logs in unless a session newer than `seen_generation` exists (another thread re-logged in).
  absl::Status LoginLocked(bool force, uint64_t seen_generation)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(login_mu_);
  bool NeedsLogin() const;
  void StoreCookies(const HttpResponse& r);
  std::string CookieHeader() const;
  // The value of the vmware_soap_session cookie without quotes ("" without a session).
  std::string SessionCookieValue() const;
  // How a request that ended with `s` (no HTTP answer) counts for the answer tracker.
  AnswerTracker::Outcome Unanswered(const absl::Status& s, const HttpRequest& req) const;

  const ClientOptions options_;
  CredentialSource* const creds_;
  Clock* const clock_;
  HttpClient http_;
  AnswerTracker answers_;

  absl::Mutex login_mu_ ABSL_ACQUIRED_BEFORE(mu_);  // serialises logins
  mutable absl::Mutex mu_;
  std::map<std::string, std::string> cookies_ ABSL_GUARDED_BY(mu_);  // name -> "name=value"
  std::unique_ptr<ServiceContent> service_content_ ABSL_GUARDED_BY(mu_);
  bool logged_in_ ABSL_GUARDED_BY(mu_) = false;
  uint64_t creds_generation_ ABSL_GUARDED_BY(mu_) = 0;  // CredentialSource generation used
  uint64_t session_generation_ ABSL_GUARDED_BY(mu_) = 0;
  absl::Time logged_in_at_ ABSL_GUARDED_BY(mu_);
  absl::Status last_login_error_ ABSL_GUARDED_BY(mu_);
};

// "host" of "https://host:port/sdk" ("[::1]" -> "::1").
std::string HostOfUrl(absl::string_view url);
// "https://host:port/sdk" -> "https://host:port{path}".
std::string WithPath(absl::string_view url, absl::string_view path);

}  // namespace ccm::vsphere
