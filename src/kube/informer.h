#pragma once
// Informer: client-go's reflector + thread-safe store + event handlers for one resource.
//
// A background thread LISTs (paged) and then WATCHes from the list's resourceVersion, applying
// every event to the store and then calling the handlers. Semantics that matter to controllers:
// - A dropped watch connection resumes from the last seen resourceVersion (bookmarks included):
//   no event is missed or delivered twice.
// - 410 Gone (or any ERROR event / API error on the watch but 429) relists. The relist replaces
//   the store like client-go's Replace: objects still present get update(old, new), new ones
//   add, and objects missing from the new list get delete(last known state). A 429 (after the
//   client's own Retry-After retries) backs off and watches again, like a dropped connection.
// - Failed list/watch attempts back off (ccm::BackoffDelay on the injected Clock).
// - Handlers run on the informer's threads, one at a time, OUTSIDE the store lock (they may call
//   Get/List); they must not block for long and must not call AddEventHandler or
//   RemoveEventHandler.
// - RemoveEventHandler(handle) returns only when that handler is not running, and it is never
//   called again: an object whose methods a handler calls removes it in its destructor.
// - Periodic resync (if resync_period > 0): every handler gets update(obj, obj) for every object.
// - HasSynced() turns true once the first list has been delivered to the handlers.
// Objects are shared immutable JSON (std::shared_ptr<const Json>): copy before modifying.
// Memory (a Node cache is most of a controller's heap): `transform` trims every object before it
// is stored or handed out (client-go's TransformFunc), and `compact_store` keeps stored objects
// as CBOR bytes (about a quarter of nlohmann::json's in-memory size); Get/List/handlers then get
// a freshly decoded copy, so pointer identity between calls is not kept. A list is trimmed and
// packed page by page, and its deltas are decoded one object at a time as handlers get them.
// The `hot_objects` objects the watch changed last stay decoded: the objects being worked on (a
// Node a controller reads right after its event, whose next event hands it out again as the old
// object) are not encoded and decoded at every step.

#include <atomic>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/btree_set.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "common/backoff.h"
#include "common/clock.h"
#include "common/random.h"
#include "kube/client.h"

namespace ccm::kube {

using ObjectPtr = std::shared_ptr<const Json>;

struct ResourceEventHandler {
  std::function<void(const Json& obj)> on_add;
  std::function<void(const Json& old_obj, const Json& new_obj)> on_update;
  std::function<void(const Json& obj)> on_delete;  // the last known state
};

struct InformerOptions {
  std::string ns;  // "" = all namespaces (or cluster-scoped)
  std::string label_selector;
  std::string field_selector;
  absl::Duration resync_period = absl::ZeroDuration();  // zero: no resync
  int64_t page_size = 500;
  int64_t watch_timeout_seconds = 300;  // the server ends each watch; we start the next one
  BackoffPolicy backoff{absl::Milliseconds(800), absl::Seconds(30), 2.0, 0.1};
  Clock* clock = nullptr;    // null: real clock
  Random* random = nullptr;  // null: real randomness (jitter)
  // Applied to every listed or watched object before anything else sees it (e.g. drop fields no
  // handler reads). Must keep metadata.name/namespace/resourceVersion.
  std::function<void(Json& obj)> transform;
  // Parse rule for watched objects (WatchOptions::keep), consistent with `transform`: what the
  // transform would drop is not built in the first place.
  const KeepRule* keep = nullptr;
  bool compact_store = false;  // keep stored objects CBOR-encoded (see above)
  size_t hot_objects = 128;    // with compact_store: how many recently watched stay decoded
  // A 403 on the list or the watch ends the informer (Forbidden() turns true) instead of
  // relisting with backoff: for a cache its user can do without (reading the server instead),
  // where relisting every object over and over would cost more than it saves.
  bool stop_when_forbidden = false;
};

namespace internal {
// A stored object: either shared JSON or, with compact_store, its CBOR encoding.
struct StoredObject {
  ObjectPtr obj;
  std::string cbor;
  uint64_t hot = 0;  // compact_store: decoded for now, under this number in the hot queue
};
ObjectPtr Unpack(const StoredObject& s);  // the object (decoded when CBOR); null when empty
}  // namespace internal

class Informer {
 public:
  Informer(Client& client, Resource resource, InformerOptions options);
  ~Informer();  // Stop()
  Informer(const Informer&) = delete;
  Informer& operator=(const Informer&) = delete;

  using HandlerId = int64_t;
  // Handlers added after the informer has synced first get on_add for every cached object.
  HandlerId AddEventHandler(ResourceEventHandler handler);
  // Waits for a running dispatch to finish; unknown ids are ignored.
  void RemoveEventHandler(HandlerId id);
  void Start();  // idempotent
  void Stop();   // ends the threads; idempotent

  bool HasSynced() const;
  // Synced, and its watch has not failed since it last heard from the server: the store is as
  // current as a watch makes it. After a failed watch it turns true again with the next event
  // (a bookmark included) or list. For a caller that can read the server instead when it is not.
  bool Fresh() const;
  bool Forbidden() const;  // stop_when_forbidden: ended by a 403
  // Blocks (real time) until synced or `timeout`; false on timeout or stop.
  bool WaitForSync(absl::Duration timeout) const;

  // Store access. Key: "namespace/name", or "name" for cluster-scoped objects (ObjectKey()).
  ObjectPtr Get(const std::string& key) const;
  std::vector<ObjectPtr> List() const;
  // The keys of every stored object: walk a big compact store with Keys() + Get() to decode one
  // object at a time instead of all at once.
  std::vector<std::string> Keys() const;
  size_t Size() const;
  std::string LastResourceVersion() const;

