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
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "vsphere/client.h"
#include "vsphere/cns/task.h"
#include "vsphere/cns/types.h"
#include "vsphere/moref.h"

namespace ccm::vsphere::cns {

struct CnsClientOptions {
  TaskWaitOptions task;
};

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

  // The disk UUID of the volume's disk on the VM (a VirtualDisk whose vDiskId is the volume id),
  // "" when it is not attached there: how the reference tells an idempotent attach from a
  // conflicting one after ResourceInUse. NotFound when the VM is gone.
  absl::StatusOr<std::string> AttachedDiskUuid(const Moref& vm, const std::string& volume_id);

 private:
  // Runs a task-returning CNS method and returns its single volume result (fault -> status).
  absl::StatusOr<VolumeOperationResult> RunTask(absl::string_view method,
                                                absl::string_view args_xml, absl::string_view what);

  Client& vim_;
  const CnsClientOptions options_;
};

}  // namespace ccm::vsphere::cns
