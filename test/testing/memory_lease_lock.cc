#include "testing/memory_lease_lock.h"

namespace ccm::kube {

absl::StatusOr<VersionedRecord> MemoryLeaseLock::Get() {
  absl::MutexLock lock(&mu_);
  if (!exists_) return absl::NotFoundError(absl::StrCat("lease ", name_, " not found"));
  return VersionedRecord{record_, absl::StrCat(version_)};
}

absl::StatusOr<std::string> MemoryLeaseLock::Create(const LeaderElectionRecord& record) {
  absl::MutexLock lock(&mu_);
  if (exists_) return absl::AlreadyExistsError(absl::StrCat("lease ", name_, " already exists"));
  exists_ = true;
  record_ = record;
  ++writes_;
  return absl::StrCat(++version_);
}

absl::StatusOr<std::string> MemoryLeaseLock::Update(const LeaderElectionRecord& record,
                                                    const std::string& resource_version) {
  absl::MutexLock lock(&mu_);
  if (!exists_) return absl::NotFoundError(absl::StrCat("lease ", name_, " not found"));
  if (resource_version != absl::StrCat(version_)) {
    return absl::AbortedError(absl::StrCat("lease ", name_, ": resourceVersion ", resource_version,
                                           " is stale (now ", version_, ")"));
  }
  record_ = record;
  ++writes_;
  return absl::StrCat(++version_);
}

VersionedRecord MemoryLeaseLock::Peek() const {
  absl::MutexLock lock(&mu_);
  if (!exists_) return {};
  return VersionedRecord{record_, absl::StrCat(version_)};
}

int MemoryLeaseLock::writes() const {
  absl::MutexLock lock(&mu_);
  return writes_;
}

void FaultyLeaseLock::SetError(absl::Status s) {
  absl::MutexLock lock(&mu_);
  error_ = std::move(s);
}

absl::Status FaultyLeaseLock::Error() const {
  absl::MutexLock lock(&mu_);
  return error_;
}

absl::StatusOr<VersionedRecord> FaultyLeaseLock::Get() {
  if (absl::Status s = Error(); !s.ok()) return s;
  return inner_.Get();
}

absl::StatusOr<std::string> FaultyLeaseLock::Create(const LeaderElectionRecord& record) {
  if (absl::Status s = Error(); !s.ok()) return s;
  return inner_.Create(record);
}

absl::StatusOr<std::string> FaultyLeaseLock::Update(const LeaderElectionRecord& record,
                                                    const std::string& resource_version) {
  if (absl::Status s = Error(); !s.ok()) return s;
  return inner_.Update(record, resource_version);
}

}  // namespace ccm::kube
