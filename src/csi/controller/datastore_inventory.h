#pragma once
// What CreateVolume and GetCapacity place on, kept in memory: per configured vCenter, every
// datastore of the configured datacenters (all when none), members of datastore clusters
// (StoragePods) included, with its free space, type and the hosts that mount it; every ESXi host
// of those datacenters with its topology segment (the tags of the topology categories on the host
// and its ancestors, nearest first: host_topology.h); and, with topology, the datastores tagged
// as preferred for a topology value (category cns.vmware.topology-preferred-datastores, as the
// reference's csi-fetch-preferred-datastores-intervalinmin reads them). placement.h decides on
// this view.
//
// Cost of a refresh per vCenter: one request for the datacenter list, one for all datastores and
// hosts with their mounts, on a full refresh one FetchUserPrivilegeOnEntities for the user's
// privileges on every datastore (datastore_privileges.h; also every csi-auth-check-intervalinmin
// and for datastores not seen before), and with topology ONE tagging batch call for the
// datastores' tags and the chains of hosts not seen before (whose ancestry rounds the
// AncestryResolver caches).
//
// Freshness: a full refresh (host segments, datastore-cluster names and preferred datastores read
// again) every `interval` (csi-fetch-preferred-datastores-intervalinmin); NoteChange() after a
// create, delete or extend adjusts the cached free space at once and schedules a quick refresh
// (datastores and hosts, one request) `change_delay` later, coalescing every change made
// meanwhile into that one refresh; RequestFullRefresh() when a caller learns the view is stale (a
// datastore CNS no longer knows, a node VM on a host the view does not have). With `watch`, a
// property-collector stream per vCenter (vsphere::ChangeWatcher) reports datastores mounted on or
// taken away from hosts, becoming inaccessible or entering maintenance, moved into a datastore
// cluster, and hosts added, removed or moved: a refresh follows `change_delay` later (a full one
// when hosts changed), so the view follows vCenter within seconds without polling.
//
// Contract for callers: Snapshot() answers from memory and never waits for vCenter. It serves
// every vCenter loaded so far and names the others in `unloaded` (one vCenter that is down
// affects its own datastores only); Unavailable only while no vCenter has been loaded (never an
// empty view: "no datastore" would become a wrong ResourceExhausted). A failed refresh keeps the
// last data. Thread-safe; time is the injected Clock.

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "csi/controller/datastore_fetch.h"
#include "csi/controller/host_topology.h"
#include "csi/controller/placement_view.h"
#include "csi/core/placement.h"
#include "csi/core/topology.h"
#include "vsphere/ancestry.h"
#include "vsphere/change_watcher.h"
#include "vsphere/client.h"
#include "vsphere/tagging.h"

namespace ccm::csi {

// The reference's tag category for preferred datastores: a tag named after a topology value
// (e.g. "zone-a") on a datastore makes it preferred in that segment.
inline constexpr char kPreferredDatastoresCategory[] = "cns.vmware.topology-preferred-datastores";

struct DatastoreSource {
  std::string vcenter;  // the vCenter's label (DatastoreCandidate::vcenter)
  vsphere::Client* client = nullptr;
  vsphere::TaggingClient* tagging = nullptr;  // used only when topology is configured
  std::vector<std::string> datacenters;       // vsphere.conf entries; empty = all
  // The vCenter user volumes are created as (null or "": no privilege check). Its privileges on
  // the datastores are read in one call (datastore_privileges.h) on every full refresh, for
  // datastores not seen before, and every `auth_check_interval`.
  std::function<std::string()> user;
};

struct DatastoreInventoryOptions {
  TopologyConfig topology;
  absl::Duration interval = absl::Minutes(5);
  absl::Duration change_delay = absl::Seconds(2);
  absl::Duration auth_check_interval = absl::Minutes(5);  // csi-auth-check-intervalinmin
  bool watch = true;  // a ChangeWatcher per vCenter (Start() starts them)
  int watch_max_wait_seconds = vsphere::kStreamMaxWaitSeconds;
  // After a failed refresh of a vCenter: first retry, doubling up to `max_retry`.
  absl::Duration retry = absl::Milliseconds(500);
  absl::Duration max_retry = absl::Seconds(30);
  Clock* clock = nullptr;  // null: the real clock
};

struct DatastoreInventoryStats {
  uint64_t full_refreshes = 0;   // successful, per vCenter
  uint64_t quick_refreshes = 0;  // successful, per vCenter
  uint64_t failures = 0;
  uint64_t changes_noted = 0;
  uint64_t inventory_changes = 0;  // NoteInventoryChange calls (the watchers')
  uint64_t generation = 0;         // increases whenever the view changes
  bool idle = true;                // no refresh running or scheduled by a change
};

class DatastoreInventory final : public PlacementView {
 public:
  DatastoreInventory(std::vector<DatastoreSource> sources, DatastoreInventoryOptions options);
  ~DatastoreInventory();  // Stop()
  DatastoreInventory(const DatastoreInventory&) = delete;
  DatastoreInventory& operator=(const DatastoreInventory&) = delete;

  // Starts the refresh thread; the first full load happens there at once.
  void Start();
  void Stop();  // idempotent

