#include "kube/work_queue.h"

#include <algorithm>

namespace ccm::kube {
namespace {
// The timer thread re-checks at least this often even with nothing waiting (like client-go's
// maxWait); cheap, and a safety net for clocks that cannot be woken.
constexpr absl::Duration kMaxTimerWait = absl::Seconds(10);
}  // namespace

WorkQueue::WorkQueue(WorkQueueOptions options)
    : name_(std::move(options.name)),
      clock_(options.clock != nullptr ? *options.clock : Clock::Real()),
      limiter_(options.limiter != nullptr ? std::move(options.limiter)
                                          : DefaultControllerRateLimiter(clock_)),
      metrics_(options.metrics != nullptr ? options.metrics->NewQueueMetrics(name_) : nullptr) {
  {
    absl::MutexLock lock(&mu_);
    timer_wake_ = std::make_shared<absl::Notification>();
  }
  timer_ = std::thread([this] { TimerLoop(); });
}

WorkQueue::~WorkQueue() {
  ShutDown();
  stop_timer_.Notify();
  {
    absl::MutexLock lock(&mu_);
    WakeTimerLocked();
  }
  timer_.join();
}

void WorkQueue::Add(const std::string& item) {
  absl::MutexLock lock(&mu_);
  PromoteLocked(clock_.Now());
  AddLocked(item);
}

void WorkQueue::AddLocked(const std::string& item) {
  if (shutting_down_) return;
  if (dirty_.contains(item)) return;
  if (metrics_) metrics_->IncAdds();
  dirty_.insert(item);
  // Being processed: Done() will queue it again; a second worker must not get it meanwhile.
  if (processing_.contains(item)) return;
  queue_.push_back(item);
  added_at_[item] = clock_.Now();
  if (metrics_) metrics_->SetDepth(static_cast<int64_t>(queue_.size()));
}

void WorkQueue::AddAfter(const std::string& item, absl::Duration delay) {
  absl::MutexLock lock(&mu_);
  if (shutting_down_) return;
  const absl::Time now = clock_.Now();
  PromoteLocked(now);
  if (delay <= absl::ZeroDuration()) {
    AddLocked(item);
    return;
  }
  const absl::Time ready = now + delay;
  auto it = waiting_ready_.find(item);
  if (it != waiting_ready_.end() && it->second <= ready) return;  // an earlier add wins
  waiting_ready_[item] = ready;
  const bool sooner = waiting_.empty() || ready < waiting_.top().ready;
  waiting_.push(Waiting{ready, seq_++, item});
  if (sooner) WakeTimerLocked();
}

void WorkQueue::AddRateLimited(const std::string& item) {
  const absl::Duration delay = limiter_->When(item);
  {
    absl::MutexLock lock(&mu_);
    if (shutting_down_) return;
    if (metrics_) metrics_->IncRetries();
  }
  AddAfter(item, delay);
}

void WorkQueue::Forget(const std::string& item) { limiter_->Forget(item); }

int WorkQueue::NumRequeues(const std::string& item) { return limiter_->NumRequeues(item); }

std::optional<absl::Time> WorkQueue::PromoteLocked(absl::Time now) {
  while (!waiting_.empty()) {
    const Waiting& top = waiting_.top();
    auto it = waiting_ready_.find(top.item);
    if (it == waiting_ready_.end() || it->second != top.ready) {  // superseded by a sooner add
      waiting_.pop();
      continue;
    }
    if (top.ready > now) return top.ready;
    std::string item = top.item;
    waiting_ready_.erase(it);
    waiting_.pop();
    AddLocked(item);
  }
  return std::nullopt;
}

void WorkQueue::WakeTimerLocked() {
  if (timer_wake_) timer_wake_->Notify();
  timer_wake_ = std::make_shared<absl::Notification>();
}

void WorkQueue::TimerLoop() {
  while (!stop_timer_.HasBeenNotified()) {
    std::shared_ptr<absl::Notification> wake;
    absl::Time until;
    {
      absl::MutexLock lock(&mu_);
      if (shutting_down_) return;  // delayed items are dropped at shutdown, as in client-go
      const absl::Time now = clock_.Now();
      until = PromoteLocked(now).value_or(now + kMaxTimerWait);
      wake = timer_wake_;
    }
    clock_.SleepUntil(until, wake.get());
  }
}

std::optional<std::string> WorkQueue::Get() {
  absl::MutexLock lock(&mu_);
  PromoteLocked(clock_.Now());
  auto ready = [this]()
                   ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return !queue_.empty() || shutting_down_; };
  mu_.Await(absl::Condition(&ready));
  if (queue_.empty()) return std::nullopt;  // shut down and empty
  return TakeFrontLocked();
}

std::vector<std::string> WorkQueue::GetReady(size_t max) {
  absl::MutexLock lock(&mu_);
  PromoteLocked(clock_.Now());
  std::vector<std::string> items;
  while (items.size() < max && !queue_.empty()) items.push_back(TakeFrontLocked());
  return items;
}

std::string WorkQueue::TakeFrontLocked() {
  std::string item = std::move(queue_.front());
  queue_.pop_front();
  const absl::Time now = clock_.Now();
  if (metrics_) {
    metrics_->SetDepth(static_cast<int64_t>(queue_.size()));
    auto it = added_at_.find(item);
    if (it != added_at_.end()) metrics_->ObserveQueueLatency(now - it->second);
  }
  added_at_.erase(item);
  processing_[item] = now;
  dirty_.erase(item);
  return item;
}

void WorkQueue::Done(const std::string& item) {
  absl::MutexLock lock(&mu_);
  auto it = processing_.find(item);
  if (it == processing_.end()) return;
  if (metrics_) metrics_->ObserveWorkDuration(clock_.Now() - it->second);
  processing_.erase(it);
  if (dirty_.contains(item)) {
    queue_.push_back(item);
    added_at_[item] = clock_.Now();
    if (metrics_) metrics_->SetDepth(static_cast<int64_t>(queue_.size()));
  }
}

int WorkQueue::Len() {
  absl::MutexLock lock(&mu_);
  PromoteLocked(clock_.Now());
  return static_cast<int>(queue_.size());
}

int WorkQueue::NumWaiting() {
  absl::MutexLock lock(&mu_);
  PromoteLocked(clock_.Now());
  return static_cast<int>(waiting_ready_.size());
}

void WorkQueue::ShutDown() {
  absl::MutexLock lock(&mu_);
  shutting_down_ = true;
  WakeTimerLocked();
}

void WorkQueue::ShutDownWithDrain() {
  absl::MutexLock lock(&mu_);
  shutting_down_ = true;
  WakeTimerLocked();
  auto drained = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return processing_.empty(); };
  mu_.Await(absl::Condition(&drained));
}

bool WorkQueue::ShuttingDown() {
  absl::MutexLock lock(&mu_);
  return shutting_down_;
}

void WorkQueue::UpdateUnfinishedWorkMetrics() {
  absl::MutexLock lock(&mu_);
  if (!metrics_) return;
  const absl::Time now = clock_.Now();
  double total = 0, longest = 0;
  for (const auto& [item, since] : processing_) {
    const double s = absl::ToDoubleSeconds(now - since);
    total += s;
    longest = std::max(longest, s);
  }
  metrics_->SetUnfinishedWorkSeconds(total);
  metrics_->SetLongestRunningProcessorSeconds(longest);
}

}  // namespace ccm::kube
