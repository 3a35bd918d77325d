#pragma once
// The Kubernetes API client. Objects are nlohmann::json kept whole, so an update sends back every
// field another controller wrote (read-modify-write never drops unknown fields).
//
// `Client` is the interface controllers, the informer, leader election and the event recorder use;
// `RestClient` is the HTTP implementation (rate limited, retries 429 with Retry-After). Tests of
// code above this layer may implement `Client` with a fake.
//
// Errors: see errors.h (IsNotFoundError, IsConflict, IsGone, RetryAfter, ...). Thread-safe.

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "common/http_client.h"
#include "kube/config.h"
#include "kube/errors.h"
#include "kube/rate_limiter.h"  // TokenBucket
#include "kube/resource.h"
#include "nlohmann/json.hpp"

namespace ccm::kube {

struct KeepRule;  // object_scan.h

using Json = nlohmann::json;

struct ListOptions {
  std::string label_selector;
  std::string field_selector;
  int64_t limit = 0;             // page size; 0 = server default (everything)
  std::string continue_token;    // from the previous page
  std::string resource_version;  // "" = most recent (quorum read)
};

struct ListResult {
  std::vector<Json> items;
  std::string resource_version;  // of the list: watch from here
  std::string continue_token;    // "" on the last page
};

enum class WatchEventType { kAdded, kModified, kDeleted, kBookmark, kError };
absl::string_view WatchEventTypeName(WatchEventType t);

struct WatchEvent {
  WatchEventType type;
  Json object;  // the object; for kError a metav1.Status
};

struct WatchOptions {
  std::string label_selector;
  std::string field_selector;
  std::string resource_version;  // resume point (events after this version)
  bool allow_bookmarks = true;
  int64_t timeout_seconds = 0;  // server-side end of the watch; 0 = server default
  // When set, each event's object is parsed under this rule (object_scan.h): what it does not
  // keep is skipped, not built.
  const KeepRule* keep = nullptr;
};

enum class PatchType { kMerge, kStrategicMerge, kJson };
absl::string_view PatchContentType(PatchType t);

struct DeleteOptions {
  std::string precondition_uid;               // delete only this incarnation
  std::string precondition_resource_version;  // delete only this version
  std::optional<int64_t> grace_period_seconds;
  std::string propagation_policy;  // "Foreground", "Background", "Orphan" or ""
};

class Client {
 public:
  virtual ~Client() = default;

  // `ns` is ignored for cluster-scoped resources; for namespaced ones List/Watch with ns ""
  // span all namespaces.
  virtual absl::StatusOr<Json> Get(const Resource& r, absl::string_view ns,
                                   absl::string_view name) = 0;
  // One page (honours limit/continue).
  virtual absl::StatusOr<ListResult> List(const Resource& r, absl::string_view ns,
                                          const ListOptions& opts) = 0;
  // Streams events to `on_event` until the server ends the watch (OK), `on_event` returns false
  // (OK), `cancel` becomes true (Cancelled), or an error: the connection fails, or an ERROR
  // event arrives (returned as its Status: 410 -> IsGone). BOOKMARK events are delivered too.
  // Each event is the callee's to change: it may move the object out instead of copying it.
  virtual absl::Status Watch(const Resource& r, absl::string_view ns, const WatchOptions& opts,
                             const std::function<bool(WatchEvent&)>& on_event,
                             const std::atomic<bool>* cancel) = 0;
  // POST; returns the created object.
  virtual absl::StatusOr<Json> Create(const Resource& r, absl::string_view ns, const Json& obj) = 0;
  // PUT of the whole object (name and namespace from obj.metadata). A resourceVersion in the
  // object makes it conditional: stale -> IsConflict. `subresource` may be "status".
  virtual absl::StatusOr<Json> Update(const Resource& r, const Json& obj,
                                      absl::string_view subresource = "") = 0;
  // PATCH; `subresource` may be "status".
  virtual absl::StatusOr<Json> Patch(const Resource& r, absl::string_view ns,
                                     absl::string_view name, PatchType type, const Json& patch,
                                     absl::string_view subresource = "") = 0;
  virtual absl::Status Delete(const Resource& r, absl::string_view ns, absl::string_view name,
                              const DeleteOptions& opts = DeleteOptions()) = 0;

