#pragma once
// CallBatch: callers that each need one CNS call for one volume, and arrive while such a call is
// out, wait and go out together in the next call, which names all their volumes (CNS methods
// that take a list). One caller at a time sends (the first to find nobody sending); the others
// sleep until their answer comes or it is their turn. A waiting caller leaves at its deadline;
// a call under way goes on for the others.
//
// What a call carries: the oldest waiting asks of the first one's group (callers of different
// groups never share a call: a deleteDisk flag), at most `max_keys` distinct volumes; asks of the
// same volume share its answer. Used by DeleteBatch (CnsDeleteVolume) and SnapshotBatch
// (CnsQuerySnapshots).

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace ccm::vsphere::cns {

struct CallBatchStats {
  uint64_t calls = 0;  // calls sent
  uint64_t asks = 0;   // the asks they answered
};

template <typename Answer>
class CallBatch {
 public:
  // Sends one call naming `keys` (distinct, in order of arrival) of `group`; returns exactly one
  // answer per key, in their order.
  using Send = std::function<std::vector<Answer>(const std::vector<std::string>& keys, int group)>;

  explicit CallBatch(size_t max_keys) : max_keys_(max_keys) {}

  // `key`'s answer from the call that carried it, or DeadlineExceeded ("<what>: the call's
  // deadline passed while the calls before it were sent") when `deadline` passes first.
  absl::StatusOr<Answer> Submit(const std::string& key, int group, absl::Time deadline,
                                const Send& send, absl::string_view what) {
    auto ask = std::make_shared<Ask>();
    ask->key = key;
    ask->group = group;
    absl::MutexLock l(&mu_);
    queued_.push_back(ask);
    while (!ask->answered) {
      if (!sending_) {
        SendNext(send);
        continue;
      }
      auto ready = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return ask->answered || !sending_; };
      if (!mu_.AwaitWithDeadline(absl::Condition(&ready), deadline)) {
        std::erase(queued_, ask);  // if still queued
        return absl::DeadlineExceededError(
            absl::StrCat(what, ": the call's deadline passed while the calls before it were sent"));
      }
    }
    return std::move(ask->answer);
  }

  using Stats = CallBatchStats;
  Stats stats() const {
    absl::MutexLock l(&mu_);
    return stats_;
  }
  // Blocks until `n` asks wait to be sent (tests).
  void AwaitQueuedForTest(size_t n) const {
    absl::MutexLock l(&mu_);
    auto enough = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return queued_.size() >= n; };
    mu_.Await(absl::Condition(&enough));
  }

 private:
  struct Ask {
    std::string key;
    int group = 0;
    bool answered = false;
    Answer answer;
  };

  // The sender's turn (mu_ released while the call is out).
  void SendNext(const Send& send) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    sending_ = true;
    const int group = queued_.front()->group;
    std::vector<std::shared_ptr<Ask>> batch;
    std::vector<std::string> keys;
    for (auto it = queued_.begin(); it != queued_.end();) {
      const bool known = std::find(keys.begin(), keys.end(), (*it)->key) != keys.end();
      if ((*it)->group != group || (!known && keys.size() == max_keys_)) {
        ++it;
        continue;
      }
      if (!known) keys.push_back((*it)->key);
      batch.push_back(*it);
      it = queued_.erase(it);
    }
    mu_.Unlock();
    std::vector<Answer> answers = send(keys, group);
    mu_.Lock();
    for (const std::shared_ptr<Ask>& a : batch) {
      const auto i =
          static_cast<size_t>(std::find(keys.begin(), keys.end(), a->key) - keys.begin());
      a->answer = answers[i];
      a->answered = true;
    }
    ++stats_.calls;
    stats_.asks += batch.size();
    sending_ = false;
  }

  const size_t max_keys_;
  mutable absl::Mutex mu_;
  std::vector<std::shared_ptr<Ask>> queued_ ABSL_GUARDED_BY(mu_);
  bool sending_ ABSL_GUARDED_BY(mu_) = false;
  Stats stats_ ABSL_GUARDED_BY(mu_);
};

}  // namespace ccm::vsphere::cns
