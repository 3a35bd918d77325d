#pragma once
// In-memory LeaseLocks for tests.

#include <string>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "kube/lease_lock.h"

namespace ccm::kube {

// In-memory lock with the same concurrency rules, shared by several electors in tests.
class MemoryLeaseLock final : public LeaseLock {
 public:
  explicit MemoryLeaseLock(std::string name = "memory/lease") : name_(std::move(name)) {}
  absl::StatusOr<VersionedRecord> Get() override;
  absl::StatusOr<std::string> Create(const LeaderElectionRecord& record) override;
  absl::StatusOr<std::string> Update(const LeaderElectionRecord& record,
                                     const std::string& resource_version) override;
  std::string Describe() const override { return name_; }

  // Test access: the stored record (nullopt-like: holder "" and version "" when absent).
  VersionedRecord Peek() const;
  int writes() const;

 private:
  const std::string name_;
  mutable absl::Mutex mu_;
  bool exists_ ABSL_GUARDED_BY(mu_) = false;
  LeaderElectionRecord record_ ABSL_GUARDED_BY(mu_);
  int64_t version_ ABSL_GUARDED_BY(mu_) = 0;
  int writes_ ABSL_GUARDED_BY(mu_) = 0;
};

// Wraps another lock and fails every call with a chosen status while set (fault injection: a
// candidate that cannot reach the API server).
class FaultyLeaseLock final : public LeaseLock {
 public:
  explicit FaultyLeaseLock(LeaseLock& inner) : inner_(inner) {}
  void SetError(absl::Status s);  // OkStatus() = pass through again
  absl::StatusOr<VersionedRecord> Get() override;
  absl::StatusOr<std::string> Create(const LeaderElectionRecord& record) override;
  absl::StatusOr<std::string> Update(const LeaderElectionRecord& record,
                                     const std::string& resource_version) override;
  std::string Describe() const override { return inner_.Describe(); }

 private:
  absl::Status Error() const;
  LeaseLock& inner_;
  mutable absl::Mutex mu_;
  absl::Status error_ ABSL_GUARDED_BY(mu_);
};

}  // namespace ccm::kube