  // Create and Patch for a caller that needs only the identity of what was stored:
  // {"metadata": {name, namespace, uid, resourceVersion}} (ScanMetadata). The REST client reads
  // the answer only up to the end of its metadata instead of parsing the whole object.
  virtual absl::StatusOr<Json> CreateForIdentity(const Resource& r, absl::string_view ns,
                                                 const Json& obj);
  virtual absl::StatusOr<Json> PatchForIdentity(const Resource& r, absl::string_view ns,
                                                absl::string_view name, PatchType type,
                                                const Json& patch,
                                                absl::string_view subresource = "");
  // Patch for a caller that needs the stored object but not its top-level status (a Node's
  // status is most of its answer) nor metadata.managedFields: the REST client does not build
  // them (ParseWithoutStatus).
  virtual absl::StatusOr<Json> PatchWithoutStatus(const Resource& r, absl::string_view ns,
                                                  absl::string_view name, PatchType type,
                                                  const Json& patch,
                                                  absl::string_view subresource = "");

  // Follows `continue` until the last page. The result's resource_version is the first page's
  // (the consistent snapshot). A 410 on a continue token (expired) is returned as IsGone.
  // `each`, when set, runs on every item as its page arrives, before the next page is read, and
  // may change or take the item (what it leaves is returned): trimming or packing items there
  // keeps one page of full objects in memory instead of the whole list.
  absl::StatusOr<ListResult> ListAll(const Resource& r, absl::string_view ns, ListOptions opts,
                                     const std::function<void(Json&)>& each = nullptr);
  absl::StatusOr<Json> UpdateStatus(const Resource& r, const Json& obj) {
    return Update(r, obj, "status");
  }
  // Default namespace of the configuration (in-cluster: the Pod's namespace).
  virtual std::string DefaultNamespace() const { return "default"; }
  // GET /version: {"major", "minor", "gitVersion", ...}. Unimplemented unless a server answers.
  virtual absl::StatusOr<Json> ServerVersion() {
    return absl::UnimplementedError("this client reads no server version");
  }
};

struct RestClientOptions {
  Clock* clock = nullptr;  // null = the real clock (rate limiter, Retry-After sleeps)
  int max_retries = 5;     // for 429 / 503 with Retry-After (also a watch request's answer)
  absl::Duration max_retry_after = absl::Seconds(30);  // cap on one server-requested wait
  // Called from any thread after each request but a watch, with its HTTP method and the time
  // from sending it to its whole answer (client-go's rest_client_request_duration_seconds), and
  // after each wait for the client-side rate limiter, zero included (its
  // rest_client_rate_limiter_duration_seconds). Null: not measured.
  std::function<void(absl::string_view method, absl::Duration took)> on_request;
  std::function<void(absl::string_view method, absl::Duration waited)> on_rate_limiter_wait;
};

// One client per user, as client-go's ClientBuilder.ClientOrDie(name) gives every controller:
// New() makes the root; WithOwnRateLimit(name) makes a cheap view of it that shares the HTTP
// connection pool, TLS set-up, credentials (token file cache) and request counter, but has its
// own token bucket (config().qps / config().burst, full at creation) and sends the User-Agent
// "<root's>/<name>". So --kube-api-qps/--kube-api-burst are a budget per controller, as for the
// Go binary, and one busy user (Events, an informer relisting) never delays another.
class RestClient final : public Client {
 public:
  // Validates the config (server URL) and sets up TLS. Does not contact the server.
  static absl::StatusOr<std::unique_ptr<RestClient>> New(const Config& config,
                                                         RestClientOptions options = {});
  ~RestClient() override;

