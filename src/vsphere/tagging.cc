#include "vsphere/tagging.h"

#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/call_deadline.h"
#include "common/logging.h"
#include "common/status_macros.h"
#include "nlohmann/json.hpp"

namespace ccm::vsphere {
namespace {

using nlohmann::json;

constexpr char kSessionPath[] = "/com/vmware/cis/session";
constexpr char kTagPath[] = "/com/vmware/cis/tagging/tag";
constexpr char kCategoryPath[] = "/com/vmware/cis/tagging/category";
constexpr char kAttachedPath[] =
    "/com/vmware/cis/tagging/tag-association?~action=list-attached-tags-on-objects";
constexpr char kSessionHeader[] = "vmware-api-session-id";

std::string BaseUrl(absl::string_view url) {
  std::string u(url);
  while (absl::EndsWith(u, "/")) u.pop_back();
  if (absl::EndsWith(u, "/sdk")) u.resize(u.size() - 4);
  return u + "/rest";
}

// Parses without exceptions; nullopt-like "discarded" on error.
absl::StatusOr<json> ParseJson(absl::string_view text, absl::string_view what) {
  json j = json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) {
    return absl::DataLossError(absl::StrCat("malformed JSON in ", what));
  }
  return j;
}

std::string StringField(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// Tag ids look like "urn:vmomi:InventoryServiceTag:<uuid>:GLOBAL"; escape anything unusual.
std::string PathEscape(absl::string_view s) {
  std::string out;
  for (char c : s) {
    if (absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.' ||
        c == '~' || c == ':') {
      out.push_back(c);
    } else {
      absl::StrAppend(&out, "%", absl::Hex(static_cast<unsigned char>(c), absl::kZeroPad2));
    }
  }
  return out;
}

}  // namespace

absl::StatusOr<std::string> RestValue(absl::string_view body) {
  CCM_ASSIGN_OR_RETURN(json j, ParseJson(body, "vAPI answer"));
  if (!j.is_object()) return absl::DataLossError("vAPI answer is not a JSON object");
  auto it = j.find("value");
  return it == j.end() ? std::string("null") : it->dump();
}

std::string AttachedTagsRequest(const std::vector<Moref>& objects) {
  json ids = json::array();
  for (const Moref& o : objects) ids.push_back({{"type", o.type}, {"id", o.value}});
  return json{{"object_ids", std::move(ids)}}.dump();
}

absl::StatusOr<std::vector<std::pair<Moref, std::vector<std::string>>>> ParseAttachedTags(
    absl::string_view value_json) {
  CCM_ASSIGN_OR_RETURN(json j, ParseJson(value_json, "list-attached-tags-on-objects answer"));
  std::vector<std::pair<Moref, std::vector<std::string>>> out;
  if (j.is_null()) return out;  // the simulator omits an empty list
  if (!j.is_array()) {
    return absl::DataLossError("list-attached-tags-on-objects answer is not a list");
  }
  for (const json& e : j) {
    if (!e.is_object() || !e.contains("object_id") || !e["object_id"].is_object()) {
      return absl::DataLossError("list-attached-tags-on-objects entry without object_id");
    }
    Moref ref{StringField(e["object_id"], "type"), StringField(e["object_id"], "id")};
    std::vector<std::string> ids;
    auto t = e.find("tag_ids");
    if (t != e.end() && !t->is_null()) {
      if (!t->is_array()) return absl::DataLossError("tag_ids is not a list");
      for (const json& id : *t) {
        if (!id.is_string()) return absl::DataLossError("tag id is not a string");
        ids.push_back(id.get<std::string>());
      }
    }
    out.emplace_back(std::move(ref), std::move(ids));
  }
  return out;
}

absl::StatusOr<Tag> ParseTag(absl::string_view value_json) {
  CCM_ASSIGN_OR_RETURN(json j, ParseJson(value_json, "tag"));
  if (!j.is_object()) return absl::DataLossError("tag is not a JSON object");
  Tag t{StringField(j, "id"), StringField(j, "name"), StringField(j, "category_id"), ""};
  if (t.id.empty() || t.category_id.empty()) {
    return absl::DataLossError("tag without id or category_id");
  }
  return t;
}

absl::StatusOr<std::vector<std::string>> ParseIdList(absl::string_view value_json) {
  CCM_ASSIGN_OR_RETURN(json j, ParseJson(value_json, "ID list"));
  if (!j.is_array()) return absl::DataLossError("ID list is not a JSON array");
  std::vector<std::string> out;
  for (const json& id : j) {
    if (!id.is_string()) return absl::DataLossError("ID list holds a non-string");
    out.push_back(id.get<std::string>());
  }
  return out;
}

absl::StatusOr<TagCategory> ParseCategory(absl::string_view value_json) {
  CCM_ASSIGN_OR_RETURN(json j, ParseJson(value_json, "category"));
  if (!j.is_object()) return absl::DataLossError("category is not a JSON object");
  TagCategory c{StringField(j, "id"), StringField(j, "name"), StringField(j, "cardinality")};
  if (c.id.empty()) return absl::DataLossError("category without id");
  return c;
}

absl::Status RestError(int http_status, absl::string_view body, absl::string_view what) {
  std::string detail = absl::StrCat("HTTP ", http_status);
  json j = json::parse(body.begin(), body.end(), nullptr, false);
  if (j.is_object()) {
    std::string type = StringField(j, "type");
    std::vector<std::string> messages;
    // {"type": "...errors.not_found", "value": {"messages": [{"default_message": "..."}]}}
    if (auto v = j.find("value"); v != j.end() && v->is_object()) {
      if (auto m = v->find("messages"); m != v->end() && m->is_array()) {
        for (const json& msg : *m) {
          if (msg.is_string()) messages.push_back(msg.get<std::string>());
          if (msg.is_object()) messages.push_back(StringField(msg, "default_message"));
        }
      }
    }
    if (!type.empty()) {
      absl::StrAppend(&detail, " (", type);
      if (!messages.empty()) absl::StrAppend(&detail, ": ", absl::StrJoin(messages, "; "));
      absl::StrAppend(&detail, ")");
    }
  }
  std::string msg = absl::StrCat(what, ": ", detail);
  switch (http_status) {
    case 400:
      return absl::InvalidArgumentError(msg);
    case 401:
      return absl::UnauthenticatedError(msg);
    case 403:
      return absl::PermissionDeniedError(msg);
    case 404:
      return absl::NotFoundError(msg);
    default:
      return absl::UnavailableError(msg);
  }
}

TaggingClient::TaggingClient(TaggingOptions options, const CredentialSource& credentials,
                             std::shared_ptr<HttpClient> http)
    : options_(std::move(options)),
      credentials_(credentials),
      http_(http ? std::move(http) : std::make_shared<HttpClient>(options_.http)),
      base_(BaseUrl(options_.url)) {}

TaggingClient::~TaggingClient() {
  absl::Status s = Logout();
  if (!s.ok()) VLOG(2, "vAPI logout from {}: {}", options_.server, s);
}

absl::StatusOr<HttpResponse> TaggingClient::Send(const std::string& method, const std::string& path,
                                                 const std::string& body,
                                                 const std::string& session_id) {
  HttpRequest req;
  req.method = method;
  req.url = base_ + path;
  req.headers = {{"Accept", "application/json"}, {kSessionHeader, session_id}};
  if (method == "POST") req.headers.emplace_back("Content-Type", "application/json");
  req.body = body;
  req.deadline = CallDeadline();
  {
    absl::MutexLock l(&mu_);
    ++stats_.requests;
  }
  return http_->Do(req);
}

absl::StatusOr<TaggingClient::Session> TaggingClient::EnsureSession(const std::string& stale_id) {
  absl::MutexLock login(&login_mu_);
  uint64_t generation = credentials_.generation();
  std::string old_id;
  {
    absl::MutexLock l(&mu_);
    // Another caller may have replaced the stale session while we waited.
    if (!session_.id.empty() && session_.id != stale_id && session_.generation == generation) {
      return session_;
    }
    old_id = std::move(session_.id);
    session_ = {};
  }
  if (!old_id.empty() && old_id != stale_id) {
    // Credentials rotated: drop the session made with the old ones (best effort).
    auto r = Send("DELETE", kSessionPath, "", old_id);
    if (r.ok()) {
      absl::MutexLock l(&mu_);
      ++stats_.logouts;
    }
  }
  auto creds = credentials_.Get(options_.server);
  if (!creds.ok()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "vAPI login to ", options_.server, ": no credentials yet: ", creds.status().message()));
  }
  if (creds->username.empty() || creds->password.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat("vAPI login to ", options_.server, ": empty user name or password"));
  }
  HttpRequest req;
  req.method = "POST";
  req.url = base_ + kSessionPath;
  req.deadline = CallDeadline();
  req.headers = {{"Accept", "application/json"},
                 {"vmware-use-header-authn", "true"},
                 {"Authorization",
                  "Basic " + absl::Base64Escape(creds->username + ":" + creds->password.reveal())}};
  {
    absl::MutexLock l(&mu_);
    ++stats_.requests;
  }
  std::string what = absl::StrCat("vAPI login to ", base_, " as ", creds->username);
  CCM_ASSIGN_OR_RETURN(HttpResponse resp, http_->Do(req));
  if (resp.status == 401 || resp.status == 403) {
    return absl::UnauthenticatedError(absl::StrCat(
        what, ": HTTP ", resp.status, " (wrong user name or password, or account locked)"));
  }
  if (resp.status / 100 != 2) return RestError(resp.status, resp.body, what);
  CCM_ASSIGN_OR_RETURN(std::string value, RestValue(resp.body));
  CCM_ASSIGN_OR_RETURN(json id, ParseJson(value, "session id"));
  if (!id.is_string() || id.get<std::string>().empty()) {
    return absl::DataLossError(absl::StrCat(what, ": answer has no session id"));
  }
  absl::MutexLock l(&mu_);
  session_ = {id.get<std::string>(), generation};
  ++stats_.logins;
  LOG_INFO("vAPI session created on {} as {}", options_.server, creds->username);
  return session_;
}

