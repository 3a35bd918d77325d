#pragma once
// Waiting for vCenter tasks (CNS answers every change with one) through the property collector,
// as vCenter means it to be done: the task is put in a ListView of tasks being waited on, and one
// WaitForUpdatesEx at a time, shared by every waiting thread, reports the tasks' `info.state`
// (with `info.result` and `info.error`) as it changes. No polling: a task costs one
// ModifyListView (which also takes the tasks finished since out of the view) and the waits that
// report its transitions, which concurrent tasks share; it is seen done as soon as vCenter
// reports it.
//
// The collector, the view and the filter are made once per vCenter session (four requests:
// CreatePropertyCollector, CreateListView, CreateFilter and the first WaitForUpdatesEx). They die
// with the session: after a re-login or a broken stream they are made again and every waiting
// task is added again; its current state comes with it, so nothing that happened while the stream
// was down is missed. The thread that waits is one of the callers (the first to find none
// waiting); the others sleep until it hands over.
//
// A task that vanished before it was seen done (vCenter forgets tasks after a while; a restarted
// vCenter knows none) has an unknown outcome: Unavailable, never NotFound (the caller must not
// think the volume is gone).

#include <atomic>
#include <cstdint>
#include <deque>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/backoff.h"
#include "vsphere/client.h"
#include "vsphere/cns/wire.h"
#include "vsphere/moref.h"
#include "vsphere/update_set.h"

namespace ccm::vsphere::cns {

struct TaskWaitOptions {
  absl::Duration timeout = absl::Minutes(5);  // the reference's CNS operation timeout (300 s)
  int max_wait_seconds = 120;                 // WaitForUpdatesEx maxWaitSeconds (at most)
  absl::Duration wait_timeout_margin = absl::Seconds(10);
  // Between attempts to set the stream up again after it broke.
  BackoffPolicy rejoin_backoff{absl::Milliseconds(100), absl::Seconds(2), 2.0, 0.0};
  int max_rejoins = 3;  // broken streams in a row before a waiter gives the error back
  // While other tasks are waited for, at most one ModifyListView, and one WaitForUpdatesEx after
  // an answer, per `gather`: the tasks that start or change meanwhile share the next call.
  // vCenter requests per task then fall as tasks come faster (a steady 30 tasks a second cost at
  // most 20 adds and 20 waits a second, not 30 and 60); a task's end is seen at most this much
  // later. A task waited for alone never gathers. Zero: no gathering.
  absl::Duration gather = absl::Milliseconds(50);
  Clock* clock = nullptr;  // null: the client's
};

// What the waiter did (tests, benchmarks).
struct TaskWaiterStats {
  uint64_t setups = 0;  // collector + view + filter made
  uint64_t adds = 0;    // ModifyListView calls
  uint64_t waits = 0;   // WaitForUpdatesEx calls after the set-up
  uint64_t stream_errors = 0;
  uint64_t waiting = 0;  // Wait calls now in progress
};

class TaskWaiter {
 public:
  // `vim` must outlive the waiter.
  TaskWaiter(Client& vim, TaskWaitOptions options = {});
  // Ends pending waits (Unavailable), then destroys the collector and the view.
  ~TaskWaiter();
  TaskWaiter(const TaskWaiter&) = delete;
  TaskWaiter& operator=(const TaskWaiter&) = delete;

  // The task's final info (state success or error). Thread-safe.
  absl::StatusOr<TaskInfo> Wait(const Moref& task);
  TaskWaiterStats stats() const;

 private:
  struct Waiter {
    Moref task;
    absl::Time deadline;
    uint64_t setup = 0;  // the set-up its task was added to (0: none yet)
    std::optional<absl::StatusOr<TaskInfo>> result;
    bool callers_deadline = false;  // `deadline` is the caller's (common/call_deadline.h)
  };
  struct Stream {  // one set-up's server-side objects
    Moref collector;
    Moref view;
    uint64_t session = 0;  // Client::session_generation() when made
    uint64_t id = 0;       // counts set-ups; 0 = none
  };

