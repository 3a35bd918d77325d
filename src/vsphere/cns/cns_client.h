#pragma once
// CnsClient: the vCenter Cloud Native Storage volume manager calls the CSI controller needs, on
// the vim25 session of a vsphere::Client (its kCnsEndpoint: one cookie, retries, re-login and
// metrics for every vCenter service), each waiting for its CNS task and returning a typed
// result. Calls that change state are not sent again after a connection that broke without an
// answer (CallKind::kChange): the CSI layer's idempotency handles that case.
//
// Errors (the contract the CSI layer maps to gRPC codes):
// - NotFound: CNS does not know the volume id (fault NotFound), or the VM is gone
//   (ManagedObjectNotFound). Only ever from a CNS answer about that object.
// - FailedPrecondition: ResourceInUse, e.g. deleting the disk of an attached volume, or attaching
//   a volume that is attached (vCenter says so even for the same VM: AttachedDiskUuid() tells).
// - Unavailable: vCenter could not be asked or did not say (connection, HTTP 5xx, session that
//   cannot be renewed, a task that vanished). Never NotFound.
// - DeadlineExceeded: the task did not finish within TaskWaitOptions.timeout.
// - Any other CNS fault: the soap.h mapping (InvalidArgument, Unimplemented, Unknown for CnsFault,
//   e.g. no datastore with room). The message always keeps the fault's name and vCenter's text,
//   and FaultName() gives the fault's type.
// Thread-safe; calls on different volumes may run in parallel.

#include <cstdint>
#include <functional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "vsphere/client.h"
#include "vsphere/cns/task.h"
#include "vsphere/cns/types.h"
#include "vsphere/moref.h"

namespace ccm::vsphere::cns {

// Called once per CNS operation (a change, start to task end, or a query) with the reference's
// optype ("create-volume", "attach-volume", "query-volume", ...), whether it succeeded, and how
// long it took: what vsphere_cns_volume_ops_histogram{optype,status} records.
using CnsOperationObserver =
    std::function<void(absl::string_view optype, bool ok, absl::Duration elapsed)>;

struct CnsClientOptions {
  TaskWaitOptions task;
  CnsOperationObserver observer;  // optional
};

// The reference's optype of a CNS method ("CnsCreateVolume" -> "create-volume"; "" if none).
absl::string_view CnsOpType(absl::string_view method);

// One CNS change, as started: the method, its arguments and what it is (for messages). Built by
// the *Op functions below; CnsClient::Start runs it and returns its task, Wait finishes it. The
// two halves let a caller record the task between them (the CSI controller's operation store),
// so a retry after a restart waits for that task instead of starting another.
struct Operation {
  std::string method;
  std::string args_xml;
  std::string what;
};
Operation CreateOp(const CreateSpec& spec);
Operation DeleteOp(const std::string& volume_id, bool delete_disk);
Operation AttachOp(const std::string& volume_id, const Moref& vm);
Operation DetachOp(const std::string& volume_id, const Moref& vm);
Operation ExtendOp(const std::string& volume_id, int64_t capacity_mb);
Operation UpdateMetadataOp(const std::string& volume_id, const VolumeMetadata& metadata);

// The results of a finished task, read for the operation that started it.
absl::StatusOr<CreateResult> CreateResultOf(const Operation& op, const VolumeOperationResult& r);
absl::StatusOr<std::string> DiskUuidOf(const Operation& op, const VolumeOperationResult& r);

class CnsClient {
 public:
  // `vim` must outlive the CnsClient.
  explicit CnsClient(Client& vim, CnsClientOptions options = {});

  // CnsCreateVolume of one block volume; CNS places it on one of spec.datastores.
  absl::StatusOr<CreateResult> CreateVolume(const CreateSpec& spec);
  // CnsQueryVolume: one page; pass result.cursor.offset as the next filter's cursor offset while
  // it is below cursor.total_records.
  absl::StatusOr<QueryResult> QueryVolume(const QueryFilter& filter);
  // CnsDeleteVolume. delete_disk=false only forgets the volume in CNS (the FCD stays).
  absl::Status DeleteVolume(const std::string& volume_id, bool delete_disk = true);
  // CnsAttachVolume: the disk UUID (e.g. "6000C29...") the guest sees the disk by.
  absl::StatusOr<std::string> AttachVolume(const std::string& volume_id, const Moref& vm);
  absl::Status DetachVolume(const std::string& volume_id, const Moref& vm);
  // CnsExtendVolume to capacity_mb (growing only).
  absl::Status ExtendVolume(const std::string& volume_id, int64_t capacity_mb);
  // CnsUpdateVolumeMetadata: entity metadata replaces the same entity's (or removes it when
  // EntityMetadata::remove), container cluster replaced when set.
  absl::Status UpdateVolumeMetadata(const std::string& volume_id, const VolumeMetadata& metadata);

  // The two halves of every call above: Start returns the task of `op` (an error: CNS did not
  // take it); Wait waits for a task (a new one, or one recorded before a restart) and returns its
  // single volume result, a fault as its status. A task vCenter no longer knows is Unavailable.
  absl::StatusOr<Moref> Start(const Operation& op);
  absl::StatusOr<VolumeOperationResult> Wait(const Moref& task, absl::string_view what);
  // Tells the observer about an operation run as Start + Wait by the caller.
  void Report(const Operation& op, bool ok, absl::Duration elapsed) const;

  // The disk UUID of the volume's disk on the VM (a VirtualDisk whose vDiskId is the volume id),
  // "" when it is not attached there: how the reference tells an idempotent attach from a
  // conflicting one after ResourceInUse. NotFound when the VM is gone.
  absl::StatusOr<std::string> AttachedDiskUuid(const Moref& vm, const std::string& volume_id);

 private:
  // Start, then Wait (reported to the observer).
  absl::StatusOr<VolumeOperationResult> Run(const Operation& op);
  absl::StatusOr<QueryResult> Query(const QueryFilter& filter);

  Client& vim_;
  const CnsClientOptions options_;
};

}  // namespace ccm::vsphere::cns
