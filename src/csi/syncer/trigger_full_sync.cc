#include "csi/syncer/trigger_full_sync.h"

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/logging.h"

namespace ccm::csi::syncer {

const kube::Resource& TriggerCsiFullSyncs() {
  static const auto* r = new kube::Resource{"cns.vmware.com", "v1alpha1", "triggercsifullsyncs",
                                            "TriggerCsiFullSync", false};
  return *r;
}

TriggerDecision DecideTrigger(const TriggerState& s) {
  using A = TriggerDecision::Action;
  if (s.name != kTriggerCsiFullSyncName) {
    return {A::kRefuse,
            absl::StrCat("Only \"", kTriggerCsiFullSyncName,
                         "\" should be used to trigger full sync and not \"", s.name, "\"")};
  }
  if (s.spec_id == 0 || s.spec_id == s.last_id) return {A::kNone, ""};
  if (s.spec_id != s.last_id + 1) {
    return {
        A::kRefuse,
        absl::StrCat("TriggerSyncID: ", s.spec_id,
                     " is invalid. TriggerSyncID should be one greater than LastTriggerSyncID.")};
  }
  if (s.in_progress) {
    return {
        A::kSkipRunning,
        absl::StrCat("A full sync is already in progress. Ignoring this sync with triggersync ID: ",
                     s.spec_id)};
  }
  return {A::kRun, ""};
}

TriggerState TriggerStateOf(const kube::Json& obj) {
  TriggerState s;
  s.name = obj.value("/metadata/name"_json_pointer, std::string());
  auto id = [&](const kube::Json::json_pointer& p) -> uint64_t {
    const kube::Json* v = obj.contains(p) ? &obj.at(p) : nullptr;
    return v != nullptr && v->is_number_unsigned() ? v->get<uint64_t>()
           : v != nullptr && v->is_number_integer() && v->get<int64_t>() > 0
               ? static_cast<uint64_t>(v->get<int64_t>())
               : 0;
  };
  s.spec_id = id("/spec/triggerSyncID"_json_pointer);
  s.last_id = id("/status/lastTriggerSyncID"_json_pointer);
  s.in_progress = obj.value("/status/inProgress"_json_pointer, false);
  return s;
}

namespace {

std::string Rfc3339(absl::Time t) {
  return absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", t, absl::UTCTimeZone());
}

}  // namespace

TriggerFullSyncController::TriggerFullSyncController(kube::Client& client,
                                                     std::function<absl::Status()> full_sync,
                                                     kube::EventRecorder* events)
    : client_(client),
      full_sync_(std::move(full_sync)),
      events_(events),
      informer_(client, TriggerCsiFullSyncs(), kube::InformerOptions{}) {
  kube::ResourceEventHandler h;
  auto wake = [this] {
    absl::MutexLock l(&mu_);
    pending_ = true;
  };
  h.on_add = [wake](const kube::Json&) { wake(); };
  h.on_update = [wake](const kube::Json&, const kube::Json&) { wake(); };
  informer_.AddEventHandler(std::move(h));
}

TriggerFullSyncController::~TriggerFullSyncController() { Stop(); }

absl::Status TriggerFullSyncController::Start() {
  absl::StatusOr<kube::Json> got = client_.Get(TriggerCsiFullSyncs(), "", kTriggerCsiFullSyncName);
  if (!got.ok() && absl::IsNotFound(got.status())) {
    kube::Json obj = {{"apiVersion", "cns.vmware.com/v1alpha1"},
                      {"kind", "TriggerCsiFullSync"},
                      {"metadata", {{"name", kTriggerCsiFullSyncName}}},
                      {"spec", {{"triggerSyncID", 0}}},
                      {"status", {{"inProgress", false}, {"lastTriggerSyncID", 0}}}};
    absl::StatusOr<kube::Json> made = client_.Create(TriggerCsiFullSyncs(), "", obj);
    if (!made.ok() && !absl::IsAlreadyExists(made.status())) {
      return absl::Status(made.status().code(),
                          absl::StrCat("TriggerCsiFullSync ", kTriggerCsiFullSyncName,
                                       ": create: ", made.status().message()));
    }
    LOG_INFO("TriggerCsiFullSync {} created", kTriggerCsiFullSyncName);
  } else if (!got.ok()) {
    return absl::Status(
        got.status().code(),
        absl::StrCat("TriggerCsiFullSync ", kTriggerCsiFullSyncName, ": ", got.status().message()));
  } else if (TriggerStateOf(*got).in_progress) {
    // An earlier process ended during a sync: that one is not running any more.
    (*got)["status"]["inProgress"] = false;
    if (absl::Status s = WriteStatus(*got); !s.ok()) return s;
  }
  informer_.Start();
  worker_ = std::thread([this] { Work(); });
  return absl::OkStatus();
}

void TriggerFullSyncController::Stop() {
  {
    absl::MutexLock l(&mu_);
    stopping_ = true;
  }
  if (worker_.joinable()) worker_.join();
  informer_.Stop();
}

void TriggerFullSyncController::Work() {
  while (true) {
    {
      absl::MutexLock l(&mu_);
      auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return pending_ || stopping_; };
      mu_.Await(absl::Condition(&ready));
      if (stopping_) return;
      pending_ = false;
    }
    ReconcileOnce();
  }
}