  absl::Status Join(Waiter& w) ABSL_LOCKS_EXCLUDED(mu_, setup_mu_);
  // Sleeps until `gather` after `last` when other tasks are waited for, but never into the last
  // `keep` before w's deadline.
  void Gather(const Waiter& w, absl::Time last, absl::Duration keep);
  absl::Status SetUpLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(setup_mu_);
  std::vector<Moref> TakeFinishedLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(setup_mu_, mu_);
  // True when the stream answered (updates or none before maxWait), false when it broke.
  bool Lead(const Waiter& w) ABSL_LOCKS_EXCLUDED(mu_, setup_mu_);
  void Dispatch(const ObjectUpdate& u) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void StreamBroke(const Stream& broken, const absl::Status& s) ABSL_LOCKS_EXCLUDED(mu_, setup_mu_);
  absl::Status Step(Waiter& w, int& rejoins) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void TearDownLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(setup_mu_);

  Client& vim_;
  const TaskWaitOptions options_;
  Clock& clock_;
  std::atomic<bool> closing_{false};

  // Set-up and ModifyListView, one at a time. Taken before mu_, never while waiting for updates.
  absl::Mutex setup_mu_ ABSL_ACQUIRED_BEFORE(mu_);
  Stream stream_ ABSL_GUARDED_BY(setup_mu_);
  uint64_t setups_ ABSL_GUARDED_BY(setup_mu_) = 0;
  // When the last ModifyListView was sent (read before setup_mu_ is taken: joiners gather
  // without holding it).
  std::atomic<int64_t> last_add_ns_{std::numeric_limits<int64_t>::min()};  // min: none yet
  std::vector<Moref> finished_ ABSL_GUARDED_BY(setup_mu_);  // to take out of the view

  mutable absl::Mutex mu_;
  std::multimap<std::string, Waiter*> waiters_ ABSL_GUARDED_BY(mu_);  // by task MOID
  // The final info of the tasks heard done that are still in the view, by MOID: a waiter that
  // comes after it (another volume of a batch task) has it at once, since a task added to the
  // view again while it is still there is not reported again.
  std::map<std::string, absl::StatusOr<TaskInfo>> done_ ABSL_GUARDED_BY(mu_);
  // The tasks this waiter took out of the view (the last kKeepRemoved). Their leaving is its own
  // doing, not vCenter forgetting them, and must not fail a waiter that has come for one since;
  // such a waiter (a retry resuming the task) reads the task once before it joins, since a task
  // added again that has not changed since may not be reported again (the simulator does not).
  std::set<std::string> removed_ ABSL_GUARDED_BY(mu_);
  std::deque<std::string> removed_order_ ABSL_GUARDED_BY(mu_);
  // The task's info read with RetrievePropertiesEx: nullopt while it runs.
  absl::StatusOr<std::optional<TaskInfo>> ReadTask(const Moref& task);
  void ForgetDone() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  Stream current_ ABSL_GUARDED_BY(mu_);  // the stream_ the leader waits on
  std::string version_ ABSL_GUARDED_BY(mu_);
  absl::Time last_answer_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  bool leading_ ABSL_GUARDED_BY(mu_) = false;
  TaskWaiterStats stats_ ABSL_GUARDED_BY(mu_);
};

// The final TaskInfo carried by a task's update (its info.state, info.result and info.error
// changes), or nullopt while the task is queued or running. An unknown state is an error.
absl::StatusOr<std::optional<TaskInfo>> DoneTaskInfo(const ObjectUpdate& u);

// True for a wait's Unavailable about a task vCenter no longer knows (and the errors that carry
// it on): whoever recorded the task must find out the outcome another way.
bool IsTaskVanished(const absl::Status& s);
// That Unavailable, for `task`.
absl::Status TaskVanishedError(const Moref& task);

}  // namespace ccm::vsphere::cns