  // A view with its own rate-limit budget and the User-Agent suffix "/<name>" (e.g.
  // "node-controller"). The view may outlive this client. A few hundred bytes per view.
  std::unique_ptr<RestClient> WithOwnRateLimit(absl::string_view name) const;

  absl::StatusOr<Json> Get(const Resource& r, absl::string_view ns,
                           absl::string_view name) override;
  absl::StatusOr<ListResult> List(const Resource& r, absl::string_view ns,
                                  const ListOptions& opts) override;
  absl::Status Watch(const Resource& r, absl::string_view ns, const WatchOptions& opts,
                     const std::function<bool(WatchEvent&)>& on_event,
                     const std::atomic<bool>* cancel) override;
  absl::StatusOr<Json> Create(const Resource& r, absl::string_view ns, const Json& obj) override;
  absl::StatusOr<Json> Update(const Resource& r, const Json& obj,
                              absl::string_view subresource = "") override;
  absl::StatusOr<Json> Patch(const Resource& r, absl::string_view ns, absl::string_view name,
                             PatchType type, const Json& patch,
                             absl::string_view subresource = "") override;
  absl::Status Delete(const Resource& r, absl::string_view ns, absl::string_view name,
                      const DeleteOptions& opts = DeleteOptions()) override;
  absl::StatusOr<Json> CreateForIdentity(const Resource& r, absl::string_view ns,
                                         const Json& obj) override;
  absl::StatusOr<Json> PatchForIdentity(const Resource& r, absl::string_view ns,
                                        absl::string_view name, PatchType type, const Json& patch,
                                        absl::string_view subresource = "") override;
  absl::StatusOr<Json> PatchWithoutStatus(const Resource& r, absl::string_view ns,
                                          absl::string_view name, PatchType type, const Json& patch,
                                          absl::string_view subresource = "") override;
  std::string DefaultNamespace() const override { return config_.default_namespace; }
  absl::StatusOr<Json> ServerVersion() override;

  const Config& config() const { return config_; }
  // For a process that stops (issue 43): every request of the root and its views ends by
  // `deadline` (HttpClient::SetDeadline), watches included; later ones fail at once.
  void SetDeadline(absl::Time deadline);
  // Number of HTTP requests sent (including retries) by the root and all its views together;
  // for tests and the rest_client_requests_sent metric.
  int64_t requests_sent() const { return requests_sent_.load(); }
  // The same, by this client (root or view) alone.
  int64_t own_requests_sent() const { return own_requests_sent_.load(); }
  const std::string& user_agent() const { return user_agent_; }

 private:
  struct Shared;  // what the root and its views share
  RestClient(std::shared_ptr<Shared> shared, std::string user_agent);
  struct Call;
  absl::StatusOr<HttpResponse> Send(const Call& call);
  absl::StatusOr<Json> SendForObject(const Call& call);
  absl::StatusOr<Json> SendForIdentity(const Call& call);
  Call CreateCall(const Resource& r, absl::string_view ns, const Json& obj) const;
  Call PatchCall(const Resource& r, absl::string_view ns, absl::string_view name, PatchType type,
                 const Json& patch, absl::string_view subresource) const;
  std::vector<Header> RequestHeaders();     // auth, User-Agent of a view
  void Throttle(absl::string_view method);  // client-side QPS/burst
  void CountRequest();

  std::shared_ptr<Shared> shared_;
  // Aliases into *shared_.
  const Config& config_;
  const RestClientOptions& options_;
  Clock* const clock_;
  const std::string& base_url_;  // scheme://host:port (host replaced by tls_server_name if set)
  HttpClient* const http_;
  std::atomic<int64_t>& requests_sent_;
  // This client's own.
  const std::string user_agent_;
  const bool send_user_agent_;  // views only: the root's is the HTTP client's default
  TokenBucket limiter_;
  std::atomic<int64_t> own_requests_sent_{0};
};

}  // namespace ccm::kube