absl::Status TriggerFullSyncController::WriteStatus(kube::Json obj) {
  absl::StatusOr<kube::Json> r = client_.Update(TriggerCsiFullSyncs(), obj);
  if (!r.ok()) {
    LOG_WARN("TriggerCsiFullSync {}: update: {}", kTriggerCsiFullSyncName, r.status().message());
    return r.status();
  }
  return absl::OkStatus();
}

void TriggerFullSyncController::Event(const kube::Json& obj, bool ok, const std::string& message) {
  if (ok) {
    LOG_INFO("TriggerCsiFullSync: {}", message);
  } else {
    LOG_WARN("TriggerCsiFullSync: {}", message);
  }
  if (events_ == nullptr) return;
  kube::ObjectReference ref{"TriggerCsiFullSync", "", kTriggerCsiFullSyncName,
                            obj.value("/metadata/uid"_json_pointer, std::string()),
                            "cns.vmware.com/v1alpha1"};
  if (ok) {
    events_->Normal(ref, "TriggerCsiFullSyncSucceeded", message);
  } else {
    events_->Warning(ref, "TriggerCsiFullSyncFailed", message);
  }
}

void TriggerFullSyncController::ReconcileOnce() {
  absl::StatusOr<kube::Json> got = client_.Get(TriggerCsiFullSyncs(), "", kTriggerCsiFullSyncName);
  if (!got.ok()) return;  // deleted, or the API is down: the next event tries again
  kube::Json obj = *std::move(got);
  const TriggerState s = TriggerStateOf(obj);
  const TriggerDecision d = DecideTrigger(s);
  using A = TriggerDecision::Action;
  if (d.action == A::kNone) return;
  if (d.action == A::kRefuse) return Event(obj, false, d.message);
  obj["status"]["lastTriggerSyncID"] = s.spec_id;
  if (d.action == A::kSkipRunning) {
    if (WriteStatus(obj).ok()) Event(obj, false, d.message);
    return;
  }
  obj["status"]["inProgress"] = true;
  obj["status"]["error"] = "";
  if (!WriteStatus(obj).ok()) {
    absl::MutexLock l(&mu_);
    pending_ = true;  // the next event (or a resync) tries again
    return;
  }
  const absl::Time start = absl::Now();
  LOG_INFO("TriggerCsiFullSync: full sync with triggerSyncID {}", s.spec_id);
  const absl::Status result = full_sync_();
  absl::StatusOr<kube::Json> now = client_.Get(TriggerCsiFullSyncs(), "", kTriggerCsiFullSyncName);
  if (!now.ok()) return;
  kube::Json& st = (*now)["status"];
  st["lastRunStartTimeStamp"] = Rfc3339(start);
  st["lastRunEndTimeStamp"] = Rfc3339(absl::Now());
  st["lastTriggerSyncID"] = s.spec_id;
  st["inProgress"] = false;
  std::string message;
  if (result.ok()) {
    st["lastSuccessfulStartTimeStamp"] = st["lastRunStartTimeStamp"];
    st["lastSuccessfulEndTimeStamp"] = st["lastRunEndTimeStamp"];
    st.erase("error");
    message = absl::StrCat("Full sync successful with triggerSyncID: ", s.spec_id);
  } else {
    message = absl::StrCat("Full sync failed for triggerSyncID: ", s.spec_id,
                           " with error: ", result.message());
    st["error"] = message;
  }
  WriteStatus(*now).IgnoreError();  // logged
  Event(*now, result.ok(), message);
}

}  // namespace ccm::csi::syncer
