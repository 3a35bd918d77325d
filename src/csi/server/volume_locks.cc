#include "csi/server/volume_locks.h"

#include "absl/strings/str_cat.h"

namespace ccm::csi {

VolumeLocks::Guard::~Guard() {
  if (locks_ != nullptr) locks_->Release(key_);
}

absl::StatusOr<VolumeLocks::Guard> VolumeLocks::TryLock(const std::string& key) {
  absl::MutexLock lock(&mu_);
  if (!held_.insert(key).second) {
    return absl::AbortedError(
        absl::StrCat("an operation on volume ", key, " is already in progress"));
  }
  return Guard(this, key);
}

void VolumeLocks::Release(const std::string& key) {
  absl::MutexLock lock(&mu_);
  held_.erase(key);
}

size_t VolumeLocks::held() const {
  absl::MutexLock lock(&mu_);
  return held_.size();
}

}  // namespace ccm::csi
