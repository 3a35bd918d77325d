#pragma once
// Storage of the leader-election record (the spec of a coordination.k8s.io/v1 Lease) behind a small
// interface, so the election logic is tested on an in-memory lock and runs on the API server
// through an adapter (kube/kube_lease_lock.h).
//
// Optimistic concurrency: every read returns a resourceVersion, and Update() succeeds only if the
// stored record still has it. Status codes (the same the Kubernetes client maps HTTP answers to):
//   Get:    NotFound when no record exists.
//   Create: AlreadyExists when a record exists.
//   Update: Aborted (409 Conflict) when the resourceVersion is stale; NotFound when deleted.
//   Anything else (Unavailable, DeadlineExceeded ...) means "could not ask"; the elector retries.

#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace ccm::kube {

// Lease spec fields (client-go's resourcelock.LeaderElectionRecord). Times have microsecond
// precision on the wire (MicroTime).
struct LeaderElectionRecord {
  std::string holder_identity;  // "" = nobody holds the lease (released)
  int lease_duration_seconds = 0;
  absl::Time acquire_time = absl::UnixEpoch();
  absl::Time renew_time = absl::UnixEpoch();
  int lease_transitions = 0;  // times the holder changed

  bool operator==(const LeaderElectionRecord&) const = default;
};

struct VersionedRecord {
  LeaderElectionRecord record;
  std::string resource_version;
};

class LeaseLock {
 public:
  virtual ~LeaseLock() = default;
  virtual absl::StatusOr<VersionedRecord> Get() = 0;
  // Returns the new resourceVersion.
  virtual absl::StatusOr<std::string> Create(const LeaderElectionRecord& record) = 0;
  virtual absl::StatusOr<std::string> Update(const LeaderElectionRecord& record,
                                             const std::string& resource_version) = 0;
  // "kube-system/cloud-controller-manager", for logs.
  virtual std::string Describe() const = 0;
};

}  // namespace ccm::kube
