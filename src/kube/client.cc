#include "kube/client.h"

#include <sys/stat.h>

#include <fstream>
#include <optional>
#include <sstream>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/logging.h"
#include "common/status_macros.h"
#include "kube/fast_json.h"
#include "kube/metadata_scan.h"
#include "kube/object_scan.h"

namespace ccm::kube {
namespace {

std::string UrlEncode(absl::string_view s) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (absl::ascii_isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

void AddParam(std::string* q, absl::string_view key, absl::string_view value) {
  if (value.empty()) return;
  absl::StrAppend(q, q->empty() ? "?" : "&", key, "=", UrlEncode(value));
}

absl::StatusOr<Json> ParseJson(absl::string_view body, absl::string_view what) {
  if (std::optional<Json> fast = FastParse(body)) return *std::move(fast);
  Json j = Json::parse(body.begin(), body.end(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) {
    return absl::InternalError(
        absl::StrCat(what, ": malformed JSON in response (", body.size(), " bytes)"));
  }
  return j;
}

// One line of a watch stream (under `rule` when given); discarded when it is not JSON.
Json ParseWatchLine(absl::string_view line, const KeepRule* rule) {
  if (rule != nullptr) {
    return ParsePruned(line, *rule, "watch event").value_or(Json::value_t::discarded);
  }
  if (std::optional<Json> fast = FastParse(line)) return *std::move(fast);
  return Json::parse(line.begin(), line.end(), nullptr, /*allow_exceptions=*/false);
}

std::string MetaString(const Json& obj, const char* field) {
  auto m = obj.find("metadata");
  if (m == obj.end() || !m->is_object()) return "";
  auto f = m->find(field);
  return f != m->end() && f->is_string() ? f->get<std::string>() : "";
}

// How often a Retry-After wait before re-sending a watch looks at the caller's cancel flag.
constexpr absl::Duration kCancelCheck = absl::Milliseconds(100);

}  // namespace

absl::string_view WatchEventTypeName(WatchEventType t) {
  switch (t) {
    case WatchEventType::kAdded:
      return "ADDED";
    case WatchEventType::kModified:
      return "MODIFIED";
    case WatchEventType::kDeleted:
      return "DELETED";
    case WatchEventType::kBookmark:
      return "BOOKMARK";
    case WatchEventType::kError:
      return "ERROR";
  }
  return "UNKNOWN";
}

absl::string_view PatchContentType(PatchType t) {
  switch (t) {
    case PatchType::kMerge:
      return "application/merge-patch+json";
    case PatchType::kStrategicMerge:
      return "application/strategic-merge-patch+json";
    case PatchType::kJson:
      return "application/json-patch+json";
  }
  return "application/merge-patch+json";
}

absl::StatusOr<Json> Client::CreateForIdentity(const Resource& r, absl::string_view ns,
                                               const Json& obj) {
  absl::StatusOr<Json> created = Create(r, ns, obj);
  if (!created.ok()) return created.status();
  return IdentityOf(*created);
}

absl::StatusOr<Json> Client::PatchForIdentity(const Resource& r, absl::string_view ns,
                                              absl::string_view name, PatchType type,
                                              const Json& patch, absl::string_view subresource) {
  absl::StatusOr<Json> patched = Patch(r, ns, name, type, patch, subresource);
  if (!patched.ok()) return patched.status();
  return IdentityOf(*patched);
}

absl::StatusOr<Json> Client::PatchWithoutStatus(const Resource& r, absl::string_view ns,
                                                absl::string_view name, PatchType type,
                                                const Json& patch, absl::string_view subresource) {
  absl::StatusOr<Json> patched = Patch(r, ns, name, type, patch, subresource);
  if (patched.ok()) EraseStatusAndManagedFields(*patched);
  return patched;
}

absl::StatusOr<ListResult> Client::ListAll(const Resource& r, absl::string_view ns,
                                           ListOptions opts,
                                           const std::function<void(Json&)>& each) {
  ListResult all;
  bool first = true;
  while (true) {
    auto page = List(r, ns, opts);
    if (!page.ok()) return page.status();
    if (first) all.resource_version = page->resource_version;
    first = false;
    for (auto& it : page->items) {
      if (each) each(it);
      all.items.push_back(std::move(it));
    }
    if (page->continue_token.empty()) break;
    opts.continue_token = page->continue_token;
    // Later pages come from the first page's snapshot; the server rejects an explicit version.
    opts.resource_version.clear();
  }
  return all;
}

struct RestClient::Call {
  std::string verb;    // for messages: "get", "list", "update", ...
  std::string method;  // HTTP
  std::string path;    // without the query
  std::string query;   // "?a=b" or ""
  std::string body;
  std::string content_type;
};

struct RestClient::Shared {
  Config config;
  RestClientOptions options;
  Clock* clock = nullptr;
  std::string base_url;
  std::unique_ptr<HttpClient> http;
  std::atomic<int64_t> requests_sent{0};

  // Token file cache: re-read when mtime or size changes.
  std::vector<Header> AuthHeaders();
  absl::Mutex token_mu;
  std::string token ABSL_GUARDED_BY(token_mu);
  int64_t token_mtime_ns ABSL_GUARDED_BY(token_mu) = -1;
  int64_t token_size ABSL_GUARDED_BY(token_mu) = -1;
};

absl::StatusOr<std::unique_ptr<RestClient>> RestClient::New(const Config& config,
                                                            RestClientOptions options) {
  std::string server = config.server;
  size_t scheme_end = server.find("://");
  if (server.empty() || scheme_end == std::string::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat("kube client: server \"", server, "\" is not a URL (https://host:port)"));
  }
  std::string scheme = absl::AsciiStrToLower(server.substr(0, scheme_end));
  if (scheme != "https" && scheme != "http") {
    return absl::InvalidArgumentError(
        absl::StrCat("kube client: server \"", server, "\": scheme must be https or http"));
  }
  std::string rest = server.substr(scheme_end + 3);
  std::string prefix;
  if (size_t slash = rest.find('/'); slash != std::string::npos) {
    prefix = rest.substr(slash);
    rest = rest.substr(0, slash);
  }
  while (absl::EndsWith(prefix, "/")) prefix.pop_back();
  std::string host = rest, port = scheme == "https" ? "443" : "80";
  if (size_t colon = rest.rfind(':');
      colon != std::string::npos && rest.find(']', colon) == std::string::npos) {
    host = rest.substr(0, colon);
    port = rest.substr(colon + 1);
  }
  HttpClientOptions hopts;
  hopts.tls = config.tls;
  hopts.timeout = config.timeout;
  hopts.user_agent = config.user_agent.empty() ? DefaultUserAgent() : config.user_agent;
  std::string base = absl::StrCat(scheme, "://", rest, prefix);
  if (!config.tls_server_name.empty()) {
    // Address the URL to the expected certificate name and let curl connect to the real host.
    std::string bare = host;
    if (absl::StartsWith(bare, "[") && absl::EndsWith(bare, "]")) {
      bare = bare.substr(1, bare.size() - 2);
    }
    hopts.connect_to = absl::StrCat(config.tls_server_name, ":", port, ":", bare, ":", port);
    base = absl::StrCat(scheme, "://", config.tls_server_name, ":", port, prefix);
  }
  const std::string user_agent = hopts.user_agent;
  auto shared = std::make_shared<Shared>();
  shared->config = config;
  shared->options = options;
  shared->clock = options.clock != nullptr ? options.clock : &Clock::Real();
  shared->base_url = std::move(base);
  shared->http = std::make_unique<HttpClient>(std::move(hopts));
  {
    absl::MutexLock l(&shared->token_mu);
    shared->token = config.bearer_token.reveal();
  }
  return std::unique_ptr<RestClient>(new RestClient(std::move(shared), user_agent));
}

RestClient::RestClient(std::shared_ptr<Shared> shared, std::string user_agent)
    : shared_(std::move(shared)),
      config_(shared_->config),
      options_(shared_->options),
      clock_(shared_->clock),
      base_url_(shared_->base_url),
      http_(shared_->http.get()),
      requests_sent_(shared_->requests_sent),
      user_agent_(std::move(user_agent)),
      send_user_agent_(user_agent_ != http_->options().user_agent),
      limiter_(config_.qps, config_.burst, *clock_) {}

RestClient::~RestClient() = default;

void RestClient::SetDeadline(absl::Time deadline) { http_->SetDeadline(deadline); }

std::unique_ptr<RestClient> RestClient::WithOwnRateLimit(absl::string_view name) const {
  return std::unique_ptr<RestClient>(
      new RestClient(shared_, absl::StrCat(http_->options().user_agent, "/", name)));
}

void RestClient::Throttle(absl::string_view method) {
  absl::Duration d = limiter_.Reserve();
  if (d > absl::ZeroDuration()) clock_->SleepFor(d, nullptr);
  if (options_.on_rate_limiter_wait) options_.on_rate_limiter_wait(method, d);
}

void RestClient::CountRequest() {
  requests_sent_.fetch_add(1);
  own_requests_sent_.fetch_add(1);
}

std::vector<Header> RestClient::Shared::AuthHeaders() {
  std::vector<Header> h;
  std::string t_copy;
  {
    absl::MutexLock l(&token_mu);
    if (!config.token_file.empty()) {
      struct stat st;
      if (stat(config.token_file.c_str(), &st) == 0) {
        int64_t mtime = int64_t{st.st_mtim.tv_sec} * 1'000'000'000 + st.st_mtim.tv_nsec;
        if (mtime != token_mtime_ns || st.st_size != token_size) {
          std::ifstream f(config.token_file, std::ios::binary);
          std::stringstream ss;
          ss << f.rdbuf();
          std::string t(absl::StripTrailingAsciiWhitespace(ss.str()));
          if (f && !t.empty()) {
            if (token_mtime_ns >= 0 && t != token) VLOG(2, "kube client: bearer token rotated");
            token = std::move(t);
            token_mtime_ns = mtime;
            token_size = st.st_size;
          }
        }
      }
    }
    t_copy = token;
  }
  if (!t_copy.empty()) {
    h.emplace_back("Authorization", absl::StrCat("Bearer ", t_copy));
  } else if (!config.username.empty()) {
    h.emplace_back(
        "Authorization",
        absl::StrCat("Basic ", absl::Base64Escape(absl::StrCat(config.username.reveal(), ":",
                                                               config.password.reveal()))));
  }
  return h;
}

std::vector<Header> RestClient::RequestHeaders() {
  std::vector<Header> h = shared_->AuthHeaders();
  // A custom header replaces the one curl sends from the pooled handles' CURLOPT_USERAGENT.
  if (send_user_agent_) h.emplace_back("User-Agent", user_agent_);
  return h;
}

absl::StatusOr<HttpResponse> RestClient::Send(const Call& call) {
  for (int attempt = 0;; ++attempt) {
    Throttle(call.method);
    HttpRequest req;
    req.method = call.method;
    req.url = absl::StrCat(base_url_, call.path, call.query);
    req.headers = RequestHeaders();
    req.headers.emplace_back("Accept", "application/json");
    // gzip only, like client-go: the API server speaks it, and brotli at its default quality
    // costs the server about a second per megabyte (seen with the emulator's cpp-httplib).
    req.headers.emplace_back("Accept-Encoding", "gzip");
    if (!call.content_type.empty()) req.headers.emplace_back("Content-Type", call.content_type);
    req.body = call.body;
    CountRequest();
    const absl::Time sent = clock_->Now();
    auto resp = http_->Do(req);
    if (options_.on_request) options_.on_request(call.method, clock_->Now() - sent);
    if (!resp.ok()) {
      return Annotate(resp.status(), absl::StrCat(call.verb, " ", call.path));
    }
    if (resp->status >= 200 && resp->status <= 299) return resp;
    absl::Status s = StatusFromResponse(call.verb, call.path, resp->status, resp->body,
                                        resp->header("retry-after"));
    auto retry = RetryAfter(s);
    bool retriable = resp->status == 429 || (resp->status == 503 && retry.has_value());
    if (!retriable || attempt >= options_.max_retries) return s;
    absl::Duration wait = retry.value_or(absl::Seconds(1));
    if (wait > options_.max_retry_after) wait = options_.max_retry_after;
    VLOG(2, "kube client: {} {}: HTTP {}, retrying in {}", call.verb, call.path, resp->status,
         absl::FormatDuration(wait));
    clock_->SleepFor(wait, nullptr);
  }
}

absl::StatusOr<Json> RestClient::SendForObject(const Call& call) {
  auto resp = Send(call);
  if (!resp.ok()) return resp.status();
  return ParseJson(resp->body, absl::StrCat(call.verb, " ", call.path));
}

absl::StatusOr<Json> RestClient::SendForIdentity(const Call& call) {
  auto resp = Send(call);
  if (!resp.ok()) return resp.status();
  absl::StatusOr<Json> id = ScanMetadata(resp->body, absl::StrCat(call.verb, " ", call.path));
  // Not the caller's mistake: an answer we cannot read is the server's.
  if (!id.ok()) return absl::InternalError(id.status().message());
  return id;
}

absl::StatusOr<Json> RestClient::Get(const Resource& r, absl::string_view ns,
                                     absl::string_view name) {
  return SendForObject({"get", "GET", r.Path(ns, name), "", "", ""});
}

absl::StatusOr<Json> RestClient::ServerVersion() {
  return SendForObject({"get", "GET", "/version", "", "", ""});
}

absl::StatusOr<ListResult> RestClient::List(const Resource& r, absl::string_view ns,
                                            const ListOptions& opts) {
  Call c{"list", "GET", r.Path(ns), "", "", ""};
  AddParam(&c.query, "labelSelector", opts.label_selector);
  AddParam(&c.query, "fieldSelector", opts.field_selector);
  if (opts.limit > 0) AddParam(&c.query, "limit", absl::StrCat(opts.limit));
  AddParam(&c.query, "continue", opts.continue_token);
  AddParam(&c.query, "resourceVersion", opts.resource_version);
  auto j = SendForObject(c);
  if (!j.ok()) return j.status();
  ListResult out;
  if (!j->is_object()) {
    return absl::InternalError(absl::StrCat("list ", c.path, ": response is not an object"));
  }
  if (auto m = j->find("metadata"); m != j->end() && m->is_object()) {
    out.resource_version = m->value("resourceVersion", "");
    out.continue_token = m->value("continue", "");
  }
  if (auto items = j->find("items"); items != j->end() && items->is_array()) {
    out.items.reserve(items->size());
    for (auto& it : *items) out.items.push_back(std::move(it));
  }
  return out;
}

absl::Status RestClient::Watch(const Resource& r, absl::string_view ns, const WatchOptions& opts,
                               const std::function<bool(WatchEvent&)>& on_event,
                               const std::atomic<bool>* cancel) {
  Call c{"watch", "GET", r.Path(ns), "?watch=true", "", ""};
  AddParam(&c.query, "labelSelector", opts.label_selector);
  AddParam(&c.query, "fieldSelector", opts.field_selector);
  AddParam(&c.query, "resourceVersion", opts.resource_version);
  if (opts.allow_bookmarks) AddParam(&c.query, "allowWatchBookmarks", "true");
  if (opts.timeout_seconds > 0)
    AddParam(&c.query, "timeoutSeconds", absl::StrCat(opts.timeout_seconds));
  Throttle(c.method);
  HttpRequest req;
  req.url = absl::StrCat(base_url_, c.path, c.query);
  req.headers = RequestHeaders();
  req.headers.emplace_back("Accept", "application/json");
  CountRequest();

  std::string buf;
  absl::Status event_status;           // an ERROR event or a malformed line ends the watch with it
  std::optional<KeepRule> event_rule;  // the event's type, and its object under opts.keep
  if (opts.keep != nullptr) {
    event_rule = KeepRule{.members = {{.key = "type"},
                                      {.key = "object",
                                       .only = opts.keep->only,
                                       .members = opts.keep->members,
                                       .last = true}}};
  }
  auto handle_line = [&](absl::string_view line) -> bool {
    line = absl::StripAsciiWhitespace(line);
    if (line.empty()) return true;
    Json j = ParseWatchLine(line, event_rule ? &*event_rule : nullptr);
    if (j.is_discarded() || !j.is_object()) {
      event_status = absl::InternalError(absl::StrCat("watch ", c.path, ": malformed JSON event"));
      return false;
    }
    std::string type = j.value("type", "");
    WatchEvent ev;
    if (type == "ADDED")
      ev.type = WatchEventType::kAdded;
    else if (type == "MODIFIED")
      ev.type = WatchEventType::kModified;
    else if (type == "DELETED")
      ev.type = WatchEventType::kDeleted;
    else if (type == "BOOKMARK")
      ev.type = WatchEventType::kBookmark;
    else if (type == "ERROR")
      ev.type = WatchEventType::kError;
    else {
      event_status = absl::InternalError(
          absl::StrCat("watch ", c.path, ": unknown event type \"", type, "\""));
      return false;
    }
    if (auto o = j.find("object"); o != j.end()) ev.object = std::move(*o);
    if (ev.type == WatchEventType::kError) {
      event_status = StatusFromStatusObject("watch", c.path, ev.object);
      return false;
    }
    return on_event(ev);
  };
  bool stopped_by_caller = false;
  auto on_data = [&](absl::string_view data) -> bool {
    buf.append(data.data(), data.size());
    size_t start = 0;
    while (true) {
      size_t nl = buf.find('\n', start);
      if (nl == std::string::npos) break;
      bool more = handle_line(absl::string_view(buf).substr(start, nl - start));
      start = nl + 1;
      if (!more) {
        if (event_status.ok()) stopped_by_caller = true;
        buf.erase(0, start);
        return false;
      }
    }
    buf.erase(0, start);
    return true;
  };
  absl::StatusOr<HttpResponse> resp;
  for (int attempt = 0;; ++attempt) {
    resp = http_->Stream(req, on_data, cancel);
    if (!event_status.ok()) return event_status;
    if (stopped_by_caller) return absl::OkStatus();
    if (!resp.ok()) return Annotate(resp.status(), absl::StrCat("watch ", c.path));
    if (resp->status >= 200 && resp->status <= 299) break;
    absl::Status s =
        StatusFromResponse("watch", c.path, resp->status, resp->body, resp->header("retry-after"));
    // Like Send() (and client-go's request retry, which covers watches too): the server did not
    // start the watch and says when to come back. No event was delivered (an error answer's body
    // never reaches on_data), so trying again is invisible to the caller.
    auto retry = RetryAfter(s);
    bool retriable = resp->status == 429 || (resp->status == 503 && retry.has_value());
    if (!retriable || attempt >= options_.max_retries) return s;
    absl::Duration wait = std::min(retry.value_or(absl::Seconds(1)), options_.max_retry_after);
    VLOG(2, "kube client: watch {}: HTTP {}, retrying in {}", c.path, resp->status,
         absl::FormatDuration(wait));
    // In slices, so a caller that stops (an informer shutting down) is not held up to 30 s.
    const absl::Time until = clock_->Now() + wait;
    for (absl::Time now = clock_->Now(); now < until; now = clock_->Now()) {
      if (cancel != nullptr && cancel->load()) break;
      clock_->SleepUntil(std::min(until, now + kCancelCheck), nullptr);
    }
    if (cancel != nullptr && cancel->load()) {
      return absl::CancelledError(absl::StrCat("watch ", c.path, ": cancelled"));
    }
    Throttle(c.method);
    req.headers = RequestHeaders();
    req.headers.emplace_back("Accept", "application/json");
    CountRequest();
  }
  // A final event without a trailing newline.
  if (!buf.empty() && !handle_line(buf) && !event_status.ok()) return event_status;
  return absl::OkStatus();
}

RestClient::Call RestClient::CreateCall(const Resource& r, absl::string_view ns,
                                        const Json& obj) const {
  Json body = obj;
  if (!body.contains("apiVersion")) body["apiVersion"] = r.api_version();
  if (!body.contains("kind")) body["kind"] = r.kind;
  if (ns.empty() && r.namespaced) ns = MetaString(obj, "namespace");
  return {"create", "POST", r.Path(ns), "", body.dump(), "application/json"};
}

absl::StatusOr<Json> RestClient::Create(const Resource& r, absl::string_view ns, const Json& obj) {
  return SendForObject(CreateCall(r, ns, obj));
}

absl::StatusOr<Json> RestClient::CreateForIdentity(const Resource& r, absl::string_view ns,
                                                   const Json& obj) {
  return SendForIdentity(CreateCall(r, ns, obj));
}

absl::StatusOr<Json> RestClient::Update(const Resource& r, const Json& obj,
                                        absl::string_view subresource) {
  std::string name = MetaString(obj, "name");
  if (name.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("update ", r.plural, ": object has no metadata.name"));
  }
  std::string ns = r.namespaced ? MetaString(obj, "namespace") : "";
  if (r.namespaced && ns.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("update ", r.plural, "/", name, ": object has no metadata.namespace"));
  }
  return SendForObject({subresource.empty() ? "update" : absl::StrCat("update ", subresource),
                        "PUT", r.Path(ns, name, subresource), "", obj.dump(), "application/json"});
}

