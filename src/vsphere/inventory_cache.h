#pragma once
// In-memory inventory of the VMs of one vCenter, kept current by WaitForUpdatesEx instead of
// polling (the reference re-fetches every VM's properties per node per call).
//
// How it works: a dedicated PropertyCollector, one container view over all VirtualMachines of each
// configured datacenter (all datacenters when none is configured) and one PropertyFilter per view
// with VmFactsPropertyPaths(). A background thread calls WaitForUpdatesEx (version based,
// maxWaitSeconds small so Stop() is prompt) and applies each partial update to the cached VmFacts
// with ApplyVmProperty. A VM powered off or destroyed is therefore visible in well under a second
// (the simulator batches updates every 250 ms), with no polling.
//
// Consistency contract for callers (the cloud provider):
// - Look-ups answer from memory. While the cache is not synced (before the first full load, or
//   after the update stream broke, until the resync completes) every look-up returns
//   Unavailable, never NotFound: "I could not ask vCenter" must never be read as "the VM is gone".
// - NotFound means: synced, and no VM of the watched datacenters matches.
// - Resync from scratch (new collector, views, filters, full load) happens after any stream error
//   (network, fault, malformed answer, a collector that no longer exists) and when the SOAP
//   session generation changes (re-login: server-side filters die with the session). Before each
//   resync the cache thread (the one prober of this vCenter) probes vCenter with a cheap
//   unauthenticated call and a short timeout, with exponential backoff capped at a few seconds on
//   the injected Clock, so the cache is synced again within seconds of vCenter answering, even
//   after an outage of hours. The old map stays in memory meanwhile (look-ups say Unavailable), and
//   a resync reports only the VMs that really changed or disappeared: no delete storm.
// - A NotAuthenticated reported per property (missingSet) is a lost session, never a VM without
//   properties: the load or update is dropped, the session is renewed and the cache resyncs.
// - Listeners are called on the cache thread, after the change is visible to look-ups, outside
//   every lock (they may call look-ups). They must be quick (enqueue a key).
// Thread-safe.

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/container/inlined_vector.h"
#include "absl/container/node_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "common/backoff.h"
#include "common/clock.h"
#include "common/random.h"
#include "vsphere/client.h"
#include "vsphere/datacenter.h"
#include "vsphere/moref.h"
#include "vsphere/property_collector.h"
#include "vsphere/update_set.h"
#include "vsphere/vm_facts.h"

namespace ccm::vsphere {

struct InventoryCacheOptions {
  // vsphere.conf `datacenters` entries (name, path or MOID); empty = every datacenter.
  std::vector<std::string> datacenters;
  int max_wait_seconds = kStreamMaxWaitSeconds;  // WaitForUpdatesEx maxWaitSeconds
  // WaitForUpdatesEx maxObjectUpdates (0: unlimited): a real vCenter then pages a big answer
  // (truncated) instead of sending every VM at once; the simulator ignores it.
  int max_object_updates = 200;
  // Between resync attempts (each starts with a probe): 0.2 s doubling up to 2 s, +-10%.
  BackoffPolicy resync_backoff{absl::Milliseconds(200), absl::Seconds(2), 2.0, 0.1};
  absl::Duration probe_timeout = absl::Seconds(3);  // the probe's round trip
  // The timeout of each streaming WaitForUpdatesEx is maxWaitSeconds plus this: a vCenter that
  // stopped answering (a blackholed network) is noticed within seconds, not the client's 60 s.
  absl::Duration wait_timeout_margin = absl::Seconds(10);
  // While attempts keep failing, one warning per this period (the others at verbosity 1).
  absl::Duration failure_log_period = absl::Minutes(1);
  Clock* clock = nullptr;    // null: real clock
  Random* random = nullptr;  // null: real randomness (jitter)
  // Also follow config.hardware.device (VmFacts::disks: the VMs' First Class Disks), for the CSI
  // controller. Off for the cloud provider: every device change of every VM would reach it.
  bool vm_disks = false;
};

enum class VmChangeKind { kAdded, kModified, kRemoved };
absl::string_view ToString(VmChangeKind k);

// Called with the VM's MOID (e.g. "vm-42") and what happened.
using VmChangeListener = std::function<void(const std::string& moid, VmChangeKind kind)>;

struct InventoryCacheStats {
  bool synced = false;
  size_t vms = 0;
  uint64_t updates_applied = 0;  // object updates (enter/modify/leave) applied after a load
  uint64_t resyncs = 0;          // full loads, the first one included
  uint64_t stream_errors = 0;
  uint64_t failed_attempts = 0;  // resync attempts (probe or load) that failed
  absl::Status last_error;       // of the last failed load/stream (OK if none yet)
  absl::Time last_sync;          // end of the last full load
};

class InventoryCache {
 public:
  // `client` must outlive the cache.
  InventoryCache(Client& client, InventoryCacheOptions options = {});
  ~InventoryCache();  // Stop()
  InventoryCache(const InventoryCache&) = delete;
  InventoryCache& operator=(const InventoryCache&) = delete;

  // Starts the background thread (returns at once; the first load happens there).
  void Start();
  // Ends the thread promptly (cancels the pending WaitForUpdatesEx) and destroys the server-side
  // collector, filters and views. Idempotent.
  void Stop();
  // Ends the pending WaitForUpdatesEx within about a second (the transfer is aborted here; the
  // collector is replaced); the cache then sets itself up again as after any stream error. For a
  // credentials change: the new session is used at once instead of after maxWaitSeconds.
  void Interrupt();
  // Blocks until synced or `timeout` (real time) passes; true when synced.
  bool WaitForSync(absl::Duration timeout) const;
  bool synced() const;

