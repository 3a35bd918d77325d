#pragma once
// VolumeManager: what the CSI controller and the syncer ask of a vCenter's Cloud Native Storage,
// as an interface (the seam their decisions are table-tested through, as aws-ebs-csi-driver's
// Cloud). CnsClient (cns_client.h) is the real one over SOAP; FakeCns
// (test/testing/fake_controller.h) keeps volumes in memory.
//
// Errors, the contract the CSI layer maps to gRPC codes:
// - NotFound: CNS does not know the volume id (fault NotFound), or the VM is gone
//   (ManagedObjectNotFound). Only ever from a CNS answer about that object.
// - FailedPrecondition: ResourceInUse, e.g. deleting the disk of an attached volume, or attaching
//   a volume that is attached (vCenter says so even for the same VM: AttachedDiskUuid() tells).
// - Unavailable: vCenter could not be asked or did not say (connection, HTTP 5xx, session that
//   cannot be renewed, a task that vanished). Never NotFound.
// - DeadlineExceeded: the task did not finish within its wait.
// - Any other CNS fault: the soap.h mapping (InvalidArgument, ResourceExhausted for
//   TooManyDevices, Unknown for CnsFault, ...). The message always keeps the fault's name and
//   vCenter's text, and FaultName() gives the fault's type.
// Implementations are thread-safe; calls on different volumes may run in parallel.

#include <cstdint>
#include <functional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "vsphere/cns/snapshot_batch.h"
#include "vsphere/cns/types.h"
#include "vsphere/moref.h"

namespace ccm::vsphere::cns {

// One CNS change, as started: the method, its arguments in both forms (typed, for fakes and
// logs; XML, for the wire) and what it is (for messages). Built by the *Op functions below.
struct Operation {
  std::string method;  // "CnsCreateVolume", ...
  std::string args_xml;
  std::string what;         // "CNS attach volume <id> to vm-42"
  CreateSpec create;        // CnsCreateVolume
  std::string volume_id;    // every other method
  Moref vm;                 // attach, detach
  int64_t capacity_mb = 0;  // extend
  bool delete_disk = true;  // delete
  VolumeMetadata metadata;  // update metadata
  std::string snapshot_id;  // delete snapshot
  std::string description;  // create snapshot
};
Operation CreateOp(const CreateSpec& spec);
Operation DeleteOp(const std::string& volume_id, bool delete_disk);
// One CnsDeleteVolume of several volumes (DeleteBatch); of one, the same as above.
Operation DeleteOp(const std::vector<std::string>& volume_ids, bool delete_disk);
Operation AttachOp(const std::string& volume_id, const Moref& vm);
Operation DetachOp(const std::string& volume_id, const Moref& vm);
Operation ExtendOp(const std::string& volume_id, int64_t capacity_mb);
Operation UpdateMetadataOp(const std::string& volume_id, const VolumeMetadata& metadata);
Operation CreateSnapshotOp(const std::string& volume_id, const std::string& description);
Operation DeleteSnapshotOp(const std::string& volume_id, const std::string& snapshot_id);
// CnsQueryVolumeInfo of one volume: a task, run as the changes are.
Operation QueryVolumeInfoOp(const std::string& volume_id);

// The results of a finished task, read for the operation that started it.
absl::StatusOr<CreateResult> CreateResultOf(const Operation& op, const VolumeOperationResult& r);
absl::StatusOr<std::string> DiskUuidOf(const Operation& op, const VolumeOperationResult& r);
absl::StatusOr<Snapshot> SnapshotOf(const Operation& op, const VolumeOperationResult& r);
absl::StatusOr<DiskBacking> DiskBackingOf(const Operation& op, const VolumeOperationResult& r);

// The volume ID a CnsAlreadyRegisteredFault of CreateVolume names: the registration of a disk CNS
// has already ("" when the status carries none).
std::string RegisteredVolumeId(const absl::Status& s);

// A task that succeeded with no result for its volume (no volumeResults): what Wait answers then;
// Settle decides such a task from what CNS says of the volume now (settle.cc).
absl::Status NoVolumeResult(absl::string_view what, absl::string_view task);
bool IsNoVolumeResult(const absl::Status& s);

// The reference's optype of a CNS method ("CnsCreateVolume" -> "create-volume"; "" if none).
absl::string_view CnsOpType(absl::string_view method);

// Called once per CNS operation (a change, start to task end, or a query) with the reference's
// optype, whether it succeeded, and how long it took: what vsphere_cns_volume_ops_histogram
// records.
using CnsOperationObserver =
    std::function<void(absl::string_view optype, bool ok, absl::Duration elapsed)>;

// Whether a vCenter of `api_version` (about.apiVersion, "7.0.3.0") has CNS's snapshot API
// (CnsCreateSnapshots, CnsDeleteSnapshots, CnsQuerySnapshots): vSphere 7.0U3 and later.
bool HasSnapshotApi(absl::string_view api_version);
// Whether it extends a volume attached to a VM (online expansion): vSphere 7.0U2 and later, the
// reference's IsOnlineExtendVolumeSupported.
bool HasOnlineExtend(absl::string_view api_version);
// Whether its CNS takes the new volume's ID in CnsVolumeCreateSpec (CNS transactions, the
// reference's csi-transaction-support): vSphere 9.1 and later.
bool HasTransactions(absl::string_view api_version);

class VolumeManager {
 public:
  virtual ~VolumeManager() = default;

  // Whether this vCenter serves CNS snapshots: by its API version (HasSnapshotApi), and false
  // for good once a snapshot call was refused as a method the server does not know (a snapshot
  // call then answers Unimplemented). An error when vCenter could not be asked.
  virtual absl::StatusOr<bool> SnapshotsSupported() { return true; }
  // about.apiVersion of this vCenter ("7.0.3.0"); an error when it could not be asked.
  virtual absl::StatusOr<std::string> ApiVersion() { return std::string("7.0.3.0"); }

