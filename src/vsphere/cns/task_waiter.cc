#include <algorithm>
#include <limits>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/call_deadline.h"
#include "common/logging.h"
#include "common/status_macros.h"
#include "vsphere/cns/task.h"
#include "vsphere/property_collector.h"
#include "vsphere/soap.h"
#include "vsphere/update_stream.h"

namespace ccm::vsphere::cns {
namespace {

// A leader asks vCenter to answer this much before its deadline (the answer's trip), and so
// leads only with at least a second more than that left.
constexpr absl::Duration kAnswerSlack = absl::Milliseconds(500);
constexpr absl::Duration kLeadAtLeast = absl::Milliseconds(1500);  // 1 s + kAnswerSlack

// Tasks taken out of the view that are remembered (TaskWaiter::removed_): more than a
// controller's tasks in a CSI RPC timeout at full speed, so a retry that resumes one finds it.
constexpr size_t kKeepRemoved = 4096;

// The task paths the filter watches: the state and what a finished task leaves (not progress).
const PropertySpec kTaskPaths{"Task", {"info.state", "info.result", "info.error"}, false};

// Keeps the objects of one answer; a NotAuthenticated per property is a lost session.
class Collected final : public UpdateHandler {
 public:
  absl::Status OnObject(const std::string&, ObjectUpdate u) override {
    for (const MissingProperty& m : u.missing) {
      if (m.fault_type == "NotAuthenticated") {
        return absl::UnauthenticatedError(absl::StrCat("NotAuthenticated reading ", u.obj.value));
      }
    }
    objects.push_back(std::move(u));
    return absl::OkStatus();
  }
  absl::Status OnMissingObject(const std::string&, MissingObject m) override {
    missing.push_back(std::move(m.obj));
    return absl::OkStatus();
  }
  std::vector<ObjectUpdate> objects;
  std::vector<Moref> missing;
};

std::string MorefsXml(absl::string_view tag, const std::vector<Moref>& refs) {
  std::string out;
  for (const Moref& r : refs) absl::StrAppend(&out, MorefXml(tag, r));
  return out;
}

}  // namespace

TaskWaiter::TaskWaiter(Client& vim, TaskWaitOptions options)
    : vim_(vim),
      options_(std::move(options)),
      clock_(options_.clock        ? *options_.clock
             : vim.options().clock ? *vim.options().clock
                                   : Clock::Real()) {}

TaskWaiter::~TaskWaiter() {
  closing_ = true;  // ends the leader's wait (CallStreaming's cancel) and wakes the others
  {
    absl::MutexLock l(&mu_);
    auto idle = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return waiters_.empty(); };
    mu_.Await(absl::Condition(&idle));
  }
  absl::MutexLock l(&setup_mu_);
  TearDownLocked();
}

TaskWaiterStats TaskWaiter::stats() const {
  absl::MutexLock l(&mu_);
  TaskWaiterStats s = stats_;
  s.waiting = waiters_.size();
  return s;
}

absl::StatusOr<TaskInfo> TaskWaiter::Wait(const Moref& task) {
  Waiter w{task, clock_.Now() + options_.timeout, 0, std::nullopt};
  if (const absl::Time caller = CallDeadline(); caller != absl::InfiniteFuture()) {
    // The caller's deadline, on this waiter's clock.
    const absl::Time bound = clock_.Now() + (caller - absl::Now());
    if (bound < w.deadline) {
      w.deadline = bound;
      w.callers_deadline = true;
    }
  }
  mu_.Lock();
  // Another session may be a restarted vCenter, whose task IDs start again.
  if (current_.session != vim_.session_generation()) ForgetDone();
  if (auto done = done_.find(task.value); done != done_.end()) {
    absl::StatusOr<TaskInfo> known = done->second;
    mu_.Unlock();
    return known;
  }
  if (removed_.contains(task.value)) {  // waited for before, and taken out of the view since
    mu_.Unlock();
    absl::StatusOr<std::optional<TaskInfo>> now = ReadTask(task);
    if (!now.ok()) return now.status();
    if (now->has_value()) return **std::move(now);
    mu_.Lock();  // still running: its end is reported once it is in the view again
  }
  auto it = waiters_.emplace(task.value, &w);
  int rejoins = 0;
  while (!w.result) {
    absl::Status s = Step(w, rejoins);
    if (!s.ok() && !w.result) w.result = std::move(s);
  }
  waiters_.erase(it);
  // The last waiter of a task in the view (joined, or heard done there) takes it out.
  const uint64_t view = current_.id;
  const bool in_view = view != 0 && waiters_.count(task.value) == 0 &&
                       (w.setup == view || done_.contains(task.value));
  mu_.Unlock();
  if (in_view) {  // out of the view with the next ModifyListView
    absl::MutexLock s(&setup_mu_);
    if (stream_.id == view) finished_.push_back(task);
  }
  return *std::move(w.result);
}

