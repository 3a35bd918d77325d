// DatastoreInventory::Refresh: one vCenter read into a new view (see datastore_inventory.h).
#include <algorithm>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/logging.h"
#include "common/status_macros.h"
#include "csi/controller/datastore_inventory.h"
#include "csi/controller/datastore_privileges.h"
#include "csi/controller/host_topology.h"

namespace ccm::csi {
namespace {

std::string Describe(const vsphere::InventoryRef& r) {
  return absl::StrCat(r.ref.ToString(), " (", r.name, ")");
}

// One line per datastore whose CNS manager suspension began or ended since `before`.
void LogSuspensions(const std::string& vcenter, const std::vector<DatastoreCandidate>& before,
                    const std::vector<DatastoreCandidate>& after) {
  std::set<std::string> was;
  for (const DatastoreCandidate& c : before) {
    if (c.suspended) was.insert(c.moref);
  }
  for (const DatastoreCandidate& c : after) {
    if (c.suspended == was.contains(c.moref)) continue;
    if (c.suspended) {
      LOG_WARN("vCenter {}: datastore {} ({}) is left out of placement: {} is set on it", vcenter,
               c.name, c.moref, kDatastoreSuspended);
    } else {
      LOG_INFO("vCenter {}: datastore {} ({}) takes new volumes again", vcenter, c.name, c.moref);
    }
  }
}

}  // namespace

absl::Status DatastoreInventory::Refresh(size_t index, bool full) {
  absl::MutexLock refresh_lock(&refresh_mu_);
  DatastoreSource source;
  std::shared_ptr<vsphere::AncestryResolver> ancestry;
  Caches caches;  // copied out, so look-ups are never blocked by this refresh
  uint64_t changes_before;
  {
    absl::MutexLock lock(&mu_);
    const State& st = states_[index];
    source = st.source;
    ancestry = st.ancestry;
    caches = st.caches;
    full = full || !st.loaded;
    changes_before = st.changes;
  }
  absl::StatusOr<Fetched> fetched = Fetch(source, *ancestry, caches, full);
  absl::MutexLock lock(&mu_);
  State& st = states_[index];
  const absl::Status result = fetched.status();
  Commit(st, std::move(fetched), std::move(caches), full, changes_before);
  return result.ok() ? result : st.last_error;
}

void DatastoreInventory::Commit(State& st, absl::StatusOr<Fetched> fetched, Caches caches,
                                bool full, uint64_t changes_before) {
  if (!fetched.ok()) {
    ++stats_.failures;
    st.last_error = absl::Status(fetched.status().code(),
                                 absl::StrCat("datastores of vCenter ", st.source.vcenter, ": ",
                                              fetched.status().message()));
    st.retry_at = clock_.Now() + st.retry_delay;
    st.retry_delay = std::min(st.retry_delay * 2, options_.max_retry);
    LOG_WARN("{} (next attempt in {})", st.last_error.message(),
             absl::FormatDuration(st.retry_at - clock_.Now()));
    Publish();
    return;
  }
  if (!st.loaded) {
    LOG_INFO("datastore inventory of vCenter {}: {} datastores, {} hosts", st.source.vcenter,
             fetched->candidates.size(), fetched->hosts.size());
  }
  st.loaded = true;
  st.last_error = absl::OkStatus();
  st.retry_at = absl::InfiniteFuture();
  st.retry_delay = options_.retry;
  LogSuspensions(st.source.vcenter, st.candidates, fetched->candidates);
  st.candidates = std::move(fetched->candidates);
  st.hosts = std::move(fetched->hosts);
  st.caches = std::move(caches);
  ++(full ? stats_.full_refreshes : stats_.quick_refreshes);
  if (st.changes != changes_before) {
    // A create or extend finished while vCenter was read: its space may be missing from this
    // answer (the cached adjustment was just replaced), so read once more soon.
    quick_due_ = std::min(quick_due_, clock_.Now() + options_.change_delay);
    WakeLocked();
  }
  Publish();
}

absl::StatusOr<DatastoreInventory::Fetched> DatastoreInventory::Fetch(
    const DatastoreSource& source, vsphere::AncestryResolver& ancestry, Caches& caches,
    bool full) const {
  vsphere::Client& client = *source.client;
  if (full) {
    CCM_ASSIGN_OR_RETURN(caches.datacenters, WatchedDatacenters(client, source.datacenters));
    caches.host_segments.clear();
    caches.pod_names.clear();
  }
  CCM_ASSIGN_OR_RETURN(DatastoreFetch records, FetchDatastores(client, caches.datacenters));
  std::vector<vsphere::Moref> hosts, datastores;
  std::set<vsphere::Moref> pods;
  for (const HostRecordRaw& h : records.hosts) hosts.push_back(h.moref);
  for (const DatastoreRecord& r : records.datastores) {
    if (!r.usable) continue;
    datastores.push_back(r.moref);
    if (r.parent.type == "StoragePod") pods.insert(r.parent);
  }
  CheckPrivileges(source, caches, datastores, full);
  // The preferred-datastore tags are read with the hosts' tags, in the same batch.
  if (!full || !topology_) datastores.clear();
  CCM_RETURN_IF_ERROR(
      FillTopology(source, ancestry, caches, hosts, {pods.begin(), pods.end()}, datastores));

  Fetched out;
  for (const DatastoreRecord& r : records.datastores) {
    if (!r.usable || r.url.empty()) continue;
    DatastoreCandidate c;
    c.vcenter = source.vcenter;
    c.datacenter = r.datacenter;
    c.name = r.name;
    c.url = r.url;
    c.moref = r.moref.value;
    c.type = r.type;
    if (auto it = caches.pod_names.find(r.parent); it != caches.pod_names.end()) {
      c.datastore_cluster = it->second;
      c.datastore_cluster_moref = r.parent.value;
    }
    c.free_bytes = r.free_bytes;
    c.suspended = r.suspended;
    for (const vsphere::Moref& h : r.hosts) c.hosts.push_back(h.value);
    std::sort(c.hosts.begin(), c.hosts.end());
    if (auto it = caches.preferred.find(r.moref); it != caches.preferred.end()) {
      c.preferred_for = it->second;
    }
    if (auto it = caches.no_privilege.find(r.moref); it != caches.no_privilege.end()) {
      c.no_privilege = it->second;
    }
    out.candidates.push_back(std::move(c));
  }
  std::sort(out.candidates.begin(), out.candidates.end(),
            [](const DatastoreCandidate& a, const DatastoreCandidate& b) {
              return std::tie(a.datacenter, a.name, a.url) < std::tie(b.datacenter, b.name, b.url);
            });
  for (const HostRecordRaw& h : records.hosts) {
    HostRecord rec{source.vcenter, h.moref.value, h.name, std::nullopt};
    if (topology_) {
      const HostTopology& t = caches.host_segments[h.moref];
      rec.segment = t.segment;
      rec.problem = t.problem;
    }
    out.hosts.push_back(std::move(rec));
  }
  return out;
}

void DatastoreInventory::CheckPrivileges(const DatastoreSource& source, Caches& caches,
                                         const std::vector<vsphere::Moref>& datastores,
                                         bool full) const {
  const std::string user = source.user ? source.user() : "";
  if (user.empty() || datastores.empty()) return;
  const absl::Time now = clock_.Now();
  bool unseen = false;
  for (const vsphere::Moref& d : datastores) unseen |= !caches.no_privilege.count(d);
  if (!full && !unseen && now - caches.privileges_at < options_.auth_check_interval) return;
  caches.privileges_at = now;
  absl::StatusOr<std::map<vsphere::Moref, std::string>> checked =
      CheckDatastorePrivileges(*source.client, user, datastores);
  if (!checked.ok()) {
    LOG_WARN(
        "datastore privileges of user {} in vCenter {} could not be read ({}); the last ones "
        "read stay, and datastores never checked are not left out until they can",
        user, source.vcenter, checked.status().message());
    for (const vsphere::Moref& d : datastores) caches.no_privilege.try_emplace(d, "");
    return;
  }
  for (const auto& [ds, why] : *checked) {
    auto it = caches.no_privilege.find(ds);
    const std::string before = it == caches.no_privilege.end() ? "" : it->second;
    if (why != before) {
      if (why.empty()) {
        LOG_INFO("vCenter {}: datastore {} may be used again: {} has the privileges now",
                 source.vcenter, ds.value, user);
      } else {
        LOG_WARN("vCenter {}: datastore {} is left out of placement: {}", source.vcenter, ds.value,
                 why);
      }
    }
  }
  caches.no_privilege = *std::move(checked);
}

absl::Status DatastoreInventory::FillTopology(const DatastoreSource& source,
                                              vsphere::AncestryResolver& ancestry, Caches& caches,
                                              const std::vector<vsphere::Moref>& hosts,
                                              const std::vector<vsphere::Moref>& pods,
                                              const std::vector<vsphere::Moref>& datastores) const {
  std::vector<vsphere::Moref> wanted;
  for (const vsphere::Moref& p : pods) {
    if (!caches.pod_names.contains(p)) wanted.push_back(p);
  }
  std::vector<vsphere::Moref> new_hosts;
  if (topology_) {
    for (const vsphere::Moref& h : hosts) {
      if (!caches.host_segments.contains(h)) new_hosts.push_back(h);
    }
  }
  wanted.insert(wanted.end(), new_hosts.begin(), new_hosts.end());
  std::map<vsphere::Moref, std::vector<vsphere::InventoryRef>> chains;
  if (!wanted.empty()) {
    CCM_ASSIGN_OR_RETURN(chains, ancestry.ResolveChains(wanted));
  }
  for (const vsphere::Moref& p : pods) {
    auto it = chains.find(p);
    if (it != chains.end() && !it->second.empty()) caches.pod_names[p] = it->second.front().name;
  }
  // Every object of the new hosts' chains and the datastores, tags fetched in one batch call.
  std::set<vsphere::Moref> objects(datastores.begin(), datastores.end());
  for (const vsphere::Moref& h : new_hosts) {
    for (const vsphere::InventoryRef& r : chains[h]) objects.insert(r.ref);
  }
  if (objects.empty()) return absl::OkStatus();
  CCM_ASSIGN_OR_RETURN(std::vector<vsphere::ObjectTags> tags,
                       source.tagging->ListAttachedTags({objects.begin(), objects.end()}));
  std::map<vsphere::Moref, std::vector<vsphere::Tag>> tags_of;
  for (vsphere::ObjectTags& t : tags) tags_of[t.object] = std::move(t.tags);

  const TopologyCategories categories = CategoriesOf(options_.topology);
  for (const vsphere::Moref& h : new_hosts) {
    std::vector<TaggedRef> chain;
    for (const vsphere::InventoryRef& r : chains[h]) chain.push_back({Describe(r), tags_of[r.ref]});
    HostTopology t = HostTopologyOf(chain, categories);
    // One mis-tagged host must not hide every datastore: it makes none reachable.
    if (t.ambiguous) LOG_WARN("vCenter {}: host {}: {}", source.vcenter, h.ToString(), t.problem);
    caches.host_segments[h] = std::move(t);
  }
  if (!datastores.empty()) caches.preferred.clear();
  for (const vsphere::Moref& d : datastores) {
    for (const vsphere::Tag& tag : tags_of[d]) {
      if (tag.category_name == kPreferredDatastoresCategory) {
        caches.preferred[d].push_back(tag.name);
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace ccm::csi
