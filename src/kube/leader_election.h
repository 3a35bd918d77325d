#pragma once
// Leader election on a Lease, with client-go's semantics (k8s.io/client-go/tools/leaderelection).
//
// A candidate acquires the lease when it is free (no holder) or expired, renews it every
// RetryPeriod while leading, and gives up leadership when it could not renew for RenewDeadline.
// Expiry is judged on OUR clock: a lease is valid until (the time we last saw its record change) +
// its leaseDurationSeconds. The holder's timestamps are never compared with our clock, so clock
// skew between candidates does not matter.
//
// Safety margin: the leader stops at most RetryPeriod + RenewDeadline (12s by default) after its
// last successful renewal, while another candidate waits at least LeaseDuration (15s) after seeing
// that renewal. Lost leadership is reported at once through OnStoppedLeading: the process must stop
// acting (the cloud-controller-manager exits, as the Go one does).
//
// Usage:
//   auto elector = LeaderElector::New(config, lock, callbacks, Clock::Real(), Random::Real());
//   (*elector)->Run(stop);   // blocks until `stop` is notified or leadership is lost
//
// Run() is a loop around Poll(); tests drive Poll() directly with a FakeClock for exact timing.

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "common/random.h"
#include "kube/lease_lock.h"

namespace ccm::kube {

struct LeaderElectionConfig {
  // Unique per candidate (the Go manager uses "<hostname>_<uuid>").
  std::string identity;
  absl::Duration lease_duration = absl::Seconds(15);
  absl::Duration renew_deadline = absl::Seconds(10);
  absl::Duration retry_period = absl::Seconds(2);
  // On shutdown while leading, write an empty holder with a 1s lease so another candidate takes
  // over at once instead of waiting for the lease to expire.
  bool release_on_cancel = true;
};

// Acquire attempts are spaced RetryPeriod * (1 + kJitterFactor * random[0,1)) apart.
inline constexpr double kLeaderElectionJitterFactor = 1.2;

struct LeaderCallbacks {
  // Required. Runs on its own thread when leadership is acquired; `stop` is notified when
  // leadership ends (lost or shutdown). It should return soon after `stop`.
  std::function<void(const absl::Notification& stop)> on_started_leading;
  // Required. Called on the elector's thread as soon as leadership ends, before waiting for
  // on_started_leading to return and before the lease is released.
  std::function<void()> on_stopped_leading;
  // Optional. Called on the elector's thread when the observed holder changes (also when it is
  // us); not called for a released lease (empty holder). Must be quick.
  std::function<void(const std::string& identity)> on_new_leader;
};

class LeaderElector {
 public:
  // Checks the config like client-go: durations positive, LeaseDuration > RenewDeadline >
  // kJitterFactor * RetryPeriod, identity and the two required callbacks set.
  static absl::StatusOr<std::unique_ptr<LeaderElector>> New(LeaderElectionConfig config,
                                                            LeaseLock& lock,
                                                            LeaderCallbacks callbacks, Clock& clock,
                                                            Random& random);
  ~LeaderElector();  // Shutdown()
  LeaderElector(const LeaderElector&) = delete;
  LeaderElector& operator=(const LeaderElector&) = delete;

  // Campaigns, leads, and returns when `stop` is notified (then shuts down, releasing the lease if
  // configured) or when leadership is lost.
  void Run(const absl::Notification& stop);

  // Does what is due now (an acquire or renew attempt, or declaring the lease lost) and returns
  // when to call again. Not thread-safe against itself: one driver thread.
  absl::Time Poll();
  // Stops leading (callbacks as on loss) and releases the lease if configured. Idempotent; the
  // elector is finished afterwards.
  void Shutdown();

  bool IsLeader() const;  // currently acting as leader
  bool Lost() const;      // was leader and lost the lease (not by Shutdown)
  bool Finished() const;  // lost or shut down: Poll() does nothing more
  // Holder identity as last observed ("" if none or unknown).
  std::string GetLeader() const;
  // Health check (client-go's HealthzAdaptor): an error if we act as leader but have not renewed
  // for longer than the lease duration + `tolerance` (a stuck elector).
  absl::Status Check(absl::Duration tolerance) const;

 private:
  enum class State { kCandidate, kLeading, kFinished };

  LeaderElector(LeaderElectionConfig config, LeaseLock& lock, LeaderCallbacks callbacks,
                Clock& clock, Random& random);
  // One client-go tryAcquireOrRenew; true when we hold the lease afterwards.
  bool TryAcquireOrRenew(absl::Time now);
  void SetObserved(const LeaderElectionRecord& r, std::string version, absl::Time now);
  bool ObservedHeldByUs() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool LeaseValid(absl::Time now) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void MaybeReportNewLeader();
  void StartLeading();
  void StopLeading();  // notify, on_stopped_leading, join
  void Release();
  absl::Duration JitteredRetry();

  const LeaderElectionConfig config_;
  LeaseLock& lock_;
  const LeaderCallbacks callbacks_;
  Clock& clock_;
  Random& random_;

  mutable absl::Mutex mu_;
  State state_ ABSL_GUARDED_BY(mu_) = State::kCandidate;
  bool lost_ ABSL_GUARDED_BY(mu_) = false;
  std::optional<LeaderElectionRecord> observed_ ABSL_GUARDED_BY(mu_);
  std::string observed_version_ ABSL_GUARDED_BY(mu_);
  absl::Time observed_time_ ABSL_GUARDED_BY(mu_);
  std::string reported_leader_ ABSL_GUARDED_BY(mu_);
  absl::Time last_renew_ ABSL_GUARDED_BY(mu_);
  // Leading: when the current renewal round started failing (its deadline is + RenewDeadline).
  std::optional<absl::Time> failing_since_ ABSL_GUARDED_BY(mu_);

  std::unique_ptr<absl::Notification> leading_stop_;
  std::thread leading_thread_;
};

}  // namespace ccm::kube
