#include "kube/kube_lease_lock.h"

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "kube/objects.h"

namespace ccm::kube {

std::string FormatMicroTime(absl::Time t) {
  if (t == absl::UnixEpoch()) return "";
  return absl::FormatTime("%Y-%m-%dT%H:%M:%E6SZ", t, absl::UTCTimeZone());
}

absl::StatusOr<absl::Time> ParseApiTime(const std::string& s) {
  if (s.empty()) return absl::UnixEpoch();
  absl::Time t;
  std::string err;
  if (!absl::ParseTime(absl::RFC3339_full, s, &t, &err)) {
    return absl::InvalidArgumentError(absl::StrCat("bad time \"", s, "\": ", err));
  }
  return t;
}

absl::StatusOr<LeaderElectionRecord> LeaseRecordFromJson(const Json& lease) {
  const LeaseSpec spec = GetLeaseSpec(lease);
  LeaderElectionRecord r;
  r.holder_identity = spec.holder_identity;
  r.lease_duration_seconds = static_cast<int>(spec.lease_duration_seconds);
  r.lease_transitions = static_cast<int>(spec.lease_transitions);
  absl::StatusOr<absl::Time> acquire = ParseApiTime(spec.acquire_time);
  if (!acquire.ok()) return Annotate(acquire.status(), "lease spec.acquireTime");
  absl::StatusOr<absl::Time> renew = ParseApiTime(spec.renew_time);
  if (!renew.ok()) return Annotate(renew.status(), "lease spec.renewTime");
  r.acquire_time = *acquire;
  r.renew_time = *renew;
  return r;
}

void SetLeaseRecord(Json& lease, const LeaderElectionRecord& r) {
  LeaseSpec spec;
  spec.holder_identity = r.holder_identity;
  spec.lease_duration_seconds = r.lease_duration_seconds;
  spec.acquire_time = FormatMicroTime(r.acquire_time);
  spec.renew_time = FormatMicroTime(r.renew_time);
  spec.lease_transitions = r.lease_transitions;
  SetLeaseSpec(lease, spec);
}

KubeLeaseLock::KubeLeaseLock(Client& client, std::string ns, std::string name)
    : client_(client), ns_(std::move(ns)), name_(std::move(name)) {}

absl::StatusOr<VersionedRecord> KubeLeaseLock::Get() {
  absl::StatusOr<Json> lease = client_.Get(Leases(), ns_, name_);
  if (!lease.ok()) return Annotate(lease.status(), "get lease " + Describe());
  CCM_ASSIGN_OR_RETURN(LeaderElectionRecord record, LeaseRecordFromJson(*lease));
  VersionedRecord out{std::move(record), ResourceVersion(*lease)};
  absl::MutexLock lock(&mu_);
  last_ = std::move(*lease);
  return out;
}

absl::StatusOr<std::string> KubeLeaseLock::Create(const LeaderElectionRecord& record) {
  Json lease = {{"apiVersion", "coordination.k8s.io/v1"},
                {"kind", "Lease"},
                {"metadata", {{"name", name_}, {"namespace", ns_}}}};
  SetLeaseRecord(lease, record);
  absl::StatusOr<Json> created = client_.Create(Leases(), ns_, lease);
  if (!created.ok()) return Annotate(created.status(), "create lease " + Describe());
  std::string version = ResourceVersion(*created);
  absl::MutexLock lock(&mu_);
  last_ = std::move(*created);
  return version;
}

absl::StatusOr<std::string> KubeLeaseLock::Update(const LeaderElectionRecord& record,
                                                  const std::string& resource_version) {
  Json lease;
  {
    absl::MutexLock lock(&mu_);
    if (last_.has_value()) lease = *last_;
  }
  if (!lease.is_object()) {
    lease = {{"apiVersion", "coordination.k8s.io/v1"},
             {"kind", "Lease"},
             {"metadata", {{"name", name_}, {"namespace", ns_}}}};
  }
  lease["metadata"]["resourceVersion"] = resource_version;
  SetLeaseRecord(lease, record);
  absl::StatusOr<Json> updated = client_.Update(Leases(), lease);
  if (!updated.ok()) return Annotate(updated.status(), "update lease " + Describe());
  std::string version = ResourceVersion(*updated);
  absl::MutexLock lock(&mu_);
  last_ = std::move(*updated);
  return version;
}

}  // namespace ccm::kube
