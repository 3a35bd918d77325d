#pragma once
// CSI volume IDs when volumes can live in several vCenters.
//
// The volume ID is the bare CNS volume ID, as the reference writes it (the First Class Disk's
// UUID, "a296fbf5-1acd-4e7a-b660-2514edd77027"; for migrated in-tree volumes a "[ds] path.vmdk"),
// with any number of vCenters: with several, a CnsVolumeInfo object per volume (the reference's,
// controller/volume_infos.h) remembers its vCenter. So PersistentVolumes move between the two
// drivers in both directions.
//  - Our earlier releases wrote "<cns uuid>@<vcenter host>" with several vCenters: those IDs are
//    still read (the vCenter they name is asked, no record needed).
//  - A bare ID without a record (made before the record existed): each vCenter is asked and
//    DecideVolumeVCenter picks the answer.
// Only "<UUID>@<non-empty>" is the qualified form, so a vmdk path containing '@' stays bare.

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ccm::csi {

struct VolumeRef {
  std::string cns_id;   // the CNS volume ID, as CNS spells it
  std::string vcenter;  // empty: the ID does not say (a bare ID)
  bool operator==(const VolumeRef&) const = default;
};

// `vcenter_count`: how many vCenters the configuration has. InvalidArgument for an empty cns_id.
absl::StatusOr<std::string> FormatVolumeId(absl::string_view cns_id, absl::string_view vcenter,
                                           size_t vcenter_count);

// A VMDK path ("[datastore1] kubevols/pvc-1.vmdk"): the volume handle of an in-tree vSphere
// volume that Kubernetes' CSI migration hands to this driver (it contains ".vmdk", as the
// reference tells them).
bool IsInTreeVolumePath(absl::string_view volume_id);

// CNS gives file volumes (vSAN file shares) IDs starting with "file:" (the reference's
// ControllerUnpublishVolume relies on it too).
bool IsFileVolumeId(absl::string_view cns_id);

// InvalidArgument for an empty ID or one over 128 bytes (not for VMDK paths, which are the
// in-tree plugin's and may be longer); anything else parses (an ID that names no
// volume is the look-up's NotFound, which DeleteVolume turns into success).
absl::StatusOr<VolumeRef> ParseVolumeId(absl::string_view volume_id);

// The vCenters to ask for `ref`, in configuration order. Host names compare case-insensitively.
// A qualified ID whose vCenter is not configured is FailedPrecondition naming it (not NotFound:
// DeleteVolume would then report success and leak the disk of a vCenter removed from the config).
absl::StatusOr<std::vector<std::string>> VCentersToAsk(const VolumeRef& ref,
                                                       const std::vector<std::string>& configured);

// One vCenter's answer to "do you have this volume?": ok + found, ok + not found, or an error
// (unreachable, fault).
struct VCenterAnswer {
  std::string vcenter;
  absl::Status status;
  bool found = false;
};

// The vCenter holding the volume. Exactly one found: it. Several found: FailedPrecondition naming
// them (the same ID registered twice; guessing could delete the wrong disk). None found and some
// vCenter did not answer: Unavailable with its error (retry; never a wrong NotFound). None found
// and all answered: NotFound.
absl::StatusOr<std::string> DecideVolumeVCenter(absl::string_view volume_id,
                                                const std::vector<VCenterAnswer>& answers);

// CNS transactions (vCenter 9.1): the volume ID a CreateVolume sends, taken from the CSI volume
// name the external-provisioner gives ("pvc-<PVC UID>": the UID, lower case), as the reference's
// ExtractVolumeIDFromPVName does. "" when the name carries no UUID (another prefix, csi-sanity's
// names): the create then goes without one (the reference fails it).
std::string TransactionVolumeId(absl::string_view volume_name);

}  // namespace ccm::csi
