#pragma once
// Tells when some properties of some objects change in vCenter, without keeping the objects:
// for a view that is read in full by someone else (the CSI controller's datastore inventory reads
// every datastore and host in one request) and must be read again soon after a change (a
// datastore mounted on a host or taken away from it, a host added, removed or moved), instead of
// polling it.
//
// How: a PropertyCollector of its own with one container view over the root folder per watched
// type (recursive) and a filter with the watched paths; the first WaitForUpdatesEx (the current
// state) only gives the version, then each WaitForUpdatesEx that reports something calls
// `on_change` with the types whose objects entered, left or changed. After any stream error or a
// re-login (server-side objects die with the session) the watcher sets itself up again, with
// backoff and a cheap probe first, and then calls `on_change` with every watched type: what
// changed while it was blind is unknown.
//
// `on_change` runs on the watcher's thread, outside every lock; it must be quick (schedule a
// refresh). Thread-safe.

#include <atomic>
#include <functional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "common/backoff.h"
#include "common/clock.h"
#include "vsphere/client.h"
#include "vsphere/moref.h"
#include "vsphere/property_collector.h"

namespace ccm::vsphere {

struct ChangeWatcherOptions {
  std::string name;                              // for logs: "datastore mounts of vc1"
  std::vector<PropertySpec> watched;             // one per type: its paths (all = false)
  int max_wait_seconds = kStreamMaxWaitSeconds;  // WaitForUpdatesEx maxWaitSeconds
  absl::Duration wait_timeout_margin = absl::Seconds(10);
  BackoffPolicy resync_backoff{absl::Milliseconds(200), absl::Seconds(2), 2.0, 0.1};
  absl::Duration probe_timeout = absl::Seconds(3);
  Clock* clock = nullptr;  // null: the real clock
};

struct ChangeWatcherStats {
  uint64_t setups = 0;   // successful set-ups (the first included)
  uint64_t changes = 0;  // on_change calls
  uint64_t waits = 0;    // WaitForUpdatesEx calls after the set-up
  uint64_t stream_errors = 0;
  bool watching = false;
};

class ChangeWatcher {
 public:
  using OnChange = std::function<void(const std::set<std::string>& types)>;
  // `client` must outlive the watcher.
  ChangeWatcher(Client& client, ChangeWatcherOptions options, OnChange on_change);
  ~ChangeWatcher();  // Stop()
  ChangeWatcher(const ChangeWatcher&) = delete;
  ChangeWatcher& operator=(const ChangeWatcher&) = delete;

  void Start();
  void Stop();  // idempotent; ends a pending wait at once
  ChangeWatcherStats stats() const;
  // True once set up (tests wait for it before changing things).
  bool WaitUntilWatching(absl::Duration timeout) const;

 private:
  void Run();
  absl::Status SetUp();
  absl::Status Watch();
  void TearDown();
  std::set<std::string> AllTypes() const;
  bool stopping() const { return stop_.HasBeenNotified(); }

  Client& client_;
  const ChangeWatcherOptions options_;
  const OnChange on_change_;
  Clock* const clock_;
  absl::Notification stop_;
  absl::Notification exited_;        // Run() returned
  std::atomic<bool> cancel_{false};  // set by Stop(): ends a transfer under way
  absl::Mutex stop_mu_;              // serialises Start and Stop
  std::thread thread_;
  mutable absl::Mutex mu_;
  ChangeWatcherStats stats_ ABSL_GUARDED_BY(mu_);
  Moref waiting_collector_ ABSL_GUARDED_BY(mu_);  // for Stop's CancelWaitForUpdates
  // The watcher thread's own (no lock needed).
  Moref collector_;
  std::vector<Moref> views_;
  std::string version_;
  uint64_t session_generation_ = 0;
};

}  // namespace ccm::vsphere
