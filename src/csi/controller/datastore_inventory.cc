#include "csi/controller/datastore_inventory.h"

#include <algorithm>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/logging.h"
#include "common/status_macros.h"
#include "csi/controller/host_topology.h"

namespace ccm::csi {
namespace {

std::string Describe(const vsphere::InventoryRef& r) {
  return absl::StrCat(r.ref.ToString(), " (", r.name, ")");
}

}  // namespace

DatastoreInventory::DatastoreInventory(std::vector<DatastoreSource> sources,
                                       DatastoreInventoryOptions options)
    : options_(std::move(options)), topology_(!CategoriesOf(options_.topology).empty()) {
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
  absl::MutexLock lock(&mu_);
  if (thread_.joinable() || stop_) return;
  thread_ = std::thread([this] { Run(); });
}

void DatastoreInventory::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
  }
  if (thread_.joinable()) thread_.join();
}

void DatastoreInventory::Run() {
  mu_.Lock();
  while (!stop_) {
    const absl::Time now = absl::Now();
    const bool full_due = now >= next_full_;
    const bool quick_due = now >= quick_due_;
    std::vector<std::pair<size_t, bool>> work;  // (vCenter, full)
    absl::Time deadline = std::min(next_full_, quick_due_);
    for (size_t i = 0; i < states_.size(); ++i) {
      const bool retry_due = now >= states_[i].retry_at;
      if (full_due || retry_due) {
        work.emplace_back(i, true);
      } else if (quick_due) {
        work.emplace_back(i, false);
      }
      deadline = std::min(deadline, states_[i].retry_at);
    }
    if (!work.empty()) {
      if (full_due) next_full_ = now + options_.interval;
      if (quick_due) quick_due_ = absl::InfiniteFuture();
      refreshing_ = true;
      mu_.Unlock();
      for (const auto& [i, full] : work) (void)Refresh(i, full);
      mu_.Lock();
      refreshing_ = false;
      continue;
    }
    wake_ = false;
    auto woken = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) { return wake_ || stop_; };
    mu_.AwaitWithDeadline(absl::Condition(&woken), deadline);
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
    next_full_ = absl::Now() + options_.interval;  // the thread need not repeat it at once
  }
  return first;
}

absl::Status DatastoreInventory::Refresh(size_t index, bool full) {
  absl::MutexLock refresh_lock(&refresh_mu_);
  State scratch;  // caches copied out, so look-ups are never blocked by this refresh
  uint64_t changes_before;
  {
    absl::MutexLock lock(&mu_);
    const State& st = states_[index];
    scratch.source = st.source;
    scratch.ancestry = st.ancestry;
    scratch.datacenters = st.datacenters;
    if (!full && st.loaded) {
      scratch.host_segments = st.host_segments;
      scratch.pod_names = st.pod_names;
    }
    full = full || !st.loaded;
    changes_before = st.changes;
  }
  auto fetch = [&]() -> absl::StatusOr<std::vector<DatastoreCandidate>> {
    vsphere::Client& client = *scratch.source.client;
    if (full) {
      CCM_ASSIGN_OR_RETURN(scratch.datacenters,
                           WatchedDatacenters(client, scratch.source.datacenters));
    }
    CCM_ASSIGN_OR_RETURN(std::vector<DatastoreRecord> records,
                         FetchDatastores(client, scratch.datacenters));
    std::set<vsphere::Moref> hosts, pods;
    for (const DatastoreRecord& r : records) {
      if (!r.usable) continue;
      hosts.insert(r.hosts.begin(), r.hosts.end());
      if (r.parent.type == "StoragePod") pods.insert(r.parent);
    }
    CCM_RETURN_IF_ERROR(
        FillTopology(scratch, {hosts.begin(), hosts.end()}, {pods.begin(), pods.end()}));
    std::vector<DatastoreCandidate> out;
    for (const DatastoreRecord& r : records) {
      if (!r.usable || r.url.empty()) continue;
      DatastoreCandidate c;
      c.vcenter = scratch.source.vcenter;
      c.datacenter = r.datacenter;
      c.name = r.name;
      c.url = r.url;
      c.moref = r.moref.value;
      if (auto it = scratch.pod_names.find(r.parent); it != scratch.pod_names.end()) {
        c.datastore_cluster = it->second;
      }
      c.free_bytes = r.free_bytes;
      if (topology_) {
        std::vector<std::optional<Segments>> segs;
        for (const vsphere::Moref& h : r.hosts) segs.push_back(scratch.host_segments[h]);
        c.accessible = DistinctSegments(segs);
      }
      out.push_back(std::move(c));
    }
    std::sort(out.begin(), out.end(), [](const DatastoreCandidate& a, const DatastoreCandidate& b) {
      return std::tie(a.datacenter, a.name, a.url) < std::tie(b.datacenter, b.name, b.url);
    });
    return out;
  };
  absl::StatusOr<std::vector<DatastoreCandidate>> fetched = fetch();

  absl::MutexLock lock(&mu_);
  State& st = states_[index];
  if (!fetched.ok()) {
    ++stats_.failures;
    st.last_error = absl::Status(fetched.status().code(),
                                 absl::StrCat("datastores of vCenter ", st.source.vcenter, ": ",
                                              fetched.status().message()));
    st.retry_at = absl::Now() + st.retry_delay;
    st.retry_delay = std::min(st.retry_delay * 2, options_.max_retry);
    LOG_WARN("{} (next attempt in {})", st.last_error.message(),
             absl::FormatDuration(st.retry_at - absl::Now()));
    return st.last_error;
  }
  if (!st.loaded) {
    LOG_INFO("datastore inventory of vCenter {}: {} datastores", st.source.vcenter,
             fetched->size());
  }
  st.loaded = true;
  st.last_error = absl::OkStatus();
  st.retry_at = absl::InfiniteFuture();
  st.retry_delay = options_.retry;
  st.candidates = *std::move(fetched);
  st.datacenters = std::move(scratch.datacenters);
  st.host_segments = std::move(scratch.host_segments);
  st.pod_names = std::move(scratch.pod_names);
  ++(full ? stats_.full_refreshes : stats_.quick_refreshes);
  if (st.changes != changes_before) {
    // A create or extend finished while vCenter was read: its space may be missing from this
    // answer (the cached adjustment was just replaced), so read once more soon.
    quick_due_ = std::min(quick_due_, absl::Now() + options_.change_delay);
    wake_ = true;
  }
  Publish();
  return absl::OkStatus();
}

