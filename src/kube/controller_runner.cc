#include "kube/controller_runner.h"

#include <algorithm>
#include <utility>

#include "common/logging.h"

namespace ccm::kube {

void ControllerRunner::Start(ControllerSpec spec) {
  absl::MutexLock l(&mu_);
  if (started_ || stop_.HasBeenNotified()) return;
  started_ = true;
  start_time_ = clock_.Now();
  spec_ = std::move(spec);
  runner_ = std::thread([this] { Run(); });
}

absl::Time ControllerRunner::start_time() const {
  absl::MutexLock l(&mu_);
  return start_time_;
}

void ControllerRunner::Run() {
  for (Informer* informer : spec_.informers) {
    // Real time: the informers fill from the API server, not on the injected clock.
    while (!informer->WaitForSync(absl::Milliseconds(200))) {
      if (stop_.HasBeenNotified()) return;
    }
  }
  if (stop_.HasBeenNotified()) return;
  if (spec_.wait_ready && !spec_.wait_ready(stop_)) return;
  LOG_INFO("{}: caches synced, starting {} workers", spec_.name, spec_.workers);
  for (int i = 0; i < spec_.workers; ++i) {
    threads_.emplace_back([this] {
      while (spec_.process_next_item()) {
      }
    });
  }
  if (spec_.pass && spec_.period > absl::ZeroDuration()) {
    threads_.emplace_back([this] { PeriodicLoop(); });
  }
}

void ControllerRunner::PeriodicLoop() {
  absl::Time next = std::max(start_time(), clock_.Now());
  if (!spec_.pass_at_start && !clock_.SleepUntil(next += spec_.period, &stop_)) return;
  while (!stop_.HasBeenNotified()) {
    spec_.pass();
    if (!clock_.SleepUntil(next += spec_.period, &stop_)) return;
    if (absl::Time now = clock_.Now(); next + spec_.period < now) next = now;
  }
}

void ControllerRunner::Stop() {
  std::function<void()> shut_down_queue;
  {
    absl::MutexLock l(&mu_);
    if (!stop_.HasBeenNotified()) stop_.Notify();
    shut_down_queue = spec_.shut_down_queue;  // empty when never started
  }
  if (shut_down_queue) shut_down_queue();
  if (runner_.joinable()) runner_.join();
  for (auto& t : threads_) {
    if (t.joinable()) t.join();
  }
}

}  // namespace ccm::kube
