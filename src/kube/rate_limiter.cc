#include "kube/rate_limiter.h"

#include <algorithm>

namespace ccm::kube {

ItemExponentialRateLimiter::ItemExponentialRateLimiter(absl::Duration base, absl::Duration max)
    : policy_{.initial = base, .max = max, .factor = 2.0, .jitter = 0.0} {}

absl::Duration ItemExponentialRateLimiter::When(const std::string& item) {
  absl::MutexLock lock(&mu_);
  int& failures = failures_[item];
  const int attempt = failures;
  // Saturate: past ~64 doublings the delay is max anyway, and the counter must not overflow.
  if (failures < (1 << 30)) ++failures;
  return BackoffDelay(policy_, attempt);
}

void ItemExponentialRateLimiter::Forget(const std::string& item) {
  absl::MutexLock lock(&mu_);
  failures_.erase(item);
}

int ItemExponentialRateLimiter::NumRequeues(const std::string& item) {
  absl::MutexLock lock(&mu_);
  auto it = failures_.find(item);
  return it == failures_.end() ? 0 : it->second;
}

TokenBucket::TokenBucket(double qps, int burst, Clock& clock)
    : qps_(qps), burst_(burst), clock_(clock), tokens_(burst), last_(clock.Now()) {}

void TokenBucket::AdvanceLocked(absl::Time now) {
  if (now > last_) {
    tokens_ = std::min(burst_, tokens_ + absl::ToDoubleSeconds(now - last_) * qps_);
    last_ = now;
  }
}

absl::Duration TokenBucket::Reserve() {
  absl::MutexLock lock(&mu_);
  AdvanceLocked(clock_.Now());
  tokens_ -= 1;
  if (tokens_ >= 0 || qps_ <= 0) return absl::ZeroDuration();
  return absl::Seconds(-tokens_ / qps_);
}

bool TokenBucket::TryTake() {
  absl::MutexLock lock(&mu_);
  AdvanceLocked(clock_.Now());
  if (tokens_ < 1) return false;
  tokens_ -= 1;
  return true;
}

double TokenBucket::Tokens() {
  absl::MutexLock lock(&mu_);
  AdvanceLocked(clock_.Now());
  return tokens_;
}

MaxOfRateLimiter::MaxOfRateLimiter(std::vector<std::unique_ptr<RateLimiter>> limiters)
    : limiters_(std::move(limiters)) {}

absl::Duration MaxOfRateLimiter::When(const std::string& item) {
  absl::Duration longest = absl::ZeroDuration();
  for (auto& l : limiters_) longest = std::max(longest, l->When(item));
  return longest;
}

void MaxOfRateLimiter::Forget(const std::string& item) {
  for (auto& l : limiters_) l->Forget(item);
}

int MaxOfRateLimiter::NumRequeues(const std::string& item) {
  int most = 0;
  for (auto& l : limiters_) most = std::max(most, l->NumRequeues(item));
  return most;
}

std::unique_ptr<RateLimiter> DefaultControllerRateLimiter(Clock& clock) {
  std::vector<std::unique_ptr<RateLimiter>> limiters;
  limiters.push_back(
      std::make_unique<ItemExponentialRateLimiter>(absl::Milliseconds(5), absl::Seconds(1000)));
  limiters.push_back(std::make_unique<BucketRateLimiter>(10.0, 100, clock));
  return std::make_unique<MaxOfRateLimiter>(std::move(limiters));
}

}  // namespace ccm::kube