// One step of a waiter, with mu_ held (released while it talks to vCenter or sleeps).
absl::Status TaskWaiter::Step(Waiter& w, int& rejoins) {
  if (closing_) {
    return absl::UnavailableError(
        absl::StrCat("stopped waiting for task ", w.task.value, ": shutting down"));
  }
  if (clock_.Now() >= w.deadline) {
    if (w.callers_deadline) {
      return absl::DeadlineExceededError(
          absl::StrCat("task ", w.task.ToString(),
                       " not finished by the caller's deadline; it goes on in vCenter"));
    }
    return absl::DeadlineExceededError(absl::StrCat("task ", w.task.ToString(),
                                                    " still not finished after ",
                                                    absl::FormatDuration(options_.timeout)));
  }
  if (w.setup == 0 || w.setup != current_.id) {  // not (or no longer) in the view
    if (w.setup != 0 && ++rejoins > options_.max_rejoins) {
      return absl::UnavailableError(absl::StrCat("waiting for task ", w.task.value,
                                                 ": the update stream broke ", rejoins - 1,
                                                 " times in a row"));
    }
    if (w.setup != 0) {
      mu_.Unlock();
      clock_.SleepFor(BackoffDelay(options_.rejoin_backoff, rejoins - 1), nullptr);
      mu_.Lock();
    }
    mu_.Unlock();
    absl::Status s = Join(w);
    mu_.Lock();
    return s;
  }
  const uint64_t joined = w.setup;
  if (!leading_ && w.deadline - clock_.Now() < kLeadAtLeast) {
    // Too little time left for a wait vCenter would answer in time: only hear from another
    // leader until the deadline (the task's end, if missed, is found by the retry).
    auto news = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return w.result.has_value() || current_.id != joined || closing_;
    };
    mu_.AwaitWithTimeout(absl::Condition(&news), w.deadline - clock_.Now());
    return absl::OkStatus();
  }
  if (!leading_) {
    leading_ = true;
    mu_.Unlock();
    const bool answered = Lead(w);
    mu_.Lock();
    leading_ = false;
    if (answered) rejoins = 0;  // the stream works again: breaks count "in a row" afresh
    return absl::OkStatus();
  }
  // Another waiter waits for updates: sleep until this task is done, it hands over, or the
  // stream is set up again.
  auto wake = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return w.result.has_value() || !leading_ || current_.id != joined || closing_;
  };
  mu_.AwaitWithTimeout(absl::Condition(&wake), w.deadline - clock_.Now());
  // The leader handed over on the same stream: its wait was answered.
  if (!leading_ && current_.id == joined) rejoins = 0;
  return absl::OkStatus();
}

// Puts the waiter's task in the current stream's view (setting the stream up first if needed),
// with the tasks of every other waiter not in it yet: one ModifyListView for all of them (many
// tasks started at once cost one call, not one each).
absl::Status TaskWaiter::Join(Waiter& w) {
  if (const int64_t last = last_add_ns_.load(); last != std::numeric_limits<int64_t>::min()) {
    Gather(w, absl::FromUnixNanos(last), absl::ZeroDuration());
  }
  absl::MutexLock s(&setup_mu_);
  if (stream_.id == 0 || stream_.session != vim_.session_generation()) {
    CCM_RETURN_IF_ERROR(SetUpLocked());
  }
  std::set<Waiter*> joining;
  std::vector<Moref> tasks;
  std::vector<Moref> removed;
  {
    absl::MutexLock l(&mu_);
    if (w.setup == stream_.id || w.result) return absl::OkStatus();  // joined by another's call
    for (const auto& [id, other] : waiters_) {  // by task: a task's waiters are adjacent
      if (other->setup == stream_.id || other->result) continue;
      joining.insert(other);
      if (tasks.empty() || !(tasks.back() == other->task)) tasks.push_back(other->task);
    }
    removed = TakeFinishedLocked();
  }
  last_add_ns_ = absl::ToUnixNanos(clock_.Now());
  absl::StatusOr<SoapResponse> r = vim_.Call(
      "ModifyListView", absl::StrCat(MorefXml("_this", stream_.view), MorefsXml("add", tasks),
                                     MorefsXml("remove", removed)));
  absl::MutexLock l(&mu_);
  ++stats_.adds;
  std::vector<Waiter*> present;  // a waiter may have ended meanwhile (its deadline)
  for (const auto& [id, other] : waiters_) {
    if (joining.contains(other)) present.push_back(other);
  }
  if (!r.ok()) {
    std::optional<Moref> missing = MissingObjectOf(r.status());
    if (!missing) return Annotate(r.status(), absl::StrCat("waiting for task ", w.task.value));
    for (Waiter* o : present) {  // the others join again with the next call
      if (o->task == *missing) o->result = TaskVanishedError(o->task);
    }
    return absl::OkStatus();
  }
  std::set<std::string> unresolved;
  for (const pugi::xml_node& n : Children(r->body, "returnval")) {
    unresolved.insert(ParseMoref(n).value);
  }
  for (Waiter* o : present) {
    if (unresolved.contains(o->task.value)) {
      o->result = TaskVanishedError(o->task);
    } else {
      o->setup = stream_.id;
    }
  }
  return absl::OkStatus();
}

