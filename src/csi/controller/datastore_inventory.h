#pragma once
// The datastores CreateVolume and GetCapacity choose from, kept in memory.
//
// Per configured vCenter: every datastore of the configured datacenters (all when none), members
// of datastore clusters (StoragePods) included, as a DatastoreCandidate with its free space and
// accessible topology: the distinct complete segments of the hosts that mount it, each host's
// segment from the tags of the topology categories on the host and its ancestors, nearest first
// (host_topology.h). Cost of a refresh per vCenter: one request for the datacenter list, one for
// all datastores with their mounts, and, for hosts not seen before, the ancestry rounds
// (AncestryResolver, cached) and ONE tagging batch call.
//
// Freshness: a full refresh (host segments and datastore-cluster names read again) every
// `interval` (csi-fetch-preferred-datastores-intervalinmin); NoteChange() after a create, delete
// or extend adjusts the cached free space at once and schedules a quick refresh (datastores only)
// `change_delay` later, coalescing every change made meanwhile into that one refresh.
//
// Contract for callers: Candidates() answers from memory and never waits for vCenter once a
// vCenter has been loaded. Before the first successful load of every vCenter it is Unavailable
// naming the vCenters and their last error (never an empty list: "no datastore" would become a
// wrong ResourceExhausted). A failed refresh keeps the last data.
// Thread-safe.

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "csi/controller/datastore_fetch.h"
#include "csi/core/placement.h"
#include "csi/core/topology.h"
#include "vsphere/ancestry.h"
#include "vsphere/client.h"
#include "vsphere/tagging.h"

namespace ccm::csi {

struct DatastoreSource {
  std::string vcenter;  // the vCenter's label (DatastoreCandidate::vcenter)
  vsphere::Client* client = nullptr;
  vsphere::TaggingClient* tagging = nullptr;  // used only when topology is configured
  std::vector<std::string> datacenters;       // vsphere.conf entries; empty = all
};

struct DatastoreInventoryOptions {
  TopologyConfig topology;
  absl::Duration interval = absl::Minutes(5);
  absl::Duration change_delay = absl::Seconds(2);
  // After a failed refresh of a vCenter: first retry, doubling up to `max_retry`.
  absl::Duration retry = absl::Milliseconds(500);
  absl::Duration max_retry = absl::Seconds(30);
};

struct DatastoreInventoryStats {
  uint64_t full_refreshes = 0;   // successful, per vCenter
  uint64_t quick_refreshes = 0;  // successful, per vCenter
  uint64_t failures = 0;
  uint64_t changes_noted = 0;
  bool idle = true;  // no refresh running or scheduled by a change
};

class DatastoreInventory {
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

  using CandidateList = std::shared_ptr<const std::vector<DatastoreCandidate>>;
  // Every candidate of every vCenter, in configuration then (datacenter, name) order.
  absl::StatusOr<CandidateList> Candidates() const;

  // The free space of the datastore at `url` in `vcenter` changed by `delta_bytes` (negative
  // after a create or an extend): applied to the cache now, read from vCenter soon.
  void NoteChange(const std::string& vcenter, const std::string& url, int64_t delta_bytes);

  // vCenter no longer knows a datastore of the cache (CNS said so): a full refresh now.
  void RequestFullRefresh();

  // OK once every vCenter was loaded; the error says which is not and why.
  absl::Status Health() const;
  bool WaitForLoad(absl::Duration timeout) const;
  DatastoreInventoryStats stats() const;

 private:
  struct State {  // one vCenter's
    DatastoreSource source;
    std::shared_ptr<vsphere::AncestryResolver> ancestry;
    std::vector<vsphere::Datacenter> datacenters;  // resolved on a full refresh
    bool loaded = false;
    absl::Status last_error = absl::UnavailableError("not loaded yet");
    std::vector<DatastoreCandidate> candidates;
    // Host -> its segment (nullopt: incomplete), StoragePod -> name. Dropped on a full refresh.
    std::map<vsphere::Moref, std::optional<Segments>> host_segments;
    std::map<vsphere::Moref, std::string> pod_names;
    absl::Time retry_at = absl::InfiniteFuture();  // a failed vCenter's next attempt
    // NoteChange() calls so far: a refresh that overlapped one may have read vCenter before the
    // change and is followed by another.
    uint64_t changes = 0;
    absl::Duration retry_delay;
  };
  void Run();
  // Fetches one vCenter outside the lock, on copies of its caches; `full` reads host segments and
  // pod names again.
  absl::Status Refresh(size_t index, bool full);
  // Fills the segments of `hosts` and the names of `pods` missing from the maps.
  absl::Status FillTopology(State& scratch, const std::vector<vsphere::Moref>& hosts,
                            const std::vector<vsphere::Moref>& pods);
  void Publish() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const DatastoreInventoryOptions options_;
  const bool topology_;
  absl::Mutex refresh_mu_ ABSL_ACQUIRED_BEFORE(mu_);  // one refresh at a time
  mutable absl::Mutex mu_;
  std::vector<State> states_ ABSL_GUARDED_BY(mu_);
  CandidateList published_ ABSL_GUARDED_BY(mu_);
  DatastoreInventoryStats stats_ ABSL_GUARDED_BY(mu_);
  absl::Time next_full_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  absl::Time quick_due_ ABSL_GUARDED_BY(mu_) = absl::InfiniteFuture();
  bool wake_ ABSL_GUARDED_BY(mu_) = false;
  bool refreshing_ ABSL_GUARDED_BY(mu_) = false;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace ccm::csi