absl::StatusOr<std::string> TaggingClient::Call(const std::string& method, const std::string& path,
                                                const std::string& body) {
  std::string what = absl::StrCat(method, " ", base_, path);
  auto result = [&]() -> absl::StatusOr<std::string> {
    Session s;
    {
      absl::MutexLock l(&mu_);
      s = session_;
    }
    if (s.id.empty() || s.generation != credentials_.generation()) {
      CCM_ASSIGN_OR_RETURN(s, EnsureSession(""));
    }
    CCM_ASSIGN_OR_RETURN(HttpResponse resp, Send(method, path, body, s.id));
    if (resp.status == 401) {  // session expired or invalidated: log in again, once
      CCM_ASSIGN_OR_RETURN(s, EnsureSession(s.id));
      CCM_ASSIGN_OR_RETURN(resp, Send(method, path, body, s.id));
    }
    if (resp.status / 100 != 2) return RestError(resp.status, resp.body, what);
    absl::StatusOr<std::string> v = RestValue(resp.body);
    if (!v.ok()) return Annotate(v.status(), what);
    return v;
  }();
  if (!result.ok()) {
    absl::MutexLock l(&mu_);
    ++stats_.errors;
  }
  return result;
}

absl::StatusOr<Tag> TaggingClient::FetchTag(const std::string& tag_id) {
  CCM_ASSIGN_OR_RETURN(std::string value,
                       Call("GET", absl::StrCat(kTagPath, "/id:", PathEscape(tag_id)), ""));
  absl::StatusOr<Tag> t = ParseTag(value);
  if (!t.ok()) return Annotate(t.status(), absl::StrCat("get tag ", tag_id));
  return t;
}

