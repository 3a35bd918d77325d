#pragma once
// At most one operation per volume at a time. The CSI spec lets a plugin answer ABORTED when an
// operation on the same volume is in progress, and the sidecars retry it with backoff; waiting
// instead would pile up gRPC threads behind one slow CNS task. Keys: the request name for
// CreateVolume (the volume has no ID yet), the volume ID for everything else.
// Thread-safe.

#include <optional>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"

namespace ccm::csi {

class VolumeLocks {
 public:
  // Releases its key when destroyed.
  class Guard {
   public:
    Guard(Guard&& o) noexcept : locks_(o.locks_), key_(std::move(o.key_)) { o.locks_ = nullptr; }
    Guard& operator=(Guard&&) = delete;
    ~Guard();

   private:
    friend class VolumeLocks;
    Guard(VolumeLocks* locks, std::string key) : locks_(locks), key_(std::move(key)) {}
    VolumeLocks* locks_;
    std::string key_;
  };

  // A guard for `key`, or Aborted "an operation on volume <key> is already in progress".
  absl::StatusOr<Guard> TryLock(const std::string& key);
  size_t held() const;

 private:
  void Release(const std::string& key);
  mutable absl::Mutex mu_;
  absl::flat_hash_set<std::string> held_ ABSL_GUARDED_BY(mu_);
};

}  // namespace ccm::csi
