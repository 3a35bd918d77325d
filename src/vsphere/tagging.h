#pragma once
// vAPI REST tagging client (the /rest endpoint of vCenter 6.5+), used to resolve zone and region
// tags of a VM's ancestors.
//
// Better than the reference (which logs in per look-up and asks one object at a time):
// - ONE REST session per vCenter, created lazily and reused for the process lifetime; re-created
//   once per call after a 401 and whenever the CredentialSource generation changes; deleted by
//   Logout() / the destructor.
// - ListAttachedTags() asks for many objects in ONE request (list-attached-tags-on-objects).
// - Tag and category names are cached; a tag or category id that is not cached is fetched once
//   (GET .../id:<id>) and then served from memory.
//
// Errors: Unauthenticated (login refused: wrong user/password), FailedPrecondition (no
// credentials known yet: we never log in with empty ones), NotFound (HTTP 404), PermissionDenied
// (403), InvalidArgument (400), Unavailable (network, 5xx, anything else), DataLoss (a 2xx answer
// that is not the JSON we expect). Messages carry the HTTP status and the vAPI error type
// ("com.vmware.vapi.std.errors.not_found"), never a credential.
// Thread-safe.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "common/http_client.h"
#include "vsphere/credential_source.h"
#include "vsphere/moref.h"

namespace ccm::vsphere {

struct TaggingOptions {
  // The configured vCenter address, used to ask the CredentialSource.
  std::string server;
  // "https://host:port" (a trailing "/sdk" or "/" is ignored, so the SOAP URL works too).
  std::string url;
  // The same TLS options as the SOAP client. Ignored when an HttpClient is passed in.
  HttpClientOptions http;
};

struct TagCategory {
  std::string id;
  std::string name;
  std::string cardinality;  // "SINGLE" / "MULTIPLE"
};

struct Tag {
  std::string id;
  std::string name;
  std::string category_id;
  std::string category_name;
};

struct ObjectTags {
  Moref object;
  std::vector<Tag> tags;  // in the order vCenter listed them
};

struct TaggingStats {
  uint64_t logins = 0;
  uint64_t logouts = 0;
  uint64_t requests = 0;  // every REST request sent, logins included
  uint64_t cache_hits = 0;
  uint64_t cache_misses = 0;
  uint64_t errors = 0;
};

class TaggingClient {
 public:
  // `credentials` must outlive the client. `http` may be shared with the SOAP client (same TLS
  // options); when null the client creates its own from `options.http`.
  TaggingClient(TaggingOptions options, const CredentialSource& credentials,
                std::shared_ptr<HttpClient> http = nullptr);
  ~TaggingClient();  // Logout(), best effort
  // Bounds every request from now on (HttpClient::SetDeadline), for a process that stops.
  void SetDeadline(absl::Time deadline) { http_->SetDeadline(deadline); }
  TaggingClient(const TaggingClient&) = delete;
  TaggingClient& operator=(const TaggingClient&) = delete;

  // Tags attached to each object, with their category names, in ONE batch request (plus a
  // look-up per tag or category not seen before). The result has one entry per requested object,
  // in the same order; objects vCenter does not know have no tags.
  absl::StatusOr<std::vector<ObjectTags>> ListAttachedTags(const std::vector<Moref>& objects);

  // Every tag category of the vCenter: one list request, then a look-up per category not seen
  // before.
  absl::StatusOr<std::vector<TagCategory>> ListCategories();

  // Cached look-ups (fetched on a miss).
  absl::StatusOr<Tag> GetTag(const std::string& tag_id);
  absl::StatusOr<TagCategory> GetCategory(const std::string& category_id);

  // Deletes the REST session, if any. The next call logs in again.
  absl::Status Logout();
  // Forgets cached tags and categories (e.g. after a long resync).
  void ClearCache();

  TaggingStats stats() const;

 private:
  struct Session {
    std::string id;
    uint64_t generation = 0;
  };
  // Sends a request with the session header, logging in first when needed and once more after
  // a 401. Returns the parsed "value" of a 2xx answer (null when absent).
  absl::StatusOr<std::string> Call(const std::string& method, const std::string& path,
                                   const std::string& body);
  absl::StatusOr<Session> EnsureSession(const std::string& stale_id);
  absl::StatusOr<HttpResponse> Send(const std::string& method, const std::string& path,
                                    const std::string& body, const std::string& session_id);
  absl::StatusOr<Tag> FetchTag(const std::string& tag_id);
  absl::StatusOr<TagCategory> FetchCategory(const std::string& category_id);

  const TaggingOptions options_;
  const CredentialSource& credentials_;
  std::shared_ptr<HttpClient> http_;
  std::string base_;  // "https://host:port/rest"

  absl::Mutex login_mu_;  // serialises logins so concurrent callers share one session
  mutable absl::Mutex mu_;
  Session session_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, Tag> tags_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, TagCategory> categories_ ABSL_GUARDED_BY(mu_);
  TaggingStats stats_ ABSL_GUARDED_BY(mu_);
};

// ---- Pure JSON helpers (exposed for table tests) ----
// The "value" of a /rest answer, re-serialised ("null" when absent). DataLoss on bad JSON.
absl::StatusOr<std::string> RestValue(absl::string_view body);
// Request body for list-attached-tags-on-objects.
std::string AttachedTagsRequest(const std::vector<Moref>& objects);
// Parses the "value" of list-attached-tags-on-objects: object -> tag ids.
absl::StatusOr<std::vector<std::pair<Moref, std::vector<std::string>>>> ParseAttachedTags(
    absl::string_view value_json);
absl::StatusOr<Tag> ParseTag(absl::string_view value_json);
absl::StatusOr<TagCategory> ParseCategory(absl::string_view value_json);
// Parses the "value" of the category (or tag) list: the IDs.
absl::StatusOr<std::vector<std::string>> ParseIdList(absl::string_view value_json);
// "HTTP 404 (com.vmware.vapi.std.errors.not_found: messages...)" mapped to a status code.
absl::Status RestError(int http_status, absl::string_view body, absl::string_view what);

}  // namespace ccm::vsphere
