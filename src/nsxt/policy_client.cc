#include "nsxt/policy_client.h"

#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/logging.h"

namespace ccm::nsxt {
namespace {

constexpr char kApi[] = "/policy/api/v1";

std::string PercentEncode(absl::string_view s) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

absl::StatusCode CodeOf(int http) {
  switch (http) {
    case 400:
      return absl::StatusCode::kInvalidArgument;
    case 401:
    case 403:
      return absl::StatusCode::kUnauthenticated;
    case 404:
      return absl::StatusCode::kNotFound;
    case 409:
      return absl::StatusCode::kAlreadyExists;
    case 412:
      return absl::StatusCode::kFailedPrecondition;
    case 429:
    case 502:
    case 503:
    case 504:
      return absl::StatusCode::kUnavailable;
    default:
      return http >= 500 ? absl::StatusCode::kInternal : absl::StatusCode::kUnknown;
  }
}

}  // namespace

std::string EscapeQueryValue(const std::string& v) {
  std::string out;
  for (char c : v) {
    if (absl::StrContains("/+-&|!(){}[]^\"~*?:\\ ", c)) out += '\\';
    out += c;
  }
  return out;
}

std::string CheckAuth(const PolicyClientOptions& o) {
  if (o.host.empty()) return "[NSXT] host is required";
  if (!o.tls.client_cert_file.empty()) {
    return o.tls.client_key_file.empty()
               ? "[NSXT] client-auth-key-file is required with client-auth-cert-file"
               : "";
  }
  if (!o.vmc_access_token.empty()) {
    return o.vmc_auth_host.empty() ? "[NSXT] vmc-auth-host is required with vmc-access-token" : "";
  }
  if (o.user.empty()) return "[NSXT] user is required (or vmc-access-token, or a client cert)";
  if (o.password.empty()) return "[NSXT] password is required for user " + o.user;
  return "";
}

PolicyClient::PolicyClient(PolicyClientOptions options)
    : options_(std::move(options)),
      http_(HttpClientOptions{
          .tls = options_.tls, .timeout = options_.timeout, .user_agent = options_.user_agent}),
      user_(options_.user),
      password_(options_.password) {}

PolicyClient::~PolicyClient() = default;

void PolicyClient::SetCredentials(const std::string& user, const Secret& password) {
  absl::MutexLock l(&mu_);
  user_ = user;
  password_ = password;
}

int64_t PolicyClient::requests() const {
  absl::MutexLock l(&mu_);
  return requests_;
}

absl::Status PolicyClient::ExchangeToken() {
  HttpRequest req;
  req.method = "POST";
  req.url = absl::StrCat("https://", options_.vmc_auth_host);
  req.headers = {{"Content-Type", "application/x-www-form-urlencoded"},
                 {"Accept", "application/json"}};
  req.body = "refresh_token=" + PercentEncode(options_.vmc_access_token.reveal());
  auto r = http_.Do(req);
  if (!r.ok()) return r.status();
  if (r->status != 200)
    return absl::UnauthenticatedError(absl::StrCat("the VMC auth host ", options_.vmc_auth_host,
                                                   " refused the access token: HTTP ", r->status,
                                                   ": ", r->body.substr(0, 200)));
  Json token = Json::parse(r->body, nullptr, false);
  if (!token.is_object() || !token.value("access_token", Json()).is_string())
    return absl::UnauthenticatedError(
        absl::StrCat("the VMC auth host ", options_.vmc_auth_host, " answered no access_token"));
  absl::MutexLock l(&mu_);
  access_token_ = Secret(token["access_token"].get<std::string>());
  return absl::OkStatus();
}

absl::Status PolicyClient::AuthHeaders(std::vector<Header>& headers) {
  if (!options_.tls.client_cert_file.empty()) return absl::OkStatus();
  if (!options_.vmc_access_token.empty()) {
    bool need;
    {
      absl::MutexLock l(&mu_);
      need = access_token_.empty();
    }
    if (need) {
      if (absl::Status s = ExchangeToken(); !s.ok()) return s;
    }
    absl::MutexLock l(&mu_);
    headers.emplace_back("csp-auth-token", access_token_.reveal());
    return absl::OkStatus();
  }
  absl::MutexLock l(&mu_);
  std::string basic = absl::Base64Escape(absl::StrCat(user_, ":", password_.reveal()));
  headers.emplace_back("Authorization",
                       absl::StrCat(options_.remote_auth ? "Remote " : "Basic ", basic));
  return absl::OkStatus();
}

absl::Status PolicyClient::ErrorOf(const std::string& method, const std::string& path,
                                   const HttpResponse& r) const {
  Json body = Json::parse(r.body, nullptr, false);
  std::string message = r.body.substr(0, 200);
  std::string code;
  if (body.is_object() && body.contains("error_message")) {
    message = body.value("error_message", Json("")).dump();
    if (body["error_message"].is_string()) message = body["error_message"].get<std::string>();
    if (body.contains("error_code"))
      code = absl::StrCat("error_code ", body["error_code"].dump(), ", ");
  }
  std::string who;
  if (r.status == 401 || r.status == 403) {
    absl::MutexLock l(&mu_);
    who = options_.vmc_access_token.empty()
              ? absl::StrCat(" (NSX-T manager ", options_.host, " refused user \"", user_, "\")")
              : absl::StrCat(" (NSX-T manager ", options_.host, " refused the VMC access token)");
  }
  return absl::Status(CodeOf(r.status), absl::StrCat("NSX-T ", method, " ", path, ": ", message,
                                                     " (", code, "HTTP ", r.status, ")", who));
}

absl::StatusOr<Json> PolicyClient::Send(const std::string& method,
                                        const std::string& path_and_query, const Json* body,
                                        bool* refused) {
  HttpRequest req;
  req.method = method;
  req.url = absl::StrCat("https://", options_.host, kApi, path_and_query);
  req.headers = {{"Accept", "application/json"}};
  if (body != nullptr) {
    req.headers.emplace_back("Content-Type", "application/json");
    req.body = body->dump();
  }
  if (absl::Status s = AuthHeaders(req.headers); !s.ok()) return s;
  {
    absl::MutexLock l(&mu_);
    ++requests_;
  }
  auto r = http_.Do(req);
  if (!r.ok()) {
    return absl::Status(r.status().code(), absl::StrCat("NSX-T ", method, " ", path_and_query, ": ",
                                                        r.status().message()));
  }
  *refused = r->status == 401 || r->status == 403;
  if (r->status < 200 || r->status >= 300) return ErrorOf(method, path_and_query, *r);
  if (r->body.empty()) return Json();
  Json out = Json::parse(r->body, nullptr, false);
  if (out.is_discarded())
    return absl::InternalError(absl::StrCat("NSX-T ", method, " ", path_and_query,
                                            ": the answer is not JSON: ", r->body.substr(0, 200)));
  return out;
}

absl::StatusOr<Json> PolicyClient::Call(const std::string& method,
                                        const std::string& path_and_query, const Json* body) {
  bool refused = false;
  auto out = Send(method, path_and_query, body, &refused);
  if (refused && !options_.vmc_access_token.empty()) {
    {
      absl::MutexLock l(&mu_);
      access_token_ = Secret();  // expired: exchange the API token again, once
    }
    out = Send(method, path_and_query, body, &refused);
  }
  return out;
}

absl::StatusOr<Json> PolicyClient::Get(const std::string& path) {
  return Call("GET", path, nullptr);
}

absl::Status PolicyClient::Patch(const std::string& path, const Json& body) {
  return Call("PATCH", path, &body).status();
}

absl::StatusOr<Json> PolicyClient::Put(const std::string& path, const Json& body) {
  return Call("PUT", path, &body);
}

absl::Status PolicyClient::Delete(const std::string& path) {
  return Call("DELETE", path, nullptr).status();
}

absl::StatusOr<Json> PolicyClient::Update(const std::string& path,
                                          const std::function<void(Json&)>& change, int attempts) {
  absl::Status last;
  for (int i = 0; i < attempts; ++i) {
    auto current = Get(path);
    if (!current.ok()) return current.status();
    change(*current);
    auto put = Put(path, *current);
    if (put.ok() || !absl::IsFailedPrecondition(put.status())) return put;
    last = put.status();
    VLOG(2, "NSX-T PUT {}: revision moved, reading it again ({}/{})", path, i + 1, attempts);
  }
  return absl::AbortedError(absl::StrCat(last.message(), "; gave up after ", attempts,
                                         " attempts: others keep changing it"));
}

absl::StatusOr<std::vector<Json>> PolicyClient::AllPages(const std::string& path_and_query) {
  std::vector<Json> out;
  std::string cursor;
  const char sep = absl::StrContains(path_and_query, '?') ? '&' : '?';
  do {
    std::string url =
        absl::StrCat(path_and_query, std::string(1, sep), "page_size=", options_.page_size);
    if (!cursor.empty()) absl::StrAppend(&url, "&cursor=", PercentEncode(cursor));
    auto page = Get(url);
    if (!page.ok()) return page.status();
    if (!page->is_object())
      return absl::InternalError(absl::StrCat("NSX-T GET ", url, ": not a list result"));
    for (auto& item : page->value("results", Json::array())) out.push_back(std::move(item));
    const Json next = page->value("cursor", Json());
    std::string next_cursor = next.is_string() ? next.get<std::string>() : "";
    if (next_cursor == cursor) break;  // a server that repeats its cursor: stop, do not loop
    cursor = next_cursor;
  } while (!cursor.empty());
  return out;
}

absl::StatusOr<std::vector<Json>> PolicyClient::List(const std::string& collection) {
  return AllPages(collection);
}

absl::StatusOr<std::vector<Json>> PolicyClient::Search(const std::string& query) {
  return AllPages("/search/query?query=" + PercentEncode(query));
}

absl::StatusOr<std::vector<Json>> PolicyClient::Realized(const std::string& intent_path) {
  auto r = Get("/infra/realized-state/realized-entities?intent_path=" + PercentEncode(intent_path));
  if (!r.ok()) return r.status();
  std::vector<Json> out;
  for (auto& item : r->value("results", Json::array())) out.push_back(std::move(item));
  return out;
}

}  // namespace ccm::nsxt