absl::StatusOr<TagCategory> TaggingClient::FetchCategory(const std::string& category_id) {
  CCM_ASSIGN_OR_RETURN(
      std::string value,
      Call("GET", absl::StrCat(kCategoryPath, "/id:", PathEscape(category_id)), ""));
  absl::StatusOr<TagCategory> c = ParseCategory(value);
  if (!c.ok()) return Annotate(c.status(), absl::StrCat("get tag category ", category_id));
  return c;
}

absl::StatusOr<std::vector<TagCategory>> TaggingClient::ListCategories() {
  CCM_ASSIGN_OR_RETURN(std::string value, Call("GET", kCategoryPath, ""));
  absl::StatusOr<std::vector<std::string>> ids = ParseIdList(value);
  if (!ids.ok()) return Annotate(ids.status(), "list tag categories");
  std::vector<TagCategory> out;
  for (const std::string& id : *ids) {
    CCM_ASSIGN_OR_RETURN(TagCategory c, GetCategory(id));
    out.push_back(std::move(c));
  }
  return out;
}

absl::StatusOr<TagCategory> TaggingClient::GetCategory(const std::string& category_id) {
  {
    absl::MutexLock l(&mu_);
    if (auto it = categories_.find(category_id); it != categories_.end()) {
      ++stats_.cache_hits;
      return it->second;
    }
    ++stats_.cache_misses;
  }
  CCM_ASSIGN_OR_RETURN(TagCategory c, FetchCategory(category_id));
  absl::MutexLock l(&mu_);
  categories_[category_id] = c;
  return c;
}

