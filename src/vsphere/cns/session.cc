#include "vsphere/cns/session.h"

#include <algorithm>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "common/backoff.h"
#include "common/logging.h"
#include "common/status_macros.h"
#include "vsphere/cns/wire.h"

namespace ccm::vsphere::cns {
namespace {

constexpr absl::string_view kSessionCookie = "vmware_soap_session";

HttpClientOptions HttpOptions(const ClientOptions& o) {
  HttpClientOptions h;
  h.tls = o.tls;
  h.connect_timeout = o.connect_timeout;
  h.timeout = o.timeout;
  h.user_agent = o.user_agent;
  return h;
}

bool Transient(const absl::Status& s, Session::Kind kind) {
  if (s.code() != absl::StatusCode::kUnavailable) return false;
  const int http = HttpStatusOf(s);
  if (http == 502 || http == 503 || http == 504) return true;
  return http == 0 && kind == Session::Kind::kQuery;
}

// The "name=value" of the session cookie among Set-Cookie headers, or "".
std::string SessionCookie(const std::vector<std::string>& set_cookies) {
  for (const std::string& c : set_cookies) {
    absl::string_view pair =
        absl::StripAsciiWhitespace(absl::string_view(c).substr(0, c.find(';')));
    if (absl::StartsWith(pair, absl::StrCat(kSessionCookie, "="))) return std::string(pair);
  }
  return "";
}

}  // namespace

std::string WithPath(absl::string_view url, absl::string_view path) {
  size_t scheme = url.find("://");
  size_t start = scheme == absl::string_view::npos ? 0 : scheme + 3;
  size_t slash = url.find('/', start);
  return absl::StrCat(url.substr(0, slash), path);
}

Session::Session(Client& vim)
    : vim_(vim),
      url_(WithPath(vim.options().url, kPath)),
      sdk_url_(vim.options().url),
      http_(HttpOptions(vim.options())) {}

uint64_t Session::clones() const {
  absl::MutexLock l(&mu_);
  return generation_;
}

absl::StatusOr<SoapResponse> Session::RoundTrip(absl::string_view method, const std::string& url,
                                                const std::string& envelope,
                                                const std::string& cookie,
                                                std::string* set_cookie) {
  Clock& clock = vim_.options().clock ? *vim_.options().clock : Clock::Real();
  const absl::Time start = clock.Now();
  HttpRequest req;
  req.method = "POST";
  req.url = url;
  req.body = envelope;
  // The vim25 version, as govmomi's CNS client sends it.
  req.headers = {{"Content-Type", "text/xml; charset=utf-8"},
                 {"SOAPAction", absl::StrCat("urn:vim25/", vim_.options().api_version)}};
  if (!cookie.empty()) req.headers.emplace_back("Cookie", cookie);
  absl::StatusOr<HttpResponse> resp = http_.Do(req);
  absl::StatusOr<SoapResponse> out = resp.ok()
                                         ? ParseHttpSoapResponse(resp->status, resp->body, url)
                                         : absl::StatusOr<SoapResponse>(resp.status());
  if (resp.ok() && set_cookie != nullptr)
    *set_cookie = SessionCookie(resp->all_headers("set-cookie"));
  if (vim_.options().observer)
    vim_.options().observer(method, out.status().code(), clock.Now() - start);
  return out;
}

absl::Status Session::Clone(uint64_t seen) {
  {
    absl::MutexLock l(&mu_);
    if (!cookie_.empty() && generation_ != seen) return absl::OkStatus();  // another thread did
  }
  CCM_ASSIGN_OR_RETURN(ServiceContent sc, vim_.GetServiceContent());
  CCM_ASSIGN_OR_RETURN(SoapResponse ticket,
                       vim_.Call("AcquireCloneTicket", MorefXml("_this", sc.session_manager)));
  const std::string t = ticket.returnval().text().get();
  if (t.empty()) return absl::InternalError("AcquireCloneTicket returned no ticket");
  const std::string envelope =
      BuildEnvelope(BuildMethod("CloneSession", absl::StrCat(MorefXml("_this", sc.session_manager),
                                                             TextXml("cloneTicket", t))));
  std::string cookie;
  absl::StatusOr<SoapResponse> r = RoundTrip("CloneSession", sdk_url_, envelope, "", &cookie);
  if (!r.ok()) return Annotate(r.status(), "CloneSession");
  if (cookie.empty()) {
    return absl::InternalError(
        absl::StrCat("CloneSession at ", sdk_url_, " set no session cookie"));
  }
  absl::MutexLock l(&mu_);
  cookie_ = cookie;
  ++generation_;
  VLOG(1, "CNS {}: cloned a session for the CNS endpoint (clone {})", url_, generation_);
  return absl::OkStatus();
}

absl::StatusOr<SoapResponse> Session::Retrying(absl::string_view method,
                                               const std::string& envelope, Kind kind) {
  const ClientOptions& o = vim_.options();
  Clock& clock = o.clock ? *o.clock : Clock::Real();
  const int attempts = std::max(1, o.soap_roundtrip_count);
  absl::StatusOr<SoapResponse> r;
  for (int i = 0; i < attempts; ++i) {
    if (i > 0) {
      VLOG(2, "CNS {}: {} failed ({}), retry {}/{}", url_, method, r.status(), i, attempts - 1);
      clock.SleepFor(BackoffDelay(o.retry_backoff, i - 1), nullptr);
    }
    std::string cookie;
    {
      absl::MutexLock l(&mu_);
      cookie = cookie_;
    }
    r = RoundTrip(method, url_, envelope, cookie, nullptr);
    if (r.ok() || !Transient(r.status(), kind)) break;
  }
  return r;
}

absl::StatusOr<SoapResponse> Session::Call(absl::string_view method, absl::string_view args_xml,
                                           Kind kind) {
  const std::string envelope = BuildEnvelope(BuildCnsMethod(method, args_xml));
  uint64_t seen;
  bool have;
  {
    absl::MutexLock l(&mu_);
    seen = generation_;
    have = !cookie_.empty();
  }
  if (!have) {
    absl::MutexLock l(&clone_mu_);
    CCM_RETURN_IF_ERROR(Clone(seen));
    absl::MutexLock m(&mu_);
    seen = generation_;
  }
  absl::StatusOr<SoapResponse> r = Retrying(method, envelope, kind);
  if (r.ok() || !IsNotAuthenticated(r.status())) return r;
  VLOG(1, "CNS {}: {}: session not authenticated, cloning a new one", url_, method);
  {
    absl::MutexLock l(&clone_mu_);
    CCM_RETURN_IF_ERROR(Annotate(Clone(seen), "new CNS session after NotAuthenticated"));
  }
  return Retrying(method, envelope, kind);
}

}  // namespace ccm::vsphere::cns
