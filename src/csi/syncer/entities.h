#pragma once
// What CNS should say about one volume, from the Kubernetes objects that own it, and the
// metadata update that gets it there. Pure: JSON objects in, CNS value types out.
//
// The entities are the reference's (pkg/syncer/metadatasyncer.go, vanilla flavor):
//  - PERSISTENT_VOLUME: the PV's name and labels, no namespace.
//  - PERSISTENT_VOLUME_CLAIM: when the PV is bound to it (claimRef names it and the PVC's
//    spec.volumeName is the PV): its name, namespace and labels, referring to the PV.
//  - POD: every Running Pod that mounts that PVC: its name and namespace, referring to the PVC.
//    No labels, as the reference (csiUpdatePod passes none).
// Every entity carries the config's cluster-id. Entities of other clusters on the same volume
// are never touched.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "nlohmann/json.hpp"
#include "vsphere/cns/types.h"

namespace ccm::csi::syncer {

using Json = nlohmann::json;
namespace cns = ::ccm::vsphere::cns;

inline constexpr char kEntityPv[] = "PERSISTENT_VOLUME";
inline constexpr char kEntityPvc[] = "PERSISTENT_VOLUME_CLAIM";
inline constexpr char kEntityPod[] = "POD";

// spec.csi.driver == csi.vsphere.vmware.com and a volume handle.
bool IsOurPv(const Json& pv);
// spec.csi.volumeHandle ("" when absent).
std::string VolumeHandle(const Json& pv);
// "namespace/name" of spec.claimRef, "" when unbound.
std::string ClaimKey(const Json& pv);
// The PVC names ("namespace/name") of the Pod's persistentVolumeClaim volumes.
std::vector<std::string> PodClaimKeys(const Json& pod);
// A Pod whose volumes are in use: status.phase Running and not being deleted.
bool PodIsRunning(const Json& pod);

// Whether an update changes anything the entities are made of: for a PV its name, labels, CSI
// driver, volume handle and claimRef; for a PVC its name, namespace, labels and spec.volumeName.
// Status, finalizers, annotations, resourceVersion and the like do not, and cost no CNS call.
bool PvUpdateMatters(const Json& old_pv, const Json& new_pv);
bool PvcUpdateMatters(const Json& old_pvc, const Json& new_pvc);

// Desired entities of the volume behind `pv`. `pvc` may be null (unbound, or the PVC is gone);
// it is used only when bound to this PV. `pods` are the Pods that mount the PVC (filtered here).
std::vector<cns::EntityMetadata> DesiredEntities(const Json& pv, const Json* pvc,
                                                 const std::vector<Json>& pods,
                                                 const std::string& cluster_id);

// The entity metadata to send so that CNS's entities of `cluster_id` become `desired`: desired
// entities that are missing or differ (labels compared as sets, references in any order), and a
// removal (remove=true) for each entity of this cluster that is not desired. Empty when nothing
// differs. Entities of other clusters are left out.
std::vector<cns::EntityMetadata> PlanEntityUpdate(const std::vector<cns::EntityMetadata>& current,
                                                  const std::vector<cns::EntityMetadata>& desired,
                                                  const std::string& cluster_id);

// A 64-bit digest of `entities` that is the same for equal sets (entity, label and reference
// order ignored): the syncer remembers, per volume, the digest of what CNS was last seen or made to
// say, and skips the CNS query when the desired entities have that digest.
uint64_t EntitiesDigest(const std::vector<cns::EntityMetadata>& entities);

// EntitiesDigest of the entities of `cluster_id` in `current`: equal to EntitiesDigest(desired)
// exactly when PlanEntityUpdate(current, desired, cluster_id) is empty (desired entities all
// being of `cluster_id`, as DesiredEntities makes them). The full sync keeps this digest per CNS
// volume instead of the volume's metadata.
uint64_t OwnEntitiesDigest(const std::vector<cns::EntityMetadata>& current,
                           const std::string& cluster_id);

// The reference's PVC annotation (feature state pv-to-backingdiskobjectid-mapping):
// "<PV uid>:<backingDiskObjectId>" of the bound PV's volume.
inline constexpr char kBackingObjectAnnotation[] =
    "cns.vmware.com/pv-to-backingdiskobjectid-mapping";

// What the annotation should become, as the reference decides: "<pv_uid>:<object_id>" when both
// are known and it differs from `current`; "" (the annotation emptied, not removed) when the
// volume has no object ID but the PVC carries an annotation; nullopt when nothing changes.
std::optional<std::string> BackingObjectAnnotationChange(const std::optional<std::string>& current,
                                                         const std::string& pv_uid,
                                                         const std::string& object_id);

// The label the reference's full sync puts on a volume of the cluster that no PV names.
inline constexpr char kPvMissingLabel[] = "pv_missing";

// What CNS should say of a volume of `cluster_id` that no PV names, as the reference labels such
// volumes for the vSphere admin (instead of unregistering them): each PV entity of `cluster_id`
// with pv_missing=true added to its labels (others kept), or, with none, a PV entity named
// `volume_name` (the PV's name the volume was created for) with that label; no PVC or Pod entity
// of ours (their objects are gone with the PV). Empty when there is nothing to label (no PV entity
// and no volume name). When a PV names the volume again, its own entities replace these.
std::vector<cns::EntityMetadata> PvMissingEntities(const std::vector<cns::EntityMetadata>& current,
                                                   const std::string& volume_name,
                                                   const std::string& cluster_id);

// Whether the volume's own entities belong to `cluster_id` (the reference's full sync queries
// volumes by container cluster id; an entity of ours on a volume of another cluster counts).
bool HasEntitiesOf(const cns::VolumeMetadata& metadata, const std::string& cluster_id);

}  // namespace ccm::csi::syncer