// Out of the view with the next ModifyListView: the finished tasks nobody waits for again (one
// that is waited for again stays; its last waiter puts it back in finished_).
std::vector<Moref> TaskWaiter::TakeFinishedLocked() {
  std::vector<Moref> removed;
  for (Moref& m : finished_) {
    if (waiters_.contains(m.value)) continue;
    done_.erase(m.value);
    if (removed_.insert(m.value).second) removed_order_.push_back(m.value);
    if (removed_order_.size() > kKeepRemoved) {
      removed_.erase(removed_order_.front());
      removed_order_.pop_front();
    }
    removed.push_back(std::move(m));
  }
  finished_.clear();
  return removed;
}

// Collector, view and filter for this session; the first WaitForUpdatesEx gives the version
// (the view is empty: nothing to report yet).
absl::Status TaskWaiter::SetUpLocked() {
  TearDownLocked();
  absl::StatusOr<ServiceContent> sc = vim_.GetServiceContent();
  if (!sc.ok()) return Annotate(sc.status(), "task waiting: set up");
  Stream made;
  made.session = vim_.session_generation();
  absl::StatusOr<SoapResponse> pc =
      vim_.Call("CreatePropertyCollector", MorefXml("_this", sc->property_collector));
  if (!pc.ok()) return Annotate(pc.status(), "task waiting: CreatePropertyCollector");
  made.collector = ParseMoref(pc->returnval());
  stream_ = made;  // destroyed by the next TearDownLocked whatever happens below
  absl::StatusOr<SoapResponse> view =
      vim_.Call("CreateListView", MorefXml("_this", sc->view_manager));
  if (!view.ok()) return Annotate(view.status(), "task waiting: CreateListView");
  stream_.view = made.view = ParseMoref(view->returnval());
  PropertyFilterSpec spec;
  spec.prop_set.push_back(kTaskPaths);
  spec.object_set.push_back(
      {made.view, true, {TraversalSpec{"traverseList", "ListView", "view", false, {}}}});
  absl::StatusOr<SoapResponse> filter =
      vim_.Call("CreateFilter",
                absl::StrCat(MorefXml("_this", made.collector), PropertyFilterSpecXml(spec, "spec"),
                             TextXml("partialUpdates", "false")));
  if (!filter.ok()) return Annotate(filter.status(), "task waiting: CreateFilter");
  Collected first;
  UpdateStreamParser parser(first);
  CCM_RETURN_IF_ERROR(Annotate(
      vim_.CallStreaming("WaitForUpdatesEx", WaitForUpdatesExArgs(made.collector, "", 0), parser),
      "task waiting: first WaitForUpdatesEx"));
  made.id = stream_.id = ++setups_;
  absl::MutexLock l(&mu_);
  current_ = made;
  version_ = parser.version();
  ForgetDone();  // perhaps a restarted vCenter, whose task IDs start again
  ++stats_.setups;
  return absl::OkStatus();
}

void TaskWaiter::TearDownLocked() {
  const Stream old = std::exchange(stream_, Stream{});
  finished_.clear();
  if (old.collector.empty() || old.session != vim_.session_generation()) return;
  // Destroying the collector destroys its filter; the view is destroyed on its own.
  absl::StatusOr<SoapResponse> r =
      vim_.Call("DestroyPropertyCollector", MorefXml("_this", old.collector));
  if (!r.ok()) VLOG(2, "task waiting: DestroyPropertyCollector: {}", r.status());
  if (old.view.empty()) return;
  absl::Status s = DestroyView(vim_, old.view);
  if (!s.ok()) VLOG(2, "task waiting: DestroyView: {}", s);
}

void TaskWaiter::Gather(const Waiter& w, absl::Time last, absl::Duration keep) {
  {
    absl::MutexLock l(&mu_);
    if (waiters_.size() < 2) return;  // alone: nobody to share the call with
  }
  const absl::Time now = clock_.Now();
  const absl::Duration pause = std::min(last + options_.gather - now, w.deadline - keep - now);
  if (pause > absl::ZeroDuration()) clock_.SleepFor(pause, nullptr);
}

