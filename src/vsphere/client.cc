#include "vsphere/client.h"

#include <algorithm>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "common/call_deadline.h"
#include "common/logging.h"
#include "common/status_macros.h"

namespace ccm::vsphere {
namespace {

HttpClientOptions MakeHttpOptions(const ClientOptions& o) {
  HttpClientOptions h;
  h.tls = o.tls;
  h.connect_timeout = o.connect_timeout;
  h.timeout = o.timeout;
  h.user_agent = o.user_agent;
  return h;
}

constexpr absl::string_view kSessionCookie = "vmware_soap_session";

// Transport trouble worth another attempt. A change is sent again only when vCenter said it did
// not run it (502/503/504); a connection that broke without an answer may have run it.
bool IsTransient(const absl::Status& s, CallKind kind) {
  if (s.code() != absl::StatusCode::kUnavailable) return false;
  int http = HttpStatusOf(s);
  if (http == 502 || http == 503 || http == 504) return true;
  return http == 0 && kind == CallKind::kQuery;
}

ServiceContent ParseServiceContent(const pugi::xml_node& rv) {
  ServiceContent sc;
  sc.root_folder = ParseMoref(Child(rv, "rootFolder"));
  sc.property_collector = ParseMoref(Child(rv, "propertyCollector"));
  sc.view_manager = ParseMoref(Child(rv, "viewManager"));
  sc.search_index = ParseMoref(Child(rv, "searchIndex"));
  sc.session_manager = ParseMoref(Child(rv, "sessionManager"));
  sc.vstorage_object_manager = ParseMoref(Child(rv, "vStorageObjectManager"));
  sc.authorization_manager = ParseMoref(Child(rv, "authorizationManager"));
  pugi::xml_node about = Child(rv, "about");
  sc.api_version = ChildText(about, "apiVersion");
  sc.full_name = ChildText(about, "fullName");
  sc.instance_uuid = ChildText(about, "instanceUuid");
  return sc;
}

}  // namespace

absl::string_view ToString(SessionState s) {
  switch (s) {
    case SessionState::kLoggedOut:
      return "LoggedOut";
    case SessionState::kLoggedIn:
      return "LoggedIn";
    case SessionState::kLoginFailed:
      return "LoginFailed";
  }
  return "Unknown";
}

std::string WithPath(absl::string_view url, absl::string_view path) {
  size_t scheme = url.find("://");
  size_t start = scheme == absl::string_view::npos ? 0 : scheme + 3;
  size_t slash = url.find('/', start);
  return absl::StrCat(url.substr(0, slash), path);
}

std::string HostOfUrl(absl::string_view url) {
  absl::string_view u = url;
  size_t scheme = u.find("://");
  if (scheme != absl::string_view::npos) u.remove_prefix(scheme + 3);
  u = u.substr(0, u.find('/'));
  if (absl::StartsWith(u, "[")) {
    size_t close = u.find(']');
    return std::string(u.substr(1, close == absl::string_view::npos ? u.size() - 1 : close - 1));
  }
  return std::string(u.substr(0, u.find(':')));
}

Client::Client(ClientOptions options, CredentialSource* creds)
    : options_(std::move(options)),
      creds_(creds),
      clock_(options_.clock ? options_.clock : &Clock::Real()),
      http_(MakeHttpOptions(options_)),
      answers_(options_.url, options_.answer_within) {}

Client::~Client() {
  bool logged_in;
  {
    absl::MutexLock l(&mu_);
    logged_in = logged_in_;
  }
  if (logged_in) {
    absl::Status s = Logout();
    if (!s.ok()) VLOG(2, "vCenter {}: logout on shutdown: {}", options_.url, s);
  }
}

uint64_t Client::session_generation() const {
  absl::MutexLock l(&mu_);
  return session_generation_;
}

SessionStatus Client::session_status() const {
  absl::MutexLock l(&mu_);
  SessionStatus s;
  s.state = logged_in_
                ? SessionState::kLoggedIn
                : (last_login_error_.ok() ? SessionState::kLoggedOut : SessionState::kLoginFailed);
  s.generation = session_generation_;
  s.logged_in_at = logged_in_at_;
  s.last_login_error = last_login_error_;
  return s;
}

bool Client::NeedsLogin() const {
  uint64_t gen = creds_->generation();
  absl::MutexLock l(&mu_);
  return !logged_in_ || gen != creds_generation_;
}

void Client::StoreCookies(const HttpResponse& r) {
  std::vector<std::string> set = r.all_headers("set-cookie");
  if (set.empty()) return;
  absl::MutexLock l(&mu_);
  for (const std::string& c : set) {
    absl::string_view pair = absl::string_view(c).substr(0, c.find(';'));
    pair = absl::StripAsciiWhitespace(pair);
    size_t eq = pair.find('=');
    if (eq == absl::string_view::npos || eq == 0) continue;
    cookies_[std::string(pair.substr(0, eq))] = std::string(pair);
  }
}

std::string Client::CookieHeader() const {
  absl::MutexLock l(&mu_);
  std::vector<absl::string_view> parts;
  for (const auto& [name, pair] : cookies_) parts.push_back(pair);
  return absl::StrJoin(parts, "; ");
}

std::string Client::SessionCookieValue() const {
  absl::MutexLock l(&mu_);
  auto it = cookies_.find(std::string(kSessionCookie));
  if (it == cookies_.end()) return "";
  absl::string_view v = absl::string_view(it->second).substr(kSessionCookie.size() + 1);
  if (v.size() >= 2 && v.front() == '"' && v.back() == '"') v = v.substr(1, v.size() - 2);
  return std::string(v);
}

std::string Client::UrlOf(const Endpoint& endpoint) const {
  return endpoint.path == kVim25Endpoint.path ? options_.url
                                              : WithPath(options_.url, endpoint.path);
}

std::string Client::Envelope(const Endpoint& endpoint, absl::string_view method,
                             absl::string_view args_xml) const {
  std::string header;
  if (endpoint.session_header) {
    if (std::string cookie = SessionCookieValue(); !cookie.empty())
      header = TextXml("vcSessionCookie", cookie);
  }
  return BuildEnvelope(BuildMethod(method, args_xml, endpoint.ns), header);
}

HttpRequest Client::SoapRequest(const std::string& envelope, const Endpoint& endpoint) const {
  HttpRequest req;
  req.method = "POST";
  req.url = UrlOf(endpoint);
  req.body = envelope;
  req.deadline = CallDeadline();  // a CSI RPC's deadline bounds its vCenter calls
  absl::string_view version = endpoint.version.empty() ? options_.api_version : endpoint.version;
  req.headers = {{"Content-Type", "text/xml; charset=utf-8"},
                 {"SOAPAction", absl::StrCat(endpoint.action, "/", version)}};
  std::string cookie = CookieHeader();
  if (!cookie.empty()) req.headers.emplace_back("Cookie", cookie);
  return req;
}

absl::StatusOr<SoapResponse> Client::RoundTrip(absl::string_view method,
                                               const std::string& envelope, absl::Duration timeout,
                                               const Endpoint& endpoint) {
  absl::Time start = clock_->Now();
  HttpRequest req = SoapRequest(envelope, endpoint);
  req.timeout = timeout;
  const uint64_t sent = answers_.Sent(method, absl::Now(), absl::ZeroDuration());
  absl::StatusOr<HttpResponse> resp = http_.Do(req);
  answers_.Ended(sent, absl::Now(),
                 resp.ok() ? AnswerTracker::Outcome::kAnswered : Unanswered(resp.status(), req));
  absl::StatusOr<SoapResponse> out = resp.ok()
                                         ? ParseHttpSoapResponse(resp->status, resp->body, req.url)
                                         : absl::StatusOr<SoapResponse>(resp.status());
  if (out.ok() && (method == "RetrievePropertiesEx" || method == "ContinueRetrievePropertiesEx" ||
                   method == "RetrieveProperties")) {
    // A forgotten session is reported per property, not as a fault: make it one.
    if (absl::Status auth = MissingSetSessionFault(out->returnval()); !auth.ok()) out = auth;
  }
  if (resp.ok()) StoreCookies(*resp);
  if (options_.observer) options_.observer(method, out.status().code(), clock_->Now() - start);
  return out;
}

absl::Status Client::StreamRoundTrip(absl::string_view method, const std::string& envelope,
                                     SoapStreamSink& sink, absl::Duration timeout,
                                     const std::atomic<bool>* cancel) {
  HttpRequest req = SoapRequest(envelope);
  // Stream() has no default timeout (watches).
  req.timeout = timeout > absl::ZeroDuration() ? timeout : options_.timeout;
  req.accept_gzip = true;
  absl::Time start = clock_->Now();
  absl::Status fed;
  bool got_bytes = false;
  const uint64_t sent = answers_.Sent(method, absl::Now(), req.timeout);
  absl::StatusOr<HttpResponse> resp = http_.Stream(
      req,
      [&](absl::string_view bytes) {
        got_bytes = true;
        fed = sink.Feed(bytes);
        return fed.ok();
      },
      cancel);
  answers_.Ended(
      sent, absl::Now(),
      resp.ok() || got_bytes ? AnswerTracker::Outcome::kAnswered : Unanswered(resp.status(), req));
  absl::Status out;
  if (!resp.ok()) {
    out = resp.status();
  } else {
    StoreCookies(*resp);
    if (!fed.ok()) {
      out = fed;
    } else if (resp->status != 200) {
      // Stream() keeps non-2xx bodies whole (a fault is small): read it as Call does.
      out = ParseHttpSoapResponse(resp->status, resp->body, options_.url).status();
    } else {
      out = sink.Finish();
    }
  }
  if (options_.observer) options_.observer(method, out.code(), clock_->Now() - start);
  return out;
}

AnswerTracker::Outcome Client::Unanswered(const absl::Status& s, const HttpRequest& req) const {
  // Only the request's own timeout tells of a hang; a caller's deadline or a stop cut it short.
  const bool own =
      absl::IsDeadlineExceeded(s) && absl::Now() < req.deadline && !http_.PastDeadline();
  return own ? AnswerTracker::Outcome::kTimedOut : AnswerTracker::Outcome::kOther;
}

absl::Status Client::Retrying(absl::string_view method, Attempt attempt, MayRetry may_retry,
                              CallKind kind) {
  const int attempts = std::max(1, options_.soap_roundtrip_count);
  absl::Status s;
  for (int i = 0; i < attempts; ++i) {
    if (i > 0) {
      if (http_.PastDeadline()) break;  // the process is stopping: no retry
      const absl::Duration delay = BackoffDelay(options_.retry_backoff, i - 1);
      if (absl::Now() + delay >= CallDeadline()) break;  // the caller would not see the answer
      VLOG(2, "vCenter {}: {} failed ({}), retry {}/{}", options_.url, method, s, i, attempts - 1);
      clock_->SleepFor(delay, nullptr);
    }
    s = attempt();
    if (s.ok() || !IsTransient(s, kind) || !may_retry()) break;
  }
  return Annotate(s, method);
}

absl::StatusOr<SoapResponse> Client::RoundTrips(absl::string_view method,
                                                absl::string_view args_xml) {
  const std::string envelope = BuildEnvelope(BuildMethod(method, args_xml));
  absl::StatusOr<SoapResponse> r;
  CCM_RETURN_IF_ERROR(Retrying(
      method,
      [&] {
        r = RoundTrip(method, envelope);
        return r.status();
      },
      [] { return true; }));
  return r;
}

absl::StatusOr<ServiceContent> Client::GetServiceContent() {
  {
    absl::MutexLock l(&mu_);
    if (service_content_) return *service_content_;
  }
  CCM_ASSIGN_OR_RETURN(SoapResponse r,
                       RoundTrips("RetrieveServiceContent",
                                  MorefXml("_this", {"ServiceInstance", "ServiceInstance"})));
  ServiceContent sc = ParseServiceContent(r.returnval());
  if (sc.property_collector.empty() || sc.session_manager.empty() || sc.root_folder.empty()) {
    return absl::InternalError(absl::StrCat("vCenter ", options_.url,
                                            ": ServiceContent lacks propertyCollector, "
                                            "sessionManager or rootFolder"));
  }
  absl::MutexLock l(&mu_);
  service_content_ = std::make_unique<ServiceContent>(sc);
  return sc;
}

absl::Status Client::Login() {
  absl::MutexLock l(&login_mu_);
  return LoginLocked(false, 0);
}

absl::Status Client::LoginLocked(bool force, uint64_t seen_generation) {
  const uint64_t creds_gen = creds_->generation();
  bool rotate = false;
  {
    absl::MutexLock l(&mu_);
    if (force) {
      // Another thread logged in again since our call failed: use its session.
      if (logged_in_ && session_generation_ != seen_generation && creds_gen == creds_generation_) {
        return absl::OkStatus();
      }
    } else if (logged_in_ && creds_gen == creds_generation_) {
      return absl::OkStatus();
    }
    rotate = logged_in_ && !force && creds_gen != creds_generation_;
  }
  auto fail = [&](absl::Status s) {
    absl::MutexLock l(&mu_);
    logged_in_ = false;
    // A login cut short by the caller's deadline says nothing about the credentials or vCenter.
    if (absl::Now() < CallDeadline()) last_login_error_ = s;
    return s;
  };
  const std::string server = options_.server.empty() ? HostOfUrl(options_.url) : options_.server;
  absl::StatusOr<Credentials> c = creds_->Get(server);
  if (!c.ok()) {
    return fail(Annotate(c.status(), absl::StrCat("login to ", options_.url,
                                                  ": no credentials for server ", server)));
  }
  if (c->username.empty() || c->password.empty()) {
    return fail(absl::FailedPreconditionError(
        absl::StrCat("login to ", options_.url, ": credentials for server ", server,
                     " have an empty user name or password; refusing to log in")));
  }
  absl::StatusOr<ServiceContent> sc = GetServiceContent();
  if (!sc.ok()) return fail(Annotate(sc.status(), absl::StrCat("login to ", options_.url)));
  if (rotate) {
    LOG_INFO("vCenter {}: credentials changed, logging in again", options_.url);
    absl::StatusOr<SoapResponse> out = RoundTrips("Logout", MorefXml("_this", sc->session_manager));
    if (!out.ok()) VLOG(2, "vCenter {}: logout of old session: {}", options_.url, out.status());
  }
  {
    absl::MutexLock l(&mu_);
    cookies_.clear();  // a fresh session
    logged_in_ = false;
  }
  absl::StatusOr<SoapResponse> r =
      RoundTrips("Login", absl::StrCat(MorefXml("_this", sc->session_manager),
                                       TextXml("userName", c->username),
                                       TextXml("password", c->password.reveal())));
  if (!r.ok()) return fail(Annotate(r.status(), absl::StrCat("login to ", options_.url)));
  absl::MutexLock l(&mu_);
  logged_in_ = true;
  creds_generation_ = creds_gen;
  ++session_generation_;
  logged_in_at_ = clock_->Now();
  last_login_error_ = absl::OkStatus();
  VLOG(1, "vCenter {}: logged in (session generation {})", options_.url, session_generation_);
  return absl::OkStatus();
}

absl::Status Client::Logout() {
  absl::MutexLock lock(&login_mu_);
  {
    absl::MutexLock l(&mu_);
    if (!logged_in_) return absl::OkStatus();
  }
  absl::StatusOr<ServiceContent> sc = GetServiceContent();
  absl::Status s = sc.status();
  if (sc.ok()) s = RoundTrips("Logout", MorefXml("_this", sc->session_manager)).status();
  absl::MutexLock l(&mu_);
  logged_in_ = false;
  cookies_.clear();
  return s.ok() ? s : Annotate(s, absl::StrCat("logout from ", options_.url));
}

absl::Status Client::WithSession(absl::string_view method, Attempt attempt, MayRetry may_retry,
                                 CallKind kind) {
  if (NeedsLogin()) {
    absl::MutexLock l(&login_mu_);
    CCM_RETURN_IF_ERROR(LoginLocked(false, 0));
  }
  uint64_t gen = session_generation();
  absl::Status s = Retrying(method, attempt, may_retry, kind);
  if (s.ok() || !IsNotAuthenticated(s) || !may_retry()) return s;
  VLOG(1, "vCenter {}: {}: session not authenticated, logging in again", options_.url, method);
  {
    absl::MutexLock l(&login_mu_);
    absl::Status login = LoginLocked(true, gen);
    if (!login.ok()) {
      return Annotate(login, absl::StrCat(method, ": re-login after NotAuthenticated"));
    }
  }
  return Retrying(method, attempt, may_retry, kind);
}

absl::StatusOr<SoapResponse> Client::Call(absl::string_view method, absl::string_view args_xml) {
  return Call(kVim25Endpoint, method, args_xml, CallKind::kQuery);
}

absl::Status Client::CallStreaming(absl::string_view method, absl::string_view args_xml,
                                   SoapStreamSink& sink, absl::Duration timeout,
                                   const std::atomic<bool>* cancel) {
  const std::string envelope = BuildEnvelope(BuildMethod(method, args_xml));
  return WithSession(
      method,
      [&] {
        sink.Reset();
        return StreamRoundTrip(method, envelope, sink, timeout, cancel);
      },
      [&] { return !sink.emitted() && !(cancel != nullptr && cancel->load()); });
}

absl::StatusOr<SoapResponse> Client::Call(const Endpoint& endpoint, absl::string_view method,
                                          absl::string_view args_xml, CallKind kind) {
  absl::StatusOr<SoapResponse> r;
  CCM_RETURN_IF_ERROR(WithSession(
      method,
      [&] {
        // Built per attempt: after a re-login the SOAP header carries the new session.
        r = RoundTrip(method, Envelope(endpoint, method, args_xml), absl::ZeroDuration(), endpoint);
        return r.status();
      },
      [] { return true; }, kind));
  return r;
}

void Client::InvalidateSession(uint64_t generation) {
  absl::MutexLock l(&mu_);
  if (!logged_in_ || session_generation_ != generation) return;
  logged_in_ = false;
  VLOG(1, "vCenter {}: session {} is no longer valid; the next call logs in", options_.url,
       generation);
}

absl::Status Client::Probe(absl::Duration timeout) {
  const std::string envelope = BuildEnvelope(BuildMethod(
      "RetrieveServiceContent", MorefXml("_this", {"ServiceInstance", "ServiceInstance"})));
  absl::StatusOr<SoapResponse> r = RoundTrip("RetrieveServiceContent", envelope, timeout);
  if (!r.ok()) return Annotate(r.status(), absl::StrCat("probe ", options_.url));
  ServiceContent sc = ParseServiceContent(r->returnval());
  if (sc.property_collector.empty() || sc.session_manager.empty() || sc.root_folder.empty()) {
    return absl::InternalError(absl::StrCat("probe ", options_.url,
                                            ": ServiceContent lacks propertyCollector, "
                                            "sessionManager or rootFolder"));
  }
  absl::MutexLock l(&mu_);
  if (service_content_ && service_content_->instance_uuid != sc.instance_uuid) {
    LOG_WARN("vCenter {}: instance changed ({} -> {}): new session", options_.url,
             service_content_->instance_uuid, sc.instance_uuid);
    logged_in_ = false;
  }
  service_content_ = std::make_unique<ServiceContent>(std::move(sc));
  return absl::OkStatus();
}

}  // namespace ccm::vsphere
