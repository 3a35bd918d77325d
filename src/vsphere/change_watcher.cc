#include "vsphere/change_watcher.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/logging.h"
#include "common/status_macros.h"
#include "vsphere/soap.h"
#include "vsphere/update_stream.h"

namespace ccm::vsphere {
namespace {

// Keeps only which types changed; a NotAuthenticated per property is a lost session.
class TypesSeen final : public UpdateHandler {
 public:
  absl::Status OnObject(const std::string&, ObjectUpdate update) override {
    for (const MissingProperty& m : update.missing) {
      if (m.fault_type == "NotAuthenticated") {
        return absl::UnauthenticatedError(
            absl::StrCat("NotAuthenticated reading ", update.obj.value, " ", m.path));
      }
    }
    types.insert(update.obj.type);
    return absl::OkStatus();
  }
  std::set<std::string> types;
};

}  // namespace

ChangeWatcher::ChangeWatcher(Client& client, ChangeWatcherOptions options, OnChange on_change)
    : client_(client),
      options_(std::move(options)),
      on_change_(std::move(on_change)),
      clock_(options_.clock ? options_.clock : &Clock::Real()) {}

ChangeWatcher::~ChangeWatcher() { Stop(); }

void ChangeWatcher::Start() {
  absl::MutexLock l(&stop_mu_);
  if (thread_.joinable() || stopping()) return;
  thread_ = std::thread([this] {
    Run();
    exited_.Notify();
  });
}

void ChangeWatcher::Stop() {
  absl::MutexLock l(&stop_mu_);
  if (!stop_.HasBeenNotified()) stop_.Notify();
  cancel_.store(true);  // a wait whose collector vCenter lost, or a hung vCenter, ends too
  if (!thread_.joinable()) return;
  // Ends the pending WaitForUpdatesEx now instead of after maxWaitSeconds.
  CancelWaitsUntilExited(
      client_,
      [this] {
        absl::MutexLock m(&mu_);
        return waiting_collector_;
      },
      exited_, options_.name);
  thread_.join();
  TearDown();
}

ChangeWatcherStats ChangeWatcher::stats() const {
  absl::MutexLock l(&mu_);
  return stats_;
}

bool ChangeWatcher::WaitUntilWatching(absl::Duration timeout) const {
  absl::MutexLock l(&mu_);
  return mu_.AwaitWithTimeout(absl::Condition(&stats_.watching), timeout);
}

std::set<std::string> ChangeWatcher::AllTypes() const {
  std::set<std::string> out;
  for (const PropertySpec& p : options_.watched) out.insert(p.type);
  return out;
}

void ChangeWatcher::Run() {
  int failures = 0;
  bool blind = false;  // a stream broke: changes may have been missed
  while (!stopping()) {
    absl::Status s = failures > 0 ? client_.Probe(options_.probe_timeout) : absl::OkStatus();
    if (s.ok()) s = SetUp();
    if (s.ok()) {
      if (failures > 0) LOG_INFO("{}: watching again", options_.name);
      failures = 0;
      if (blind) {
        {
          absl::MutexLock l(&mu_);
          ++stats_.changes;
        }
        on_change_(AllTypes());
      }
      s = Watch();
    }
    if (stopping()) break;
    blind = true;
    if (IsNotAuthenticated(s) || absl::IsUnauthenticated(s)) {
      client_.InvalidateSession(session_generation_);
    }
    {
      absl::MutexLock l(&mu_);
      stats_.watching = false;
      ++stats_.stream_errors;
      waiting_collector_ = {};
    }
    const absl::Duration d = BackoffDelay(options_.resync_backoff, failures);
    if (failures == 0) {
      LOG_WARN("{}: {}; set up again in {}", options_.name, s, absl::FormatDuration(d));
    } else {
      VLOG(1, "{}: {}; set up again in {}", options_.name, s, absl::FormatDuration(d));
    }
    ++failures;
    clock_->SleepFor(d, &stop_);
  }
}

absl::Status ChangeWatcher::SetUp() {
  TearDown();
  const std::string what = absl::StrCat(options_.name, ": set up");
  absl::StatusOr<ServiceContent> sc = client_.GetServiceContent();
  if (!sc.ok()) return Annotate(sc.status(), what);
  absl::StatusOr<SoapResponse> pc =
      client_.Call("CreatePropertyCollector", MorefXml("_this", sc->property_collector));
  if (!pc.ok()) return Annotate(pc.status(), what);
  collector_ = ParseMoref(pc->returnval());
  session_generation_ = client_.session_generation();
  for (const PropertySpec& watched : options_.watched) {
    absl::StatusOr<Moref> view =
        CreateContainerView(client_, sc->root_folder, {watched.type}, true);
    if (!view.ok()) return Annotate(view.status(), what);
    views_.push_back(*view);
    PropertyFilterSpec spec;
    spec.prop_set.push_back(watched);
    spec.object_set.push_back(
        {*view, true, {TraversalSpec{"traverseView", "ContainerView", "view", false, {}}}});
    absl::StatusOr<SoapResponse> filter =
        client_.Call("CreateFilter", absl::StrCat(MorefXml("_this", collector_),
                                                  PropertyFilterSpecXml(spec, "spec"),
                                                  TextXml("partialUpdates", "false")));
    if (!filter.ok()) return Annotate(filter.status(), what);
  }
  // The current state: only its version matters (a real vCenter may page it: truncated).
  version_.clear();
  do {
    TypesSeen ignored;
    UpdateStreamParser parser(ignored);
    CCM_RETURN_IF_ERROR(client_.CallStreaming("WaitForUpdatesEx",
                                              WaitForUpdatesExArgs(collector_, version_, 0), parser,
                                              absl::ZeroDuration(), &cancel_));
    if (!parser.has_updates()) break;
    version_ = parser.version();
    if (!parser.truncated()) break;
  } while (!stopping());
  absl::MutexLock l(&mu_);
  ++stats_.setups;
  stats_.watching = true;
  waiting_collector_ = collector_;
  return absl::OkStatus();
}

absl::Status ChangeWatcher::Watch() {
  const absl::Duration timeout =
      absl::Seconds(options_.max_wait_seconds) + options_.wait_timeout_margin;
  while (!stopping()) {
    if (client_.session_generation() != session_generation_) {
      return absl::UnavailableError("vCenter session changed (re-login): filters are gone");
    }
    TypesSeen seen;
    UpdateStreamParser parser(seen);
    absl::Status s = client_.CallStreaming(
        "WaitForUpdatesEx", WaitForUpdatesExArgs(collector_, version_, options_.max_wait_seconds),
        parser, timeout, &cancel_);
    {
      absl::MutexLock l(&mu_);
      ++stats_.waits;
    }
    if (stopping()) return absl::OkStatus();
    CCM_RETURN_IF_ERROR(s);
    if (!parser.has_updates()) continue;
    version_ = parser.version();
    if (seen.types.empty()) continue;
    {
      absl::MutexLock l(&mu_);
      ++stats_.changes;
    }
    on_change_(seen.types);
  }
  return absl::OkStatus();
}

void ChangeWatcher::TearDown() {
  const bool same_session = client_.session_generation() == session_generation_;
  if (same_session && !collector_.empty()) {
    auto r = client_.Call("DestroyPropertyCollector", MorefXml("_this", collector_));
    if (!r.ok()) VLOG(2, "{}: DestroyPropertyCollector: {}", options_.name, r.status());
  }
  for (const Moref& v : views_) {
    if (!same_session) break;
    absl::Status s = DestroyView(client_, v);
    if (!s.ok()) VLOG(2, "{}: DestroyView {}: {}", options_.name, v.value, s);
  }
  collector_ = {};
  views_.clear();
  version_.clear();
}

}  // namespace ccm::vsphere
