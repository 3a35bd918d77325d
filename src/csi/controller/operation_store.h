#pragma once
// Where the controller remembers the CNS tasks it started, so that a CreateVolume (DeleteVolume,
// ControllerExpandVolume, ControllerPublish/UnpublishVolume) retried after the provisioner's
// timeout or after a controller restart waits for the task it started instead of starting a
// second one (a second CnsCreateVolume makes a second disk, which nothing would ever delete).
//
// The record is the reference's CnsVolumeOperationRequest (cns.vmware.com/v1alpha1, namespaced
// in the driver's namespace, CSI_NAMESPACE, default vmware-system-csi), read and written as the
// reference does, so records made by either driver are understood by the other: spec.name is the
// operation's name (the volume name for a create, "delete-<volume id>", "expand-<volume id>"),
// status.firstOperationDetails the first attempt, status.latestOperationDetails the last ten, each
// with taskId, vCenterServer, taskStatus ("InProgress", "Success", "Error"), error and
// taskInvocationTimestamp; status.volumeID the created volume (a snapshot's volume),
// status.snapshotID a created snapshot, status.capacity the size after an extend (MiB). A
// snapshot's record is named "<snapshot name>-<CNS volume ID>", as the reference names it.
//
// Protocol (ControllerService::RunTracked): an "InProgress" record with the task ID right after CNS
// took the task, "Success" or "Error" when it ended (three API requests per operation: the read of
// the record, its creation, its update; two for an attach, detach or delete, whose read comes
// from a watch, GetCached). A retry that finds an "InProgress" record with a task
// waits for that task. What remains: a controller killed between CNS taking the task and the
// record of its ID (one API round trip) leaves no record, and the retry starts the operation again
// (the reference has the same window; its record before the call names no task either). A
// CreateVolume closes it: with one vCenter and durable records, its record is written before
// anything is sent (RecordFirst), so a name without a record was never created and CNS is not
// asked for it; a record without a task (sent or not) makes the retry ask CNS for the name.
//
// Without a Kubernetes API (MemoryOperationStore) the records live as long as the process.
// Thread-safe.

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "kube/client.h"

namespace ccm::csi {

inline constexpr char kTaskInProgress[] = "InProgress";
inline constexpr char kTaskSuccess[] = "Success";
inline constexpr char kTaskError[] = "Error";

struct OperationRecord {
  std::string name;  // the operation's name (see above); the object's name is SafeObjectName
  // The object's metadata.name as read (List, Get); empty for a record not read from the API.
  std::string object_name;
  std::string volume_id;
  std::string snapshot_id;  // a created snapshot's CNS ID (status.snapshotID)
  int64_t capacity_mb = 0;
  std::string task_id;  // "task-123"; empty before CNS took the task
  std::string vcenter;  // the vCenter label it ran on
  std::string status = kTaskInProgress;
  std::string error;
  absl::Time invoked = absl::UnixEpoch();
  int error_count = 0;
};

class OperationStore {
 public:
  virtual ~OperationStore() = default;
  // nullopt when there is no record of that name.
  virtual absl::StatusOr<std::optional<OperationRecord>> Get(const std::string& name) = 0;
  // As Get, from a watch of the records once it has them (no request), for the operations whose
  // repetition CNS refuses or finds done (attach, detach, delete): the watch may lag a write by
  // moments, which can only make such an operation send its CNS call again, never take a
  // finished task for its own. A record in progress is read from the API server all the same
  // (it is waited for: it must be the current one).
  virtual absl::StatusOr<std::optional<OperationRecord>> GetCached(const std::string& name) {
    return Get(name);
  }
  // The watch GetCached reads (stores that have one).
  virtual void Start() {}
  virtual void Stop() {}
  // Creates or replaces the record (the history of earlier attempts is kept).
  virtual absl::Status Put(const OperationRecord& record) = 0;
  // Creates the record unless one of that name exists (one request): true when it created it.
  virtual absl::StatusOr<bool> CreateIfAbsent(const OperationRecord& record) {
    absl::StatusOr<std::optional<OperationRecord>> prior = Get(record.name);
    if (!prior.ok()) return prior.status();
    if (prior->has_value()) return false;
    if (absl::Status s = Put(record); !s.ok()) return s;
    return true;
  }
  virtual absl::Status Delete(const std::string& name) = 0;
  // Deletes the record as listed (by its object's name when it has one: an object written under
  // another naming scheme, by an earlier version, is removed too).
  virtual absl::Status DeleteListed(const OperationRecord& record) { return Delete(record.name); }
  // Every record (for the clean-up of old ones).
  virtual absl::StatusOr<std::vector<OperationRecord>> List() = 0;
  // Whether the records outlive the process (in the API server): only then does "no record" say
  // that a retry's operation was never sent.
  virtual bool durable() const { return false; }
};

std::unique_ptr<OperationStore> NewMemoryOperationStore();
// CnsVolumeOperationRequest objects in `ns` through `client` (which must outlive the store);
// GetCached reads an informer of them while its watch works (list and watch; without the watch
// permission, as with the reference's Role, the records are listed once and GetCached reads each
// record with a GET).
std::unique_ptr<OperationStore> NewKubeOperationStore(kube::Client& client, std::string ns);

// The Kubernetes object name of an operation's record. A name that is already a valid object
// name (a DNS-1123 subdomain: at most 253 of [a-z0-9.-], starting and ending with a letter or
// digit; every name the reference makes) is kept, so either driver finds the other's records.
// Any other name (an in-tree VMDK path, a qualified volume ID's '@', upper case) is lowered with
// the other characters made '-', cut to leave room, and given "-" + 16 hex digits of a stable
// 64-bit hash (FNV-1a) of the whole name: two names never share a record because they differ
// only in case, '_' against '-', or past the cut, and the result is always a valid name.
std::string SafeObjectName(const std::string& name);

// The CnsVolumeOperationRequest for `r` on top of `existing` (null: a new object), keeping its
// first operation and the last ten; and back. Pure, for tests.
kube::Json RecordToObject(const OperationRecord& r, const kube::Json* existing,
                          const std::string& ns);
absl::StatusOr<OperationRecord> RecordFromObject(const kube::Json& obj);

// The records to delete at a clean-up pass: ended ("Success"/"Error") and invoked more than
// `age` before `now` (the reference: 15 minutes, cnsvolumeoperationrequest-cleanup-intervalinmin).
std::vector<OperationRecord> StaleRecords(const std::vector<OperationRecord>& records,
                                          absl::Time now, absl::Duration age);

}  // namespace ccm::csi