  // A selection: the keys of the stored objects `pred` holds for, kept up to date with the store
  // under its lock (client-go's indexers, for one yes/no question), so a reader never sees the
  // store ahead of it: a controller that acts on a few objects of a big cache (the NotReady
  // Nodes) visits those without decoding the others. `pred` sees each object as stored (after
  // `transform`) whenever it is stored; it must be cheap and must not call the informer.
  // Adding one evaluates it on the objects stored so far (each decoded once).
  using SelectionId = int64_t;
  SelectionId AddSelection(std::function<bool(const Json&)> pred);
  void RemoveSelection(SelectionId id);                     // unknown ids are ignored
  std::vector<std::string> Selected(SelectionId id) const;  // sorted; empty for unknown ids

  const Resource& resource() const { return resource_; }
  // Counters for tests and metrics.
  int64_t lists() const { return lists_.load(); }
  int64_t watches() const { return watches_.load(); }

 private:
  using Stored = internal::StoredObject;
  Stored Pack(ObjectPtr obj) const;

  void Run();
  void ResyncLoop();
  absl::Status ListAndReplace();
  // Applies one watch event to the store and dispatches it; returns false to stop the watch.
  bool HandleEvent(WatchEvent& ev);  // takes the object
  // Stores a watched object; with compact_store it stays decoded while it is among the last
  // hot_objects ones. Returns the previous state (empty when new).
  Stored Put(const std::string& key, ObjectPtr obj) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Encodes the objects that left the hot queue (outside the store lock).
  void PackCold() ABSL_LOCKS_EXCLUDED(mu_);
  bool Sleep(absl::Duration d);
  bool GiveUp(const absl::Status& s);

  Client& client_;
  const Resource resource_;
  const InformerOptions options_;
  Clock& clock_;
  Random& random_;

  mutable absl::Mutex mu_;  // the store
  absl::flat_hash_map<std::string, Stored> store_ ABSL_GUARDED_BY(mu_);
  std::string last_rv_ ABSL_GUARDED_BY(mu_);
  // compact_store: the keys stored decoded, oldest first, with their StoredObject::hot number
  // (an entry whose object changed since is stale and skipped).
  std::deque<std::pair<std::string, uint64_t>> hot_ ABSL_GUARDED_BY(mu_);
  uint64_t hot_seq_ ABSL_GUARDED_BY(mu_) = 0;
  struct Selection {
    std::function<bool(const Json&)> pred;
    absl::btree_set<std::string> keys;
  };
  absl::flat_hash_map<SelectionId, Selection> selections_ ABSL_GUARDED_BY(mu_);
  SelectionId next_selection_ ABSL_GUARDED_BY(mu_) = 1;
  // Updates every selection for `key`, now `obj` (null: deleted).
  void Select(const std::string& key, const Json* obj) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // A relist's selections: each one's predicate (copied), and the listed keys it holds for.
  using SelectedKeys = absl::flat_hash_map<SelectionId, Selection>;
  SelectedKeys SelectionsNow() const ABSL_LOCKS_EXCLUDED(mu_);
  // The keys of the stored objects `pred` holds for (each decoded once).
  absl::btree_set<std::string> StoredWhere(const std::function<bool(const Json&)>& pred) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // After a relist replaced the store: the selections as `listed` found them.
  void ReplaceSelections(SelectedKeys listed) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool synced_ ABSL_GUARDED_BY(mu_) = false;

  // Serialises handler calls (reflector, resync, late AddEventHandler) so each handler sees
  // events in order, one at a time. mu_ is only taken briefly inside it, never across a handler.
  absl::Mutex dispatch_mu_ ABSL_ACQUIRED_BEFORE(mu_);
  std::vector<std::pair<HandlerId, ResourceEventHandler>> handlers_ ABSL_GUARDED_BY(dispatch_mu_);
  HandlerId next_handler_ ABSL_GUARDED_BY(dispatch_mu_) = 1;

  absl::Mutex lifecycle_mu_;
  bool started_ ABSL_GUARDED_BY(lifecycle_mu_) = false;
  // Stopped: stop_ wakes the clock sleeps; cancel_ is the same fact in the form Client::Watch
  // takes. Stop() sets both, nothing else does.
  absl::Notification stop_;
  std::atomic<bool> cancel_{false};
  std::thread reflector_;
  std::thread resync_;
  std::atomic<int64_t> lists_{0};
  std::atomic<int64_t> watches_{0};
  std::atomic<bool> fresh_{false};
  std::atomic<bool> forbidden_{false};
};

// One informer per (resource, namespace, selectors), shared by every controller that asks.
class SharedInformerFactory {
 public:
  // `defaults` supply resync period, page size, backoff, clock and random for every informer.
  SharedInformerFactory(Client& client, InformerOptions defaults = {});
  ~SharedInformerFactory();  // stops all

  // Returns the informer for this resource and scope, creating it on first use. Informers
  // created after Start() are started at once.
  Informer& For(const Resource& resource, const std::string& ns = "",
                const std::string& label_selector = "", const std::string& field_selector = "");
  void Start();
  void Stop();
  // Waits (real time) until every informer created so far has synced.
  bool WaitForSync(absl::Duration timeout);

 private:
  Client& client_;
  const InformerOptions defaults_;
  absl::Mutex mu_;
  bool started_ ABSL_GUARDED_BY(mu_) = false;
  std::map<std::string, std::unique_ptr<Informer>> informers_ ABSL_GUARDED_BY(mu_);
};

}  // namespace ccm::kube
