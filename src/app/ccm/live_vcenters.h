#pragma once
// The vCenters of the running controller set, for the readers on other threads: the /healthz
// checks and the metric scrapes. Set, Clear and every reader hold the mutex, so Clear() returns
// only when no reader still uses a VCenter; the set stops and destroys them after it.

#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/functional/function_ref.h"
#include "absl/synchronization/mutex.h"
#include "cloud/vsphere/vcenter.h"

namespace ccm::app {

class LiveVCenters {
 public:
  void Set(std::vector<cloud::VCenter*> vcs) ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock l(&mu_);
    vcs_ = std::move(vcs);
  }
  void Clear() ABSL_LOCKS_EXCLUDED(mu_) { Set({}); }
  // Calls `fn` for each live vCenter, under the lock: keep it short and do not call back in.
  void ForEach(absl::FunctionRef<void(cloud::VCenter&)> fn) const ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock l(&mu_);
    for (cloud::VCenter* vc : vcs_) fn(*vc);
  }

 private:
  mutable absl::Mutex mu_;
  std::vector<cloud::VCenter*> vcs_ ABSL_GUARDED_BY(mu_);
};

}  // namespace ccm::app