RestClient::Call RestClient::PatchCall(const Resource& r, absl::string_view ns,
                                       absl::string_view name, PatchType type, const Json& patch,
                                       absl::string_view subresource) const {
  return {"patch", "PATCH",      r.Path(ns, name, subresource),
          "",      patch.dump(), std::string(PatchContentType(type))};
}

absl::StatusOr<Json> RestClient::Patch(const Resource& r, absl::string_view ns,
                                       absl::string_view name, PatchType type, const Json& patch,
                                       absl::string_view subresource) {
  return SendForObject(PatchCall(r, ns, name, type, patch, subresource));
}

absl::StatusOr<Json> RestClient::PatchWithoutStatus(const Resource& r, absl::string_view ns,
                                                    absl::string_view name, PatchType type,
                                                    const Json& patch,
                                                    absl::string_view subresource) {
  const Call call = PatchCall(r, ns, name, type, patch, subresource);
  auto resp = Send(call);
  if (!resp.ok()) return resp.status();
  absl::StatusOr<Json> obj =
      ParseWithoutStatus(resp->body, absl::StrCat(call.verb, " ", call.path));
  // Not the caller's mistake: an answer we cannot read is the server's.
  if (!obj.ok()) return absl::InternalError(obj.status().message());
  return obj;
}

absl::StatusOr<Json> RestClient::PatchForIdentity(const Resource& r, absl::string_view ns,
                                                  absl::string_view name, PatchType type,
                                                  const Json& patch,
                                                  absl::string_view subresource) {
  return SendForIdentity(PatchCall(r, ns, name, type, patch, subresource));
}

absl::Status RestClient::Delete(const Resource& r, absl::string_view ns, absl::string_view name,
                                const DeleteOptions& opts) {
  Json body = {{"kind", "DeleteOptions"}, {"apiVersion", "v1"}};
  if (!opts.precondition_uid.empty()) body["preconditions"]["uid"] = opts.precondition_uid;
  if (!opts.precondition_resource_version.empty()) {
    body["preconditions"]["resourceVersion"] = opts.precondition_resource_version;
  }
  if (opts.grace_period_seconds) body["gracePeriodSeconds"] = *opts.grace_period_seconds;
  if (!opts.propagation_policy.empty()) body["propagationPolicy"] = opts.propagation_policy;
  auto resp = Send({"delete", "DELETE", r.Path(ns, name), "", body.dump(), "application/json"});
  return resp.status();
}

}  // namespace ccm::kube
