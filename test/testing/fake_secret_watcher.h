#pragma once
// In-memory SecretWatcher for tests: Set/Delete call the subscribers synchronously.

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "cloud/credentials/credential_store.h"

namespace ccm::cloud {

class FakeSecretWatcher final : public SecretWatcher {
 public:
  void Set(const std::string& ns, const std::string& name, SecretData data) {
    std::vector<Callback> cbs;
    {
      absl::MutexLock l(&mu_);
      secrets_[{ns, name}] = data;
      for (auto& [h, cb] : callbacks_) cbs.push_back(cb);
    }
    for (auto& cb : cbs) cb(ns, name, data);
  }
  void Delete(const std::string& ns, const std::string& name) {
    std::vector<Callback> cbs;
    {
      absl::MutexLock l(&mu_);
      secrets_.erase({ns, name});
      for (auto& [h, cb] : callbacks_) cbs.push_back(cb);
    }
    for (auto& cb : cbs) cb(ns, name, std::nullopt);
  }
  absl::StatusOr<SecretData> Get(const std::string& ns, const std::string& name) const override {
    absl::MutexLock l(&mu_);
    auto it = secrets_.find({ns, name});
    if (it == secrets_.end()) {
      return absl::NotFoundError(absl::StrCat("Secret ", ns, "/", name, " not found"));
    }
    return it->second;
  }
  int Subscribe(Callback cb) override {
    absl::MutexLock l(&mu_);
    callbacks_[next_] = std::move(cb);
    return next_++;
  }
  void Unsubscribe(int handle) override {
    absl::MutexLock l(&mu_);
    callbacks_.erase(handle);
  }

 private:
  mutable absl::Mutex mu_;
  std::map<std::pair<std::string, std::string>, SecretData> secrets_ ABSL_GUARDED_BY(mu_);
  std::map<int, Callback> callbacks_ ABSL_GUARDED_BY(mu_);
  int next_ ABSL_GUARDED_BY(mu_) = 1;
};

}  // namespace ccm::cloud
