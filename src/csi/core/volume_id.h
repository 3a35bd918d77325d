#pragma once
// CSI volume IDs when volumes can live in several vCenters.
//
// The reference's volume ID is the bare CNS volume ID (the First Class Disk's UUID,
// "a296fbf5-1acd-4e7a-b660-2514edd77027"; for migrated in-tree volumes a "[ds] path.vmdk"); with
// several vCenters it keeps a CnsVolumeInfo custom resource per volume to remember the vCenter.
// We keep no such side table; the rule is:
//  - One vCenter configured: the ID is the bare CNS ID, byte for byte what the reference writes,
//    so PersistentVolumes move between the two drivers in both directions.
//  - Several vCenters: "<cns uuid>@<vcenter host>" (the host as the config's [VirtualCenter "..."]
//    section names it). Volumes created this way name their vCenter and need no search. When that
//    would exceed the spec's 128 bytes (a very long host name), the bare ID is used instead.
//  - A bare ID is always accepted: with one vCenter it is that vCenter's; with several, each
//    vCenter is asked and DecideVolumeVCenter picks the answer (PVs made by the reference, or
//    before a second vCenter was added, keep working).
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

}  // namespace ccm::csi
