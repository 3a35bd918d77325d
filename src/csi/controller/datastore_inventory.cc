// DatastoreInventory: lifecycle, the refresh schedule and the published view (the refresh itself
// is datastore_refresh.cc).
#include "csi/controller/datastore_inventory.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "csi/controller/host_topology.h"

namespace ccm::csi {

DatastoreInventory::DatastoreInventory(std::vector<DatastoreSource> sources,
                                       DatastoreInventoryOptions options)
    : options_(std::move(options)),
      topology_(!CategoriesOf(options_.topology).empty()),
      clock_(options_.clock ? *options_.clock : Clock::Real()) {
  absl::MutexLock lock(&mu_);
  for (DatastoreSource& s : sources) {
    State st;
    st.ancestry = std::make_shared<vsphere::AncestryResolver>(*s.client);
    st.source = std::move(s);
    st.retry_delay = options_.retry;
    states_.push_back(std::move(st));
  }
}

DatastoreInventory::~DatastoreInventory() { Stop(); }

void DatastoreInventory::Start() {
  std::vector<vsphere::ChangeWatcher*> watchers;
  {
    absl::MutexLock lock(&mu_);
    if (thread_.joinable() || stop_) return;
    thread_ = std::thread([this] { Run(); });
    if (!options_.watch) return;
    for (const State& st : states_) {
      watchers_.push_back(std::make_unique<vsphere::ChangeWatcher>(
          *st.source.client, WatcherOptions(st.source.vcenter),
          [this](const std::set<std::string>& types) {
            NoteInventoryChange(types.contains("HostSystem"));
          }));
      watchers.push_back(watchers_.back().get());
    }
  }
  for (vsphere::ChangeWatcher* w : watchers) w->Start();
}

vsphere::ChangeWatcherOptions DatastoreInventory::WatcherOptions(const std::string& vcenter) const {
  vsphere::ChangeWatcherOptions o;
  o.name = absl::StrCat("datastore mounts of vCenter ", vcenter);
  o.watched = {{"Datastore",
                {"host", "summary.accessible", "summary.maintenanceMode", "parent", "customValue"},
                false},
               {"HostSystem", {"parent"}, false}};
  o.max_wait_seconds = options_.watch_max_wait_seconds;  // its backoff runs on the real clock
  return o;
}

void DatastoreInventory::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
    WakeLocked();
  }
  // Only Start() (before) and Stop() touch the watchers.
  for (auto& w : watchers_) w->Stop();
  if (thread_.joinable()) thread_.join();
}

void DatastoreInventory::WakeLocked() {
  if (wake_ != nullptr && !wake_->HasBeenNotified()) wake_->Notify();
}

std::vector<std::pair<size_t, bool>> DatastoreInventory::DueLocked(absl::Time now,
                                                                   absl::Time* next) {
  const bool full_due = now >= next_full_;
  const bool quick_due = now >= quick_due_;
  std::vector<std::pair<size_t, bool>> work;  // (vCenter, full)
  for (size_t i = 0; i < states_.size(); ++i) {
    if (full_due || now >= states_[i].retry_at) {
      work.emplace_back(i, true);
    } else if (quick_due) {
      work.emplace_back(i, false);
    }
  }
  if (full_due) next_full_ = now + options_.interval;
  if (quick_due) quick_due_ = absl::InfiniteFuture();
  *next = std::min(next_full_, quick_due_);
  for (const State& st : states_) *next = std::min(*next, st.retry_at);
  return work;
}

void DatastoreInventory::Run() {
  mu_.Lock();
  while (!stop_) {
    absl::Time next;
    std::vector<std::pair<size_t, bool>> work = DueLocked(clock_.Now(), &next);
    if (!work.empty()) {
      refreshing_ = true;
      mu_.Unlock();
      for (const auto& [i, full] : work) (void)Refresh(i, full);
      mu_.Lock();
      refreshing_ = false;
      continue;
    }
    auto wake = std::make_shared<absl::Notification>();
    wake_ = wake;
    mu_.Unlock();
    clock_.SleepUntil(next, wake.get());
    mu_.Lock();
  }
  mu_.Unlock();
}