  // A full refresh of every vCenter on the caller's thread (tests, and Start-less use). Returns
  // the first error; the vCenters that answered are updated anyway.
  absl::Status RefreshNow();

  absl::StatusOr<SnapshotPtr> Snapshot() const override;

  // The free space of the datastore at `url` in `vcenter` changed by `delta_bytes` (negative
  // after a create or an extend): applied to the cache now, read from vCenter soon.
  void NoteChange(const std::string& vcenter, const std::string& url, int64_t delta_bytes) override;

  // The view is stale (CNS does not know a datastore of it, a node VM runs on a host it does
  // not have): a full refresh now.
  void RequestFullRefresh() override;
  // vCenter reported a change of the mounts (or, with `hosts`, of the hosts): a refresh
  // `change_delay` from now, full with `hosts`, coalescing the changes reported meanwhile.
  void NoteInventoryChange(bool hosts);

  // Per vCenter: OK once loaded, else why not.
  std::map<std::string, absl::Status> VCenterHealth() const;
  // OK once every vCenter was loaded; the error says which is not and why.
  absl::Status Health() const;
  bool WaitForLoad(absl::Duration timeout) const;
  // True once every vCenter's ChangeWatcher is watching (tests change things after it).
  bool WaitForWatchers(absl::Duration timeout) const;
  DatastoreInventoryStats stats() const;

 private:
  struct Caches {  // what a full refresh reads again, a quick one reuses
    std::vector<vsphere::Datacenter> datacenters;
    std::map<vsphere::Moref, HostTopology> host_segments;
    std::map<vsphere::Moref, std::string> pod_names;               // StoragePod -> name
    std::map<vsphere::Moref, std::vector<std::string>> preferred;  // datastore -> values
    std::map<vsphere::Moref, std::string> no_privilege;  // datastore -> why not ("" = may)
    absl::Time privileges_at = absl::InfinitePast();     // last privilege check
  };
  struct State {  // one vCenter's
    DatastoreSource source;
    std::shared_ptr<vsphere::AncestryResolver> ancestry;
    Caches caches;
    bool loaded = false;
    absl::Status last_error = absl::UnavailableError("not loaded yet");
    std::vector<DatastoreCandidate> candidates;
    std::vector<HostRecord> hosts;
    absl::Time retry_at = absl::InfiniteFuture();  // a failed vCenter's next attempt
    // NoteChange() calls so far: a refresh that overlapped one may have read vCenter before the
    // change and is followed by another.
    uint64_t changes = 0;
    absl::Duration retry_delay;
  };
  struct Fetched {
    std::vector<DatastoreCandidate> candidates;
    std::vector<HostRecord> hosts;
  };
  void Run();
  vsphere::ChangeWatcherOptions WatcherOptions(const std::string& vcenter) const;
  // The refreshes due now (vCenter index, full); the deadline of the next one in `next`.
  std::vector<std::pair<size_t, bool>> DueLocked(absl::Time now, absl::Time* next)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Fetches one vCenter outside the lock, on copies of its caches; `full` reads host segments,
  // pod names and preferred datastores again.
  absl::Status Refresh(size_t index, bool full);
  absl::StatusOr<Fetched> Fetch(const DatastoreSource& source, vsphere::AncestryResolver& ancestry,
                                Caches& caches, bool full) const;
  // Fills the segments of `hosts` and the names of `pods` missing from the caches and, when
  // `datastores` is not empty, the preferred datastores among them: one tagging batch call.
  // Reads the user's privileges on `datastores` when due (see DatastoreSource::user): on a full
  // refresh, for datastores not seen before, and every auth_check_interval. A failed check is
  // logged and filters nothing.
  void CheckPrivileges(const DatastoreSource& source, Caches& caches,
                       const std::vector<vsphere::Moref>& datastores, bool full) const;
  absl::Status FillTopology(const DatastoreSource& source, vsphere::AncestryResolver& ancestry,
                            Caches& caches, const std::vector<vsphere::Moref>& hosts,
                            const std::vector<vsphere::Moref>& pods,
                            const std::vector<vsphere::Moref>& datastores) const;
  void Commit(State& st, absl::StatusOr<Fetched> fetched, Caches caches, bool full,
              uint64_t changes_before) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Publish() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void WakeLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const DatastoreInventoryOptions options_;
  const bool topology_;
  Clock& clock_;
  absl::Mutex refresh_mu_ ABSL_ACQUIRED_BEFORE(mu_);  // one refresh at a time
  mutable absl::Mutex mu_;
  std::vector<State> states_ ABSL_GUARDED_BY(mu_);
  SnapshotPtr published_ ABSL_GUARDED_BY(mu_);
  DatastoreInventoryStats stats_ ABSL_GUARDED_BY(mu_);
  absl::Time next_full_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  absl::Time quick_due_ ABSL_GUARDED_BY(mu_) = absl::InfiniteFuture();
  // The refresh thread's current sleep: notified to wake it early (a change, a stop).
  std::shared_ptr<absl::Notification> wake_ ABSL_GUARDED_BY(mu_);
  std::vector<std::unique_ptr<vsphere::ChangeWatcher>> watchers_;  // set in Start, ended in Stop
  bool refreshing_ ABSL_GUARDED_BY(mu_) = false;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace ccm::csi
