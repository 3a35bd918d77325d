#include "kube/informer.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/logging.h"
#include "kube/errors.h"
#include "kube/objects.h"

namespace ccm::kube {
namespace {

using internal::StoredObject;
using internal::Unpack;

// One store change to hand to the handlers after the store lock is released. Objects stay in
// their stored form (CBOR with compact_store) until their handlers run: a list of thousands is
// never decoded all at once.
struct Delta {
  enum Kind { kAdd, kUpdate, kDelete } kind;
  StoredObject old_obj;
  StoredObject obj;
};

const ResourceEventHandler& Unwrap(const ResourceEventHandler& h) { return h; }
template <typename Id>
const ResourceEventHandler& Unwrap(const std::pair<Id, ResourceEventHandler>& e) {
  return e.second;
}

template <typename Handlers>
void Dispatch(const Handlers& handlers, const std::vector<Delta>& ds) {
  for (const Delta& d : ds) {
    const ObjectPtr obj = Unpack(d.obj);
    const ObjectPtr old_obj = d.kind == Delta::kUpdate ? Unpack(d.old_obj) : nullptr;
    for (const auto& entry : handlers) {
      const ResourceEventHandler& h = Unwrap(entry);
      switch (d.kind) {
        case Delta::kAdd:
          if (h.on_add) h.on_add(*obj);
          break;
        case Delta::kUpdate:
          if (h.on_update) h.on_update(*old_obj, *obj);
          break;
        case Delta::kDelete:
          if (h.on_delete) h.on_delete(*obj);
          break;
      }
    }
  }
}

}  // namespace

Informer::Informer(Client& client, Resource resource, InformerOptions options)
    : client_(client),
      resource_(std::move(resource)),
      options_(std::move(options)),
      clock_(options_.clock != nullptr ? *options_.clock : Clock::Real()),
      random_(options_.random != nullptr ? *options_.random : Random::Real()) {}

Informer::~Informer() { Stop(); }

Informer::Stored Informer::Pack(ObjectPtr obj) const {
  if (!options_.compact_store) return {std::move(obj), {}};
  Stored s;
  Json::to_cbor(*obj, s.cbor);
  s.cbor.shrink_to_fit();
  return s;
}

ObjectPtr internal::Unpack(const StoredObject& s) {
  if (s.obj) return s.obj;
  if (s.cbor.empty()) return nullptr;
  // Our own encoding of a JSON value: it always decodes.
  return std::make_shared<const Json>(Json::from_cbor(s.cbor));
}

Informer::HandlerId Informer::AddEventHandler(ResourceEventHandler handler) {
  absl::MutexLock d(&dispatch_mu_);
  std::vector<Delta> existing;
  {
    absl::MutexLock l(&mu_);
    for (const auto& [k, obj] : store_) existing.push_back({Delta::kAdd, {}, obj});
  }
  Dispatch(std::vector<ResourceEventHandler>{handler}, existing);
  HandlerId id = next_handler_++;
  handlers_.emplace_back(id, std::move(handler));
  return id;
}

void Informer::RemoveEventHandler(HandlerId id) {
  // dispatch_mu_ is held for every dispatch: once we have it, the handler is not running.
  absl::MutexLock d(&dispatch_mu_);
  std::erase_if(handlers_, [id](const auto& e) { return e.first == id; });
}

void Informer::Start() {
  absl::MutexLock l(&lifecycle_mu_);
  if (started_ || stop_.HasBeenNotified()) return;
  started_ = true;
  reflector_ = std::thread([this] { Run(); });
  if (options_.resync_period > absl::ZeroDuration()) {
    resync_ = std::thread([this] { ResyncLoop(); });
  }
}

void Informer::Stop() {
  absl::MutexLock l(&lifecycle_mu_);
  if (!stop_.HasBeenNotified()) stop_.Notify();
  cancel_.store(true);
  // Releasing mu_ makes WaitForSync's waiters re-evaluate their condition, which reads stop_.
  { absl::MutexLock s(&mu_); }
  if (reflector_.joinable()) reflector_.join();
  if (resync_.joinable()) resync_.join();
}

bool Informer::HasSynced() const {
  absl::MutexLock l(&mu_);
  return synced_;
}

bool Informer::Fresh() const { return fresh_.load() && HasSynced(); }

bool Informer::Forbidden() const { return forbidden_.load(); }

bool Informer::WaitForSync(absl::Duration timeout) const {
  absl::MutexLock l(&mu_);
  auto done = [this]()
                  ABSL_SHARED_LOCKS_REQUIRED(mu_) { return synced_ || stop_.HasBeenNotified(); };
  mu_.AwaitWithTimeout(absl::Condition(&done), timeout);
  return synced_;
}

ObjectPtr Informer::Get(const std::string& key) const {
  absl::MutexLock l(&mu_);
  auto it = store_.find(key);
  return it == store_.end() ? nullptr : Unpack(it->second);
}

std::vector<ObjectPtr> Informer::List() const {
  absl::MutexLock l(&mu_);
  std::vector<ObjectPtr> out;
  out.reserve(store_.size());
  for (const auto& [k, v] : store_) out.push_back(Unpack(v));
  return out;
}

std::vector<std::string> Informer::Keys() const {
  absl::MutexLock l(&mu_);
  std::vector<std::string> out;
  out.reserve(store_.size());
  for (const auto& [k, v] : store_) out.push_back(k);
  return out;
}

size_t Informer::Size() const {
  absl::MutexLock l(&mu_);
  return store_.size();
}

std::string Informer::LastResourceVersion() const {
  absl::MutexLock l(&mu_);
  return last_rv_;
}

Informer::SelectionId Informer::AddSelection(std::function<bool(const Json&)> pred) {
  absl::MutexLock l(&mu_);
  Selection sel{std::move(pred), {}};
  sel.keys = StoredWhere(sel.pred);
  const SelectionId id = next_selection_++;
  selections_.emplace(id, std::move(sel));
  return id;
}

void Informer::RemoveSelection(SelectionId id) {
  absl::MutexLock l(&mu_);
  selections_.erase(id);
}

std::vector<std::string> Informer::Selected(SelectionId id) const {
  absl::MutexLock l(&mu_);
  auto it = selections_.find(id);
  if (it == selections_.end()) return {};
  return {it->second.keys.begin(), it->second.keys.end()};
}

Informer::SelectedKeys Informer::SelectionsNow() const {
  absl::MutexLock l(&mu_);
  SelectedKeys out;
  for (const auto& [id, sel] : selections_) out[id] = Selection{sel.pred, {}};
  return out;
}

void Informer::ReplaceSelections(SelectedKeys listed) {
  for (auto& [id, sel] : selections_) {
    if (auto it = listed.find(id); it != listed.end()) {
      sel.keys = std::move(it->second.keys);
      continue;
    }
    sel.keys = StoredWhere(sel.pred);  // added while the list was read: the new store's
  }
}

absl::btree_set<std::string> Informer::StoredWhere(
    const std::function<bool(const Json&)>& pred) const {
  absl::btree_set<std::string> keys;
  for (const auto& [key, stored] : store_) {
    if (pred(*Unpack(stored))) keys.insert(key);
  }
  return keys;
}

void Informer::Select(const std::string& key, const Json* obj) {
  for (auto& [id, sel] : selections_) {
    if (obj != nullptr && sel.pred(*obj)) {
      sel.keys.insert(key);
    } else {
      sel.keys.erase(key);
    }
  }
}

// stop_when_forbidden and a 403: the loop ends, saying so once.
bool Informer::GiveUp(const absl::Status& s) {
  if (!options_.stop_when_forbidden || !IsForbidden(s)) return false;
  fresh_ = false;
  forbidden_ = true;
  LOG_WARN("informer {}: {}; not watching them (its user reads the API server instead)",
           resource_.plural, s);
  return true;
}

bool Informer::Sleep(absl::Duration d) { return clock_.SleepFor(d, &stop_); }

absl::Status Informer::ListAndReplace() {
  ListOptions lo;
  lo.label_selector = options_.label_selector;
  lo.field_selector = options_.field_selector;
  lo.limit = options_.page_size;
  lists_.fetch_add(1);
  // Each item trimmed and packed as its page arrives: a big list never holds every full object,
  // nor (compact_store) every decoded one, at once.
  std::vector<std::pair<std::string, Stored>> items;
  SelectedKeys selected = SelectionsNow();  // filled while each item is still decoded
  auto list = client_.ListAll(resource_, options_.ns, lo, [&](Json& item) {
    if (options_.transform) options_.transform(item);
    auto obj = std::make_shared<const Json>(std::exchange(item, Json()));
    std::string key = ObjectKey(*obj);
    for (auto& [id, s] : selected) {
      if (s.pred(*obj)) s.keys.insert(key);
    }
    items.emplace_back(std::move(key), Pack(std::move(obj)));
  });
  if (!list.ok()) return list.status();

  absl::MutexLock d(&dispatch_mu_);
  std::vector<Delta> deltas;
  {
    absl::MutexLock l(&mu_);
    absl::flat_hash_map<std::string, Stored> next;
    next.reserve(items.size());
    for (auto& [key, stored] : items) {
      auto old = store_.find(key);
      if (old != store_.end()) {
        deltas.push_back({Delta::kUpdate, old->second, stored});
      } else {
        deltas.push_back({Delta::kAdd, {}, stored});
      }
      next[key] = std::move(stored);
    }
    for (const auto& [key, obj] : store_) {
      if (!next.contains(key)) deltas.push_back({Delta::kDelete, {}, obj});
    }
    store_ = std::move(next);
    ReplaceSelections(std::move(selected));
    hot_.clear();  // every object is listed packed
    last_rv_ = list->resource_version;
  }
  Dispatch(handlers_, deltas);
  fresh_ = true;  // before synced_: whoever WaitForSync wakes sees a fresh store
  {
    absl::MutexLock l(&mu_);
    synced_ = true;
  }
  VLOG(3, "informer {}: listed {} objects at resourceVersion {}", resource_.plural, Size(),
       LastResourceVersion());
  return absl::OkStatus();
}

bool Informer::HandleEvent(WatchEvent& ev) {
  if (cancel_.load()) return false;
  fresh_ = true;  // the watch is back (an event after a failure comes from a working watch)
  if (ev.type == WatchEventType::kBookmark) {
    std::string rv = ResourceVersion(ev.object);
    absl::MutexLock l(&mu_);
    if (!rv.empty()) last_rv_ = rv;
    return true;
  }
  if (options_.transform) options_.transform(ev.object);
  auto obj = std::make_shared<const Json>(std::move(ev.object));
  std::string key = ObjectKey(*obj);
  std::string rv = ResourceVersion(*obj);
  absl::MutexLock d(&dispatch_mu_);
  Delta delta;
  {
    absl::MutexLock l(&mu_);
    if (ev.type == WatchEventType::kDeleted) {
      store_.erase(key);
      Select(key, nullptr);
      delta = {Delta::kDelete, {}, {obj, {}}};
    } else {
      Select(key, obj.get());
      Stored old = Put(key, obj);
      const bool update = old.obj != nullptr || !old.cbor.empty();
      delta = {update ? Delta::kUpdate : Delta::kAdd, std::move(old), {obj, {}}};
    }
    if (!rv.empty()) last_rv_ = rv;
  }
  PackCold();
  Dispatch(handlers_, {delta});
  return true;
}

Informer::Stored Informer::Put(const std::string& key, ObjectPtr obj) {
  Stored& slot = store_[key];
  Stored old = std::exchange(slot, Stored{std::move(obj), {}, 0});
  if (!options_.compact_store) return old;
  slot.hot = ++hot_seq_;
  hot_.emplace_back(key, slot.hot);
  return old;
}

void Informer::PackCold() {
  if (!options_.compact_store) return;
  std::vector<std::pair<std::string, ObjectPtr>> cold;
  {
    absl::MutexLock l(&mu_);
    while (hot_.size() > options_.hot_objects) {
      auto [key, seq] = std::move(hot_.front());
      hot_.pop_front();
      auto it = store_.find(key);
      if (it != store_.end() && it->second.hot == seq) cold.emplace_back(key, it->second.obj);
    }
  }
  if (cold.empty()) return;
  std::vector<Stored> packed;
  packed.reserve(cold.size());
  for (const auto& [key, obj] : cold) packed.push_back(Pack(obj));
  absl::MutexLock l(&mu_);
  for (size_t i = 0; i < cold.size(); ++i) {
    auto it = store_.find(cold[i].first);
    // Changed or deleted meanwhile: its newer state is in the queue (or gone).
    if (it != store_.end() && it->second.obj == cold[i].second) it->second = std::move(packed[i]);
  }
}

void Informer::Run() {
  bool need_list = true;
  int failures = 0;
  while (!cancel_.load()) {
    if (need_list) {
      absl::Status s = ListAndReplace();
      if (!s.ok() && GiveUp(s)) return;
      if (!s.ok()) {
        absl::Duration d = BackoffDelay(options_.backoff, failures++, &random_);
        LOG_WARN("informer {}: list failed (retry in {}): {}", resource_.plural,
                 absl::FormatDuration(d), s);
        if (!Sleep(d)) return;
        continue;
      }
      failures = 0;
      need_list = false;
    }
    WatchOptions wo;
    wo.label_selector = options_.label_selector;
    wo.field_selector = options_.field_selector;
    wo.resource_version = LastResourceVersion();
    wo.allow_bookmarks = true;
    wo.timeout_seconds = options_.watch_timeout_seconds;
    wo.keep = options_.keep;
    watches_.fetch_add(1);
    absl::Status s = client_.Watch(
        resource_, options_.ns, wo, [this](WatchEvent& ev) { return HandleEvent(ev); }, &cancel_);
    if (cancel_.load()) return;
    if (s.ok()) {  // the server ended the watch (timeout): continue from where we are
      failures = 0;
      fresh_ = true;
      continue;
    }
    fresh_ = false;
    if (GiveUp(s)) return;
    if (IsGone(s)) {
      VLOG(2, "informer {}: {}; relisting", resource_.plural, s);
      need_list = true;
      continue;
    }
    if (HttpCode(s) != 0 && !IsTooManyRequests(s)) {
      // An ERROR event or an API error answer: the stream state is unknown; relist. Not for
      // 429 (client-go's isWatchErrorRetriable): the server only asked us to come back later,
      // so back off and watch again from last_rv_.
      need_list = true;
    }
    // Otherwise a transport failure (dropped connection): resume the watch from last_rv_.
    absl::Duration d = BackoffDelay(options_.backoff, failures++, &random_);
    LOG_WARN("informer {}: watch failed (retry in {}{}): {}", resource_.plural,
             absl::FormatDuration(d), need_list ? ", relist" : "", s);
    if (!Sleep(d)) return;
  }
}

void Informer::ResyncLoop() {
  while (Sleep(options_.resync_period)) {
    absl::MutexLock d(&dispatch_mu_);
    std::vector<Delta> deltas;
    {
      absl::MutexLock l(&mu_);
      if (!synced_) continue;
      for (const auto& [k, obj] : store_) {
        deltas.push_back({Delta::kUpdate, obj, obj});
      }
    }
    Dispatch(handlers_, deltas);
  }
}

SharedInformerFactory::SharedInformerFactory(Client& client, InformerOptions defaults)
    : client_(client), defaults_(std::move(defaults)) {}

SharedInformerFactory::~SharedInformerFactory() { Stop(); }

Informer& SharedInformerFactory::For(const Resource& resource, const std::string& ns,
                                     const std::string& label_selector,
                                     const std::string& field_selector) {
  absl::MutexLock l(&mu_);
  std::string key = absl::StrCat(resource.api_version(), "/", resource.plural, "|", ns, "|",
                                 label_selector, "|", field_selector);
  auto& slot = informers_[key];
  if (!slot) {
    InformerOptions o = defaults_;
    o.ns = ns;
    o.label_selector = label_selector;
    o.field_selector = field_selector;
    slot = std::make_unique<Informer>(client_, resource, std::move(o));
    if (started_) slot->Start();
  }
  return *slot;
}

void SharedInformerFactory::Start() {
  absl::MutexLock l(&mu_);
  started_ = true;
  for (auto& [k, inf] : informers_) inf->Start();
}

void SharedInformerFactory::Stop() {
  absl::MutexLock l(&mu_);
  for (auto& [k, inf] : informers_) inf->Stop();
}

bool SharedInformerFactory::WaitForSync(absl::Duration timeout) {
  absl::Time deadline = absl::Now() + timeout;
  std::vector<Informer*> all;
  {
    absl::MutexLock l(&mu_);
    for (auto& [k, inf] : informers_) all.push_back(inf.get());
  }
  for (Informer* inf : all) {
    if (!inf->WaitForSync(deadline - absl::Now())) return false;
  }
  return true;
}

}  // namespace ccm::kube