// One WaitForUpdatesEx on behalf of every waiter; bounded by `w`'s deadline.
bool TaskWaiter::Lead(const Waiter& w) {
  Stream stream;
  std::string version;
  absl::Time last_answer;
  {
    absl::MutexLock l(&mu_);
    last_answer = last_answer_;
  }
  // The changes that come meanwhile are heard with one wait.
  Gather(w, last_answer, kLeadAtLeast);
  {
    absl::MutexLock l(&mu_);
    stream = current_;
    version = version_;
    ++stats_.waits;
  }
  // vCenter answers by the waiter's deadline (rounded down: the HTTP request, bounded by the
  // caller's deadline too, must not end first and break the stream every waiter shares).
  const absl::Duration left = w.deadline - clock_.Now();
  const int max_wait = static_cast<int>(
      std::clamp<int64_t>(absl::ToInt64Seconds(absl::Floor(left - kAnswerSlack, absl::Seconds(1))),
                          1, options_.max_wait_seconds));
  Collected got;
  UpdateStreamParser parser(got);
  absl::Status s = vim_.CallStreaming(
      "WaitForUpdatesEx", WaitForUpdatesExArgs(stream.collector, version, max_wait), parser,
      absl::Seconds(max_wait) + options_.wait_timeout_margin, &closing_);
  if (closing_) return false;
  if (!s.ok()) {
    StreamBroke(stream, s);
    return false;
  }
  absl::MutexLock l(&mu_);
  last_answer_ = clock_.Now();
  if (current_.id != stream.id) return false;  // set up again meanwhile: this answer is stale
  if (parser.has_updates()) version_ = parser.version();
  for (const ObjectUpdate& u : got.objects) Dispatch(u);
  for (const Moref& m : got.missing) {
    auto [from, to] = waiters_.equal_range(m.value);
    for (auto it = from; it != to; ++it) it->second->result = TaskVanishedError(m);
  }
  return true;
}

void TaskWaiter::Dispatch(const ObjectUpdate& u) {
  auto [from, to] = waiters_.equal_range(u.obj.value);
  if (u.kind == ObjectUpdateKind::kLeave) {
    if (removed_.erase(u.obj.value) > 0) return;  // taken out by us (see removed_)
    for (auto it = from; it != to; ++it) it->second->result = TaskVanishedError(u.obj);
    return;
  }
  absl::StatusOr<std::optional<TaskInfo>> info = DoneTaskInfo(u);
  if (info.ok() && !info->has_value()) return;  // queued or running
  absl::StatusOr<TaskInfo> result =
      info.ok() ? absl::StatusOr<TaskInfo>(**info) : absl::StatusOr<TaskInfo>(info.status());
  done_.insert_or_assign(u.obj.value, result);  // until it is taken out of the view
  for (auto it = from; it != to; ++it) it->second->result = result;
}

absl::StatusOr<std::optional<TaskInfo>> TaskWaiter::ReadTask(const Moref& task) {
  PropertyFilterSpec spec;
  spec.prop_set.push_back({"Task", {"info"}, false});
  spec.object_set.push_back({task, false, {}});
  absl::StatusOr<std::vector<ObjectContent>> got = RetrieveProperties(vim_, spec);
  if (!got.ok()) {
    if (MissingObjectOf(got.status())) return TaskVanishedError(task);
    return Annotate(got.status(), absl::StrCat("reading task ", task.value));
  }
  if (got->empty() || !got->front().Get("info")) return TaskVanishedError(task);
  CCM_ASSIGN_OR_RETURN(TaskInfo info, ParseTaskInfo(got->front().doc, got->front().Get("info")));
  if (!info.done()) return std::optional<TaskInfo>();
  return std::optional<TaskInfo>(std::move(info));
}

void TaskWaiter::ForgetDone() {
  done_.clear();
  removed_.clear();
  removed_order_.clear();
}

// The stream `id` failed: it is set up again by the next waiter that joins, and every waiter
// adds its task again.
void TaskWaiter::StreamBroke(const Stream& broken, const absl::Status& s) {
  LOG_WARN("task waiting: update stream of {}: {}; setting it up again", vim_.options().url, s);
  if (IsNotAuthenticated(s) || absl::IsUnauthenticated(s)) vim_.InvalidateSession(broken.session);
  absl::MutexLock l(&setup_mu_);
  if (stream_.id == broken.id) TearDownLocked();
  absl::MutexLock m(&mu_);
  ++stats_.stream_errors;
  if (current_.id == broken.id) {
    current_ = Stream{};
    ForgetDone();
  }
}

}  // namespace ccm::vsphere::cns
