#include "kube/leader_election.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/logging.h"

namespace ccm::kube {
namespace {

// Lease times travel as MicroTime: keep ours at that precision so a record we wrote compares equal
// to the same record read back.
absl::Time TruncateToMicros(absl::Time t) { return absl::FromUnixMicros(absl::ToUnixMicros(t)); }

}  // namespace

absl::StatusOr<std::unique_ptr<LeaderElector>> LeaderElector::New(LeaderElectionConfig config,
                                                                  LeaseLock& lock,
                                                                  LeaderCallbacks callbacks,
                                                                  Clock& clock, Random& random) {
  const auto zero = absl::ZeroDuration();
  if (config.identity.empty()) return absl::InvalidArgumentError("leader election: empty identity");
  if (config.lease_duration <= zero || config.renew_deadline <= zero ||
      config.retry_period <= zero) {
    return absl::InvalidArgumentError("leader election: durations must be positive");
  }
  if (config.lease_duration <= config.renew_deadline) {
    return absl::InvalidArgumentError(
        "leader election: lease duration must be greater than renew deadline");
  }
  if (config.renew_deadline <= kLeaderElectionJitterFactor * config.retry_period) {
    return absl::InvalidArgumentError(
        absl::StrCat("leader election: renew deadline must be greater than retry period * ",
                     kLeaderElectionJitterFactor));
  }
  if (config.lease_duration < absl::Seconds(1)) {
    return absl::InvalidArgumentError("leader election: lease duration must be at least 1s");
  }
  if (!callbacks.on_started_leading || !callbacks.on_stopped_leading) {
    return absl::InvalidArgumentError(
        "leader election: on_started_leading and on_stopped_leading are required");
  }
  return std::unique_ptr<LeaderElector>(
      new LeaderElector(std::move(config), lock, std::move(callbacks), clock, random));
}

LeaderElector::LeaderElector(LeaderElectionConfig config, LeaseLock& lock,
                             LeaderCallbacks callbacks, Clock& clock, Random& random)
    : config_(std::move(config)),
      lock_(lock),
      callbacks_(std::move(callbacks)),
      clock_(clock),
      random_(random) {}

LeaderElector::~LeaderElector() { Shutdown(); }

void LeaderElector::Run(const absl::Notification& stop) {
  LOG_INFO("attempting to acquire leader lease {} as {}", lock_.Describe(), config_.identity);
  while (!stop.HasBeenNotified()) {
    const absl::Time next = Poll();
    if (Finished()) return;
    clock_.SleepUntil(next, &stop);
  }
  Shutdown();
}

absl::Time LeaderElector::Poll() {
  const absl::Time now = clock_.Now();
  State state;
  std::optional<absl::Time> failing_since;
  {
    absl::MutexLock lock(&mu_);
    state = state_;
    failing_since = failing_since_;
  }
  if (state == State::kFinished) return absl::InfiniteFuture();

  if (state == State::kLeading && failing_since.has_value() &&
      now >= *failing_since + config_.renew_deadline) {
    LOG_ERROR("leader election lost: failed to renew lease {} for {}", lock_.Describe(),
              absl::FormatDuration(now - *failing_since));
    {
      absl::MutexLock lock(&mu_);
      state_ = State::kFinished;
      lost_ = true;
    }
    StopLeading();
    if (config_.release_on_cancel) Release();
    return absl::InfiniteFuture();
  }

  const bool ok = TryAcquireOrRenew(now);
  MaybeReportNewLeader();

  if (state == State::kCandidate) {
    if (!ok) return now + JitteredRetry();
    LOG_INFO("successfully acquired lease {}", lock_.Describe());
    {
      absl::MutexLock lock(&mu_);
      state_ = State::kLeading;
      last_renew_ = now;
      failing_since_.reset();
    }
    StartLeading();
    return now + config_.retry_period;
  }

  // Leading.
  bool other_holder = false;
  absl::Time deadline;
  {
    absl::MutexLock lock(&mu_);
    if (ok) {
      last_renew_ = now;
      failing_since_.reset();
      return now + config_.retry_period;
    }
    other_holder = observed_.has_value() && !ObservedHeldByUs();
    if (!failing_since_.has_value()) failing_since_ = now;
    deadline = *failing_since_ + config_.renew_deadline;
    if (other_holder) {
      state_ = State::kFinished;
      lost_ = true;
    }
  }
  if (other_holder) {
    // Someone else wrote the lease (we were too slow, or an admin edited it): stop at once.
    LOG_ERROR("leader election lost: lease {} is now held by {}", lock_.Describe(), GetLeader());
    StopLeading();
    return absl::InfiniteFuture();
  }
  return std::min(now + config_.retry_period, deadline);
}

bool LeaderElector::TryAcquireOrRenew(absl::Time now_exact) {
  const absl::Time now = TruncateToMicros(now_exact);
  LeaderElectionRecord desired{
      .holder_identity = config_.identity,
      .lease_duration_seconds = static_cast<int>(absl::ToInt64Seconds(config_.lease_duration)),
      .acquire_time = now,
      .renew_time = now,
      .lease_transitions = 0,
  };

  // 1. Fast path: the leader updates the record it wrote last, assuming nobody else did.
  std::optional<std::pair<LeaderElectionRecord, std::string>> fast;
  {
    absl::MutexLock lock(&mu_);
    if (ObservedHeldByUs() && LeaseValid(now_exact)) fast.emplace(*observed_, observed_version_);
  }
  if (fast.has_value()) {
    desired.acquire_time = fast->first.acquire_time;
    desired.lease_transitions = fast->first.lease_transitions;
    absl::StatusOr<std::string> version = lock_.Update(desired, fast->second);
    if (version.ok()) {
      SetObserved(desired, *version, now_exact);
      return true;
    }
    VLOG(2, "failed to update lease {} optimistically ({}), falling back to slow path",
         lock_.Describe(), version.status());
  }

  // 2. Read the record, or create it.
  absl::StatusOr<VersionedRecord> current = lock_.Get();
  if (!current.ok()) {
    if (!absl::IsNotFound(current.status())) {
      LOG_ERROR("error retrieving lease {}: {}", lock_.Describe(), current.status());
      return false;
    }
    absl::StatusOr<std::string> version = lock_.Create(desired);
    if (!version.ok()) {
      LOG_ERROR("error initially creating lease {}: {}", lock_.Describe(), version.status());
      return false;
    }
    SetObserved(desired, *version, now_exact);
    return true;
  }

  // 3. Note when the record last changed (on our clock); respect a valid lease of another holder.
  bool ours;
  {
    absl::MutexLock lock(&mu_);
    if (!observed_.has_value() || *observed_ != current->record) {
      observed_ = current->record;
      observed_time_ = now_exact;
    }
    observed_version_ = current->resource_version;
    ours = ObservedHeldByUs();
    if (!current->record.holder_identity.empty() && LeaseValid(now_exact) && !ours) {
      VLOG(4, "lease {} is held by {} and has not yet expired", lock_.Describe(),
           current->record.holder_identity);
      return false;
    }
  }

  // 4. Take or renew it.
  if (ours) {
    desired.acquire_time = current->record.acquire_time;
    desired.lease_transitions = current->record.lease_transitions;
  } else {
    desired.lease_transitions = current->record.lease_transitions + 1;
  }
  absl::StatusOr<std::string> version = lock_.Update(desired, current->resource_version);
  if (!version.ok()) {
    LOG_ERROR("failed to update lease {}: {}", lock_.Describe(), version.status());
    return false;
  }
  SetObserved(desired, *version, now_exact);
  return true;
}

void LeaderElector::SetObserved(const LeaderElectionRecord& r, std::string version,
                                absl::Time now) {
  absl::MutexLock lock(&mu_);
  observed_ = r;
  observed_version_ = std::move(version);
  observed_time_ = now;
}

bool LeaderElector::ObservedHeldByUs() const {
  return observed_.has_value() && observed_->holder_identity == config_.identity;
}

bool LeaderElector::LeaseValid(absl::Time now) const {
  if (!observed_.has_value()) return false;
  return observed_time_ + absl::Seconds(observed_->lease_duration_seconds) > now;
}

void LeaderElector::MaybeReportNewLeader() {
  std::string holder;
  {
    absl::MutexLock lock(&mu_);
    if (!observed_.has_value()) return;
    holder = observed_->holder_identity;
    if (holder.empty() || holder == reported_leader_) return;
    reported_leader_ = holder;
  }
  LOG_INFO("new leader elected for lease {}: {}", lock_.Describe(), holder);
  if (callbacks_.on_new_leader) callbacks_.on_new_leader(holder);
}

void LeaderElector::StartLeading() {
  leading_stop_ = std::make_unique<absl::Notification>();
  const absl::Notification* stop = leading_stop_.get();
  leading_thread_ = std::thread([this, stop] { callbacks_.on_started_leading(*stop); });
}

void LeaderElector::StopLeading() {
  if (leading_stop_ == nullptr) return;
  // The callback runs first, so the process learns it must stop acting before the leading work
  // is even told to stop (and certainly before it returns).
  callbacks_.on_stopped_leading();
  leading_stop_->Notify();
  if (leading_thread_.joinable()) leading_thread_.join();
}

void LeaderElector::Release() {
  LeaderElectionRecord released;
  std::string version;
  {
    absl::MutexLock lock(&mu_);
    if (!ObservedHeldByUs()) return;
    const absl::Time now = TruncateToMicros(clock_.Now());
    released = LeaderElectionRecord{.holder_identity = "",
                                    .lease_duration_seconds = 1,
                                    .acquire_time = now,
                                    .renew_time = now,
                                    .lease_transitions = observed_->lease_transitions};
    version = observed_version_;
  }
  absl::StatusOr<std::string> v = lock_.Update(released, version);
  if (!v.ok()) {
    LOG_ERROR("failed to release lease {}: {}", lock_.Describe(), v.status());
    return;
  }
  LOG_INFO("released lease {}", lock_.Describe());
  SetObserved(released, *v, clock_.Now());
}

void LeaderElector::Shutdown() {
  bool was_leading;
  {
    absl::MutexLock lock(&mu_);
    if (state_ == State::kFinished) return;
    was_leading = state_ == State::kLeading;
    state_ = State::kFinished;
  }
  if (!was_leading) return;
  StopLeading();
  if (config_.release_on_cancel) Release();
}

absl::Duration LeaderElector::JitteredRetry() {
  return config_.retry_period * (1.0 + kLeaderElectionJitterFactor * random_.Uniform());
}

bool LeaderElector::IsLeader() const {
  absl::MutexLock lock(&mu_);
  return state_ == State::kLeading;
}

bool LeaderElector::Lost() const {
  absl::MutexLock lock(&mu_);
  return lost_;
}

bool LeaderElector::Finished() const {
  absl::MutexLock lock(&mu_);
  return state_ == State::kFinished;
}

std::string LeaderElector::GetLeader() const {
  absl::MutexLock lock(&mu_);
  return observed_.has_value() ? observed_->holder_identity : "";
}

absl::Status LeaderElector::Check(absl::Duration tolerance) const {
  absl::MutexLock lock(&mu_);
  if (state_ != State::kLeading) return absl::OkStatus();
  const absl::Duration since = clock_.Now() - last_renew_;
  if (since > config_.lease_duration + tolerance) {
    return absl::FailedPreconditionError(absl::StrCat("leader election: lease ", lock_.Describe(),
                                                      " not renewed for ",
                                                      absl::FormatDuration(since)));
  }
  return absl::OkStatus();
}

}  // namespace ccm::kube