absl::StatusOr<Tag> TaggingClient::GetTag(const std::string& tag_id) {
  {
    absl::MutexLock l(&mu_);
    if (auto it = tags_.find(tag_id); it != tags_.end()) {
      ++stats_.cache_hits;
      return it->second;
    }
    ++stats_.cache_misses;
  }
  CCM_ASSIGN_OR_RETURN(Tag t, FetchTag(tag_id));
  CCM_ASSIGN_OR_RETURN(TagCategory c, GetCategory(t.category_id));
  t.category_name = c.name;
  absl::MutexLock l(&mu_);
  tags_[tag_id] = t;
  return t;
}

absl::StatusOr<std::vector<ObjectTags>> TaggingClient::ListAttachedTags(
    const std::vector<Moref>& objects) {
  std::vector<ObjectTags> out;
  if (objects.empty()) return out;
  CCM_ASSIGN_OR_RETURN(std::string value,
                       Call("POST", kAttachedPath, AttachedTagsRequest(objects)));
  auto attached = ParseAttachedTags(value);
  if (!attached.ok()) return Annotate(attached.status(), "list attached tags");
  absl::flat_hash_map<Moref, std::vector<std::string>> by_object;
  for (auto& [ref, ids] : *attached) {
    auto& v = by_object[ref];
    v.insert(v.end(), ids.begin(), ids.end());
  }
  out.reserve(objects.size());
  for (const Moref& o : objects) {
    ObjectTags ot{o, {}};
    for (const std::string& id : by_object[o]) {
      absl::StatusOr<Tag> t = GetTag(id);
      if (!t.ok()) {
        return Annotate(t.status(), absl::StrCat("tags of ", o.ToString()));
      }
      ot.tags.push_back(*std::move(t));
    }
    out.push_back(std::move(ot));
  }
  return out;
}

absl::Status TaggingClient::Logout() {
  std::string id;
  {
    absl::MutexLock l(&mu_);
    id = std::move(session_.id);
    session_ = {};
  }
  if (id.empty()) return absl::OkStatus();
  CCM_ASSIGN_OR_RETURN(HttpResponse resp, Send("DELETE", kSessionPath, "", id));
  if (resp.status / 100 != 2 && resp.status != 401) {
    return RestError(resp.status, resp.body, "vAPI logout");
  }
  absl::MutexLock l(&mu_);
  ++stats_.logouts;
  return absl::OkStatus();
}

void TaggingClient::ClearCache() {
  absl::MutexLock l(&mu_);
  tags_.clear();
  categories_.clear();
}

TaggingStats TaggingClient::stats() const {
  absl::MutexLock l(&mu_);
  return stats_;
}

}  // namespace ccm::vsphere