  // Look-ups (copies). Unavailable while not synced; NotFound when synced and nothing matches.
  absl::StatusOr<VmFacts> FindByUuid(absl::string_view bios_uuid) const;  // case-insensitive
  absl::StatusOr<VmFacts> FindByMoid(absl::string_view moid) const;
  // Every VM whose guest hostname equals `hostname` (case-insensitive).
  absl::StatusOr<std::vector<VmFacts>> FindByHostname(absl::string_view hostname) const;
  // Every VM with a guest NIC reporting `ip`.
  absl::StatusOr<std::vector<VmFacts>> FindByIp(absl::string_view ip) const;
  absl::StatusOr<std::vector<VmFacts>> Snapshot() const;
  // Calls `fn` for every VM without copying (under the cache's lock: `fn` must be quick and must
  // not call the cache). Unavailable while not synced.
  absl::Status ForEachVm(const std::function<void(const VmFacts&)>& fn) const;

  // Returns an id for RemoveListener. Listeners registered before Start() see the first load
  // as kAdded events.
  int AddListener(VmChangeListener listener);
  void RemoveListener(int id);

  InventoryCacheStats stats() const;

  // The VMs sharing a hostname or an IP: almost always one, kept without an allocation.
  using MoidSet = absl::InlinedVector<std::string, 1>;
  // moid -> facts. Nodes, not flat slots: a VmFacts is ~700 bytes, and a flat table keeps up to
  // twice as many slots as VMs (1,000 VMs: 1.4 MB of slots instead of 0.7 MB of facts).
  using VmMap = absl::node_hash_map<std::string, VmFacts>;
  // Blocks until `pred(stats())` holds or `timeout` (real time) passes; returns the last result.
  // For tests and health checks that must wait for a resync without sleeping.
  bool WaitForStats(const std::function<bool(const InventoryCacheStats&)>& pred,
                    absl::Duration timeout) const;

 private:
  struct Event {
    std::string moid;
    VmChangeKind kind;
  };
  void Run();
  bool stopping() const { return stop_.HasBeenNotified(); }
  // After a wait: clears abort_wait_; true (and cleared) when Interrupt() was called.
  bool TakeInterrupt();
  // Creates collector, views and filters, then loads everything (replacing the map, emitting
  // the differences to listeners).
  absl::Status Load();
  // The steps of Load (cache thread only); `what` prefixes errors.
  absl::StatusOr<std::vector<Datacenter>> WatchedDatacenters();  // options_.datacenters resolved
  absl::Status CreateServerObjects(const Moref& default_collector,
                                   const std::vector<Datacenter>& dcs, const std::string& what);
  absl::Status FetchAll(VmMap& fresh, const std::string& what);  // pages until complete
  // Replaces the map with `fresh` and marks the cache synced; returns what changed.
  std::vector<Event> Commit(VmMap fresh) ABSL_LOCKS_EXCLUDED(mu_);
  // Probe (except before the first load), then Load; logs the failure rate-limited.
  absl::Status Resync(bool first, int failures);
  absl::Status Stream();  // WaitForUpdatesEx until error or stop
  // WaitForUpdatesEx <options> (maxWaitSeconds when > 0, maxObjectUpdates), or "".
  std::string WaitOptionsXml(int max_wait_seconds) const;
  absl::Status ApplyUpdateSet(const UpdateSet& set, std::vector<Event>* events)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void DestroyServerObjects();  // asks vCenter to destroy them, then forgets them
  void ForgetServerObjects();   // without asking (their session is gone)
  void MarkBroken(const absl::Status& s);
  void Notify(const std::vector<Event>& events);
  absl::Status NotSynced() const ABSL_SHARED_LOCKS_REQUIRED(mu_);
  void Index(const VmFacts& vm) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Unindex(const VmFacts& vm) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  std::vector<VmFacts> Collect(const MoidSet* moids) const ABSL_SHARED_LOCKS_REQUIRED(mu_);

  Client& client_;
  const InventoryCacheOptions options_;
  Clock* const clock_;
  Random* const random_;

  // Server-side objects of the current stream (cache thread only, and Stop() after join).
  Moref collector_;
  std::vector<Moref> views_;
  std::map<std::string, std::pair<Moref, std::string>> filter_dc_;  // filter -> datacenter
  std::string version_;
  uint64_t session_generation_ = 0;

  absl::Mutex stop_mu_;  // serialises Start() and Stop()
  std::thread thread_ ABSL_GUARDED_BY(stop_mu_);
  // The one "stopped" flag: set once by Stop(), polled by the cache thread (stopping()) and
  // ending its backoff sleeps.
  absl::Notification stop_;
  absl::Notification exited_;  // Run() returned

  mutable absl::Mutex mu_;
  // stats_.synced is the one "synced" flag: look-ups answer only while it is true.
  InventoryCacheStats stats_ ABSL_GUARDED_BY(mu_);
  Moref waiting_collector_ ABSL_GUARDED_BY(mu_);   // for CancelWaitForUpdates
  bool interrupted_ ABSL_GUARDED_BY(mu_) = false;  // Interrupt() called, not yet acted on
  std::atomic<bool>* abort_wait_ ABSL_GUARDED_BY(mu_) = nullptr;  // the pending wait's cancel
  VmMap vms_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, std::string> by_uuid_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, MoidSet> by_hostname_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, MoidSet> by_ip_ ABSL_GUARDED_BY(mu_);

  absl::Mutex listeners_mu_;
  std::map<int, std::shared_ptr<VmChangeListener>> listeners_ ABSL_GUARDED_BY(listeners_mu_);
  int next_listener_ ABSL_GUARDED_BY(listeners_mu_) = 0;
};

}  // namespace ccm::vsphere
