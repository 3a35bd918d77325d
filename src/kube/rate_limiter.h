#pragma once
// Rate limiters for the work queue and the event spam filter, with client-go's semantics
// (k8s.io/client-go/util/workqueue/default_rate_limiters.go, golang.org/x/time/rate).
//
// A RateLimiter answers "how long should this item wait before it is processed again?". The
// per-item limiter remembers failures until Forget(); the token bucket limits the overall rate.
// Time comes from an injected ccm::Clock so tests are exact. All classes are thread-safe.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/backoff.h"
#include "common/clock.h"

namespace ccm::kube {

class RateLimiter {
 public:
  virtual ~RateLimiter() = default;
  // How long `item` should wait now. Counts as one more requeue of `item`.
  virtual absl::Duration When(const std::string& item) = 0;
  // Clears the failure history of `item` (it succeeded or was given up).
  virtual void Forget(const std::string& item) = 0;
  // How many times When() was called for `item` since the last Forget().
  virtual int NumRequeues(const std::string& item) = 0;
};

// Per-item exponential backoff: base * 2^failures, capped at max.
class ItemExponentialRateLimiter final : public RateLimiter {
 public:
  ItemExponentialRateLimiter(absl::Duration base, absl::Duration max);
  absl::Duration When(const std::string& item) override;
  void Forget(const std::string& item) override;
  int NumRequeues(const std::string& item) override;

 private:
  const BackoffPolicy policy_;
  absl::Mutex mu_;
  absl::flat_hash_map<std::string, int> failures_ ABSL_GUARDED_BY(mu_);
};

// A token bucket (golang.org/x/time/rate): holds up to `burst` tokens, refilled at `qps` per
// second. Reserve() always takes a token, letting the balance go negative, and returns how long the
// caller must wait for its token; TryTake() takes one only if one is available now.
class TokenBucket {
 public:
  TokenBucket(double qps, int burst, Clock& clock);
  absl::Duration Reserve();
  bool TryTake();
  // Tokens available now (may be negative after Reserve()); for tests.
  double Tokens();

 private:
  void AdvanceLocked(absl::Time now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const double qps_;
  const double burst_;
  Clock& clock_;
  absl::Mutex mu_;
  double tokens_ ABSL_GUARDED_BY(mu_);
  absl::Time last_ ABSL_GUARDED_BY(mu_);
};

// Overall rate for all items together (not per item): a token bucket.
class BucketRateLimiter final : public RateLimiter {
 public:
  BucketRateLimiter(double qps, int burst, Clock& clock) : bucket_(qps, burst, clock) {}
  absl::Duration When(const std::string& item) override { return bucket_.Reserve(); }
  void Forget(const std::string& item) override {}
  int NumRequeues(const std::string& item) override { return 0; }

 private:
  TokenBucket bucket_;
};

// The longest wait of several limiters; NumRequeues is the largest of theirs.
class MaxOfRateLimiter final : public RateLimiter {
 public:
  explicit MaxOfRateLimiter(std::vector<std::unique_ptr<RateLimiter>> limiters);
  absl::Duration When(const std::string& item) override;
  void Forget(const std::string& item) override;
  int NumRequeues(const std::string& item) override;

 private:
  std::vector<std::unique_ptr<RateLimiter>> limiters_;
};

// client-go's DefaultControllerRateLimiter: max(per-item 5ms..1000s, overall 10 qps / 100 burst).
std::unique_ptr<RateLimiter> DefaultControllerRateLimiter(Clock& clock);

}  // namespace ccm::kube
