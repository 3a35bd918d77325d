#pragma once
// LeaseLock on the Kubernetes API: GET/POST/PUT of
// /apis/coordination.k8s.io/v1/namespaces/<ns>/leases/<name>.
//
// Update() sends back the whole Lease last read or written (labels, annotations, fields we do not
// model are kept) with the given resourceVersion, so a concurrent writer makes it fail with a 409
// (Aborted). Thread-safe.

#include <optional>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "kube/client.h"
#include "kube/lease_lock.h"

namespace ccm::kube {

class KubeLeaseLock final : public LeaseLock {
 public:
  // The cloud-controller-manager uses kube-system/cloud-controller-manager.
  KubeLeaseLock(Client& client, std::string ns, std::string name);

  absl::StatusOr<VersionedRecord> Get() override;
  absl::StatusOr<std::string> Create(const LeaderElectionRecord& record) override;
  absl::StatusOr<std::string> Update(const LeaderElectionRecord& record,
                                     const std::string& resource_version) override;
  std::string Describe() const override { return ns_ + "/" + name_; }

 private:
  Client& client_;
  const std::string ns_, name_;
  absl::Mutex mu_;
  std::optional<Json> last_ ABSL_GUARDED_BY(mu_);
};

// Conversions between the Lease object and the record (exposed for tests).
// Missing fields read as zero values; an unparsable time is an InvalidArgument naming the field.
absl::StatusOr<LeaderElectionRecord> LeaseRecordFromJson(const Json& lease);
void SetLeaseRecord(Json& lease, const LeaderElectionRecord& record);
// MicroTime: "2023-11-14T22:13:20.123456Z"; the Unix epoch (unset) formats as "".
std::string FormatMicroTime(absl::Time t);
absl::StatusOr<absl::Time> ParseApiTime(const std::string& s);  // "" -> Unix epoch

}  // namespace ccm::kube