absl::Status DatastoreInventory::FillTopology(State& scratch,
                                              const std::vector<vsphere::Moref>& hosts,
                                              const std::vector<vsphere::Moref>& pods) {
  std::vector<vsphere::Moref> wanted;
  for (const vsphere::Moref& p : pods) {
    if (!scratch.pod_names.contains(p)) wanted.push_back(p);
  }
  std::vector<vsphere::Moref> new_hosts;
  if (topology_) {
    for (const vsphere::Moref& h : hosts) {
      if (!scratch.host_segments.contains(h)) new_hosts.push_back(h);
    }
  }
  wanted.insert(wanted.end(), new_hosts.begin(), new_hosts.end());
  if (wanted.empty()) return absl::OkStatus();
  CCM_ASSIGN_OR_RETURN(auto chains, scratch.ancestry->ResolveChains(wanted));
  for (const vsphere::Moref& p : pods) {
    auto it = chains.find(p);
    if (it != chains.end() && !it->second.empty()) scratch.pod_names[p] = it->second.front().name;
  }
  if (new_hosts.empty()) return absl::OkStatus();

  // Every object of the new hosts' chains, tags fetched in one batch call.
  std::set<vsphere::Moref> objects;
  for (const vsphere::Moref& h : new_hosts) {
    for (const vsphere::InventoryRef& r : chains[h]) objects.insert(r.ref);
  }
  CCM_ASSIGN_OR_RETURN(std::vector<vsphere::ObjectTags> tags,
                       scratch.source.tagging->ListAttachedTags({objects.begin(), objects.end()}));
  std::map<vsphere::Moref, std::vector<vsphere::Tag>> tags_of;
  for (vsphere::ObjectTags& t : tags) tags_of[t.object] = std::move(t.tags);

  const TopologyCategories categories = CategoriesOf(options_.topology);
  for (const vsphere::Moref& h : new_hosts) {
    std::vector<TaggedRef> chain;
    for (const vsphere::InventoryRef& r : chains[h]) chain.push_back({Describe(r), tags_of[r.ref]});
    absl::StatusOr<std::optional<Segments>> seg = SegmentOfChain(chain, categories);
    if (!seg.ok()) {
      // One mis-tagged host must not hide every datastore: it makes none reachable.
      LOG_WARN("vCenter {}: host {}: {}", scratch.source.vcenter, h.ToString(),
               seg.status().message());
      scratch.host_segments[h] = std::nullopt;
      continue;
    }
    scratch.host_segments[h] = *seg;
  }
  return absl::OkStatus();
}

void DatastoreInventory::Publish() {
  auto all = std::make_shared<std::vector<DatastoreCandidate>>();
  for (const State& st : states_)
    all->insert(all->end(), st.candidates.begin(), st.candidates.end());
  published_ = std::move(all);
}

absl::StatusOr<DatastoreInventory::CandidateList> DatastoreInventory::Candidates() const {
  absl::MutexLock lock(&mu_);
  std::vector<std::string> missing;
  for (const State& st : states_) {
    if (!st.loaded) missing.push_back(std::string(st.last_error.message()));
  }
  if (!missing.empty()) {
    return absl::UnavailableError(
        absl::StrCat("datastore inventory not loaded yet: ", absl::StrJoin(missing, "; ")));
  }
  if (published_ == nullptr) return std::make_shared<const std::vector<DatastoreCandidate>>();
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
      if (c.url == url) c.free_bytes = std::max<int64_t>(0, c.free_bytes + delta_bytes);
    }
  }
  Publish();
  quick_due_ = std::min(quick_due_, absl::Now() + options_.change_delay);
  wake_ = true;
}

void DatastoreInventory::RequestFullRefresh() {
  absl::MutexLock lock(&mu_);
  next_full_ = absl::InfinitePast();
  wake_ = true;
}

absl::Status DatastoreInventory::Health() const {
  absl::MutexLock lock(&mu_);
  for (const State& st : states_) {
    if (!st.loaded) return absl::UnavailableError(st.last_error.message());
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

DatastoreInventoryStats DatastoreInventory::stats() const {
  absl::MutexLock lock(&mu_);
  DatastoreInventoryStats s = stats_;
  s.idle = !refreshing_ && quick_due_ == absl::InfiniteFuture();
  return s;
}

}  // namespace ccm::csi