  // CnsQueryVolume: one page; pass result.cursor.offset as the next filter's cursor offset while
  // it is below cursor.total_records.
  virtual absl::StatusOr<QueryResult> QueryVolume(const QueryFilter& filter) = 0;
  // CnsQuerySnapshots (a task on vCenter, waited here): one page; a spec naming an unknown
  // volume or snapshot gives an entry with its fault, not an error.
  virtual absl::StatusOr<SnapshotQueryResult> QuerySnapshots(const SnapshotQueryFilter& filter) = 0;
  // The two halves of every change: Start returns the task of `op` (an error: CNS did not take
  // it); Wait waits for a task (a new one, or one recorded before a restart) and returns its
  // single volume result, a fault as its status. A task vCenter no longer knows is Unavailable
  // (IsTaskVanished). The halves let a caller record the task between them (the CSI
  // controller's operation store), so a retry after a restart waits instead of starting again.
  virtual absl::StatusOr<Moref> Start(const Operation& op) = 0;
  virtual absl::StatusOr<VolumeOperationResult> Wait(const Moref& task, absl::string_view what) = 0;
  // As Wait, for `op` (its task's results may be a batch's, e.g. a delete sent with others by
  // DeleteBatch): its own volume's result, its fault as the status; NoVolumeResult when the
  // task names no result for that volume.
  absl::StatusOr<VolumeOperationResult> WaitOwn(const Moref& task, const Operation& op);
  // As Wait, with every volume result of the task (a batch's), each with its fault if any.
  virtual absl::StatusOr<std::vector<VolumeOperationResult>> WaitAll(const Moref& task,
                                                                     absl::string_view what);
  // Tells the metrics about an operation run as Start + Wait by the caller.
  virtual void Report(const Operation& op, bool ok, absl::Duration elapsed) const {}
  // The disk UUID of the volume's disk on the VM, "" when it is not attached there: how an
  // idempotent attach is told from a conflicting one after ResourceInUse. NotFound when the VM
  // is gone.
  virtual absl::StatusOr<std::string> AttachedDiskUuid(const Moref& vm,
                                                       const std::string& volume_id) = 0;
  // Sets keepAfterDeleteVm on the volume's First Class Disk (vim25
  // VcenterVStorageObjectManager.SetVStorageObjectControlFlags; `datastore` is the disk's): the
  // disk then survives the deletion of a VM it is attached to, as an in-tree volume must.
  virtual absl::Status KeepAfterVmDeletion(const std::string& volume_id,
                                           const Moref& datastore) = 0;

  // The outcome of `op` whose task named no result for its volume, from one look at the volume:
  // a deletion of a volume CNS does not have, a detach of a disk no longer on the VM, an attach
  // whose disk is there (its UUID), an extension to at least the size, a metadata update whose
  // entities show, a creation whose name CNS knows (its ID) are done; one not done is
  // Unavailable (to be tried again); an extension or update of a volume CNS does not have is
  // NotFound.
  absl::StatusOr<VolumeOperationResult> Settle(const Operation& op);

  // Each change as one call: Start, Wait, Report (Settle when the task names no result).
  // CnsCreateVolume of one block volume; CNS places it on one of spec.datastores.
  absl::StatusOr<CreateResult> CreateVolume(const CreateSpec& spec);
  // delete_disk=false only forgets the volume in CNS (the FCD stays).
  absl::Status DeleteVolume(const std::string& volume_id, bool delete_disk = true);
  // The disk UUID (e.g. "6000C29...") the guest sees the disk by.
  absl::StatusOr<std::string> AttachVolume(const std::string& volume_id, const Moref& vm);
  absl::Status DetachVolume(const std::string& volume_id, const Moref& vm);
  // To capacity_mb (growing only).
  absl::Status ExtendVolume(const std::string& volume_id, int64_t capacity_mb);
  // Entity metadata replaces the same entity's (or removes it when EntityMetadata::remove),
  // container cluster replaced when set.
  absl::Status UpdateVolumeMetadata(const std::string& volume_id, const VolumeMetadata& metadata);
  // Several volumes in one CnsUpdateVolumeMetadata task: each volume's outcome in the order of
  // `updates` (OK, or its fault as a status). An error when CNS did not take the call or the
  // task failed as a whole.
  absl::StatusOr<std::vector<absl::Status>> UpdateVolumesMetadata(
      const std::vector<MetadataUpdate>& updates);
  // CnsCreateSnapshots of one volume: the snapshot as CNS made it.
  absl::StatusOr<Snapshot> CreateSnapshot(const std::string& volume_id,
                                          const std::string& description);
  absl::Status DeleteSnapshot(const std::string& volume_id, const std::string& snapshot_id);
  // The volume's disk file and datastore (CnsQueryVolumeInfo); NotFound for an unknown volume.
  absl::StatusOr<DiskBacking> VolumeInfo(const std::string& volume_id);
  // Every snapshot of one volume (all pages); NotFound when CNS does not know the volume.
  // Look-ups made at the same time share one CnsQuerySnapshots (SnapshotBatch).
  absl::StatusOr<std::vector<Snapshot>> SnapshotsOf(const std::string& volume_id);
  SnapshotBatch::Stats snapshot_lookups() const { return snapshot_batch_.stats(); }

 protected:
  absl::StatusOr<VolumeOperationResult> Run(const Operation& op);

 private:
  SnapshotBatch snapshot_batch_;
};

}  // namespace ccm::vsphere::cns
