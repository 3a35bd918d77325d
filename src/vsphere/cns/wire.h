#pragma once
// The CNS wire format: method arguments as XML and answers parsed from XML. Pure functions (no
// I/O), table-tested on their own. Element names, order and xsi:types follow the vSphere CNS API
// (govmomi cns/types): an element out of order is rejected by vCenter's SOAP stack.
//
// Faults (FaultStatus): a CNS fault keeps its type name (FaultName() in soap.h) and message; the
// codes are the ones the CSI sidecars act on.
//   NotFound, ManagedObjectNotFound,  -> NotFound (an unknown volume id, snapshot or VM)
//   CnsVolumeNotFoundFault, CnsSnapshotNotFoundFault, FileNotFound
//   ResourceInUse, InvalidPowerState  -> FailedPrecondition (deleting an attached volume, ...)
//   TooManyDevices, TooManyDisksOnLegacyHost, NoDiskSpace, InsufficientResourcesFault
//                                     -> ResourceExhausted (no free SCSI slot, a full disk)
//   TaskInProgress, ConcurrentAccess  -> Aborted (another operation on the object)
//   InvalidState                      -> Unavailable (the object is changing state)
//   others                            -> the vim25 mapping of soap.h (InvalidArgument, Unknown...)

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "pugixml.hpp"
#include "vsphere/cns/types.h"
#include "vsphere/moref.h"

namespace ccm::vsphere::cns {

// CNS is spoken to at vCenter's vsanHealth endpoint, "urn:vsan" namespace (vsphere::
// kCnsEndpoint), on the vim25 session.
inline const Moref& VolumeManagerRef();  // CnsVolumeManager:cns-volume-manager

// Arguments (starting with _this) of each method.
std::string CreateVolumeArgs(const std::vector<CreateSpec>& specs);
std::string DeleteVolumeArgs(const std::vector<std::string>& volume_ids, bool delete_disk);
struct AttachDetach {
  std::string volume_id;
  Moref vm;
};
std::string AttachVolumeArgs(const std::vector<AttachDetach>& specs);
std::string DetachVolumeArgs(const std::vector<AttachDetach>& specs);
struct Extend {
  std::string volume_id;
  int64_t capacity_mb = 0;
};
std::string ExtendVolumeArgs(const std::vector<Extend>& specs);
std::string UpdateVolumeMetadataArgs(const std::vector<MetadataUpdate>& specs);
std::string QueryVolumeArgs(const QueryFilter& filter);
struct SnapshotRef {
  std::string volume_id;
  std::string snapshot_id;  // CnsDeleteSnapshots
  std::string description;  // CnsCreateSnapshots
};
std::string CreateSnapshotsArgs(const std::vector<SnapshotRef>& specs);
std::string DeleteSnapshotsArgs(const std::vector<SnapshotRef>& specs);
std::string QuerySnapshotsArgs(const SnapshotQueryFilter& filter);
std::string QueryVolumeInfoArgs(const std::vector<std::string>& volume_ids);
// VcenterVStorageObjectManager.SetVStorageObjectControlFlags (vim25) of one First Class Disk.
std::string SetControlFlagsArgs(const Moref& manager, const std::string& volume_id,
                                const Moref& datastore, const std::vector<std::string>& flags);

// Pieces, exposed for tests.
std::string VolumeMetadataXml(absl::string_view tag, const VolumeMetadata& m);
std::string QueryFilterXml(absl::string_view tag, const QueryFilter& f);

// The returnval of CnsQueryVolume (a CnsQueryResult). Malformed numbers are an error.
absl::StatusOr<QueryResult> ParseQueryResult(const pugi::xml_node& returnval);
VolumeMetadata ParseVolumeMetadata(const pugi::xml_node& n);
// A CnsSnapshotQueryResult (the result of a CnsQuerySnapshots task).
absl::StatusOr<SnapshotQueryResult> ParseSnapshotQueryResult(const pugi::xml_node& result);
// A CnsSnapshot; a missing or malformed createTime is an error.
absl::StatusOr<Snapshot> ParseSnapshot(const pugi::xml_node& n);

// A TaskInfo (the `info` property of a Task).
struct TaskInfo {
  std::string state;                              // queued, running, success, error
  std::string error_fault;                        // xsi:type of error.fault, when state == error
  std::string error_message;                      // error.localizedMessage
  pugi::xml_node result;                          // info.result (CnsVolumeOperationBatchResult)
  std::shared_ptr<const pugi::xml_document> doc;  // owns `result`
  bool done() const { return state == "success" || state == "error"; }
};
// `info` is the <val> of a Task's "info" property. An unknown state is an error.
absl::StatusOr<TaskInfo> ParseTaskInfo(std::shared_ptr<const pugi::xml_document> doc,
                                       const pugi::xml_node& info);

// The volumeResults of a CnsVolumeOperationBatchResult. vCenter answers one per volume asked
// about; another CNS implementation may answer none (an empty list, not an error).
absl::StatusOr<std::vector<VolumeOperationResult>> ParseBatchResult(const pugi::xml_node& result);

// The status for a CNS fault (see the table at the top).
absl::Status FaultStatus(absl::string_view fault_name, absl::string_view message);
// The status of a volume result's fault; a CnsAlreadyRegisteredFault keeps the volume ID CNS
// has the disk under, for RegisteredVolumeId (volume_manager.h).
absl::Status ResultFaultStatus(const VolumeOperationResult& r);

inline const Moref& VolumeManagerRef() {
  static const Moref* const m = new Moref{"CnsVolumeManager", "cns-volume-manager"};
  return *m;
}

}  // namespace ccm::vsphere::cns