absl::Status DatastoreInventory::RefreshNow() {
  size_t n;
  {
    absl::MutexLock lock(&mu_);
    n = states_.size();
  }
  absl::Status first;
  for (size_t i = 0; i < n; ++i) first.Update(Refresh(i, true));
  if (first.ok()) {
    absl::MutexLock lock(&mu_);
    next_full_ = clock_.Now() + options_.interval;  // the thread need not repeat it at once
  }
  return first;
}

void DatastoreInventory::Publish() {
  auto view = std::make_shared<InventorySnapshot>();
  for (const State& st : states_) {
    if (!st.loaded) {
      view->unloaded[st.source.vcenter] = std::string(st.last_error.message());
      continue;
    }
    view->datastores.insert(view->datastores.end(), st.candidates.begin(), st.candidates.end());
    view->hosts.insert(view->hosts.end(), st.hosts.begin(), st.hosts.end());
  }
  view->generation = ++stats_.generation;
  published_ = std::move(view);
}

absl::StatusOr<DatastoreInventory::SnapshotPtr> DatastoreInventory::Snapshot() const {
  absl::MutexLock lock(&mu_);
  if (published_ == nullptr || published_->unloaded.size() == states_.size()) {
    std::vector<std::string> why;
    for (const State& st : states_) why.push_back(std::string(st.last_error.message()));
    return absl::UnavailableError(
        absl::StrCat("datastore inventory not loaded yet: ", absl::StrJoin(why, "; ")));
  }
  return published_;
}

void DatastoreInventory::NoteChange(const std::string& vcenter, const std::string& url,
                                    int64_t delta_bytes) {
  absl::MutexLock lock(&mu_);
  ++stats_.changes_noted;
  for (State& st : states_) {
    if (st.source.vcenter != vcenter) continue;
    ++st.changes;
    for (DatastoreCandidate& c : st.candidates) {
      if (SameDatastoreUrl(c.url, url))
        c.free_bytes = std::max<int64_t>(0, c.free_bytes + delta_bytes);
    }
  }
  Publish();
  quick_due_ = std::min(quick_due_, clock_.Now() + options_.change_delay);
  WakeLocked();
}

void DatastoreInventory::NoteInventoryChange(bool hosts) {
  absl::MutexLock lock(&mu_);
  ++stats_.inventory_changes;
  const absl::Time due = clock_.Now() + options_.change_delay;
  if (hosts) {
    next_full_ = std::min(next_full_, due);
  } else {
    quick_due_ = std::min(quick_due_, due);
  }
  WakeLocked();
}

void DatastoreInventory::RequestFullRefresh() {
  absl::MutexLock lock(&mu_);
  next_full_ = absl::InfinitePast();
  WakeLocked();
}

std::map<std::string, absl::Status> DatastoreInventory::VCenterHealth() const {
  absl::MutexLock lock(&mu_);
  std::map<std::string, absl::Status> out;
  for (const State& st : states_) {
    out[st.source.vcenter] =
        st.loaded ? absl::OkStatus() : absl::UnavailableError(st.last_error.message());
  }
  return out;
}

absl::Status DatastoreInventory::Health() const {
  for (const auto& [vcenter, s] : VCenterHealth()) {
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

bool DatastoreInventory::WaitForLoad(absl::Duration timeout) const {
  auto loaded = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) {
    for (const State& st : states_) {
      if (!st.loaded) return false;
    }
    return true;
  };
  absl::MutexLock lock(&mu_);
  return mu_.AwaitWithTimeout(absl::Condition(&loaded), timeout);
}

bool DatastoreInventory::WaitForWatchers(absl::Duration timeout) const {
  const absl::Time deadline = absl::Now() + timeout;
  for (const auto& w : watchers_) {
    if (!w->WaitUntilWatching(std::max(absl::ZeroDuration(), deadline - absl::Now()))) return false;
  }
  return true;
}

DatastoreInventoryStats DatastoreInventory::stats() const {
  absl::MutexLock lock(&mu_);
  DatastoreInventoryStats s = stats_;
  s.idle = !refreshing_ && quick_due_ == absl::InfiniteFuture();
  return s;
}

}  // namespace ccm::csi
