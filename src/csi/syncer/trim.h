#pragma once
// What the syncer keeps of each PV, PVC and Pod in its informer caches: only the fields that
// entities.h reads (and the informer's name, namespace and resourceVersion). With 10,000 volumes
// the full objects cost well over 100 MB; these a small fraction of it. Applied as the informers'
// transform, so handlers and Get() see the trimmed objects.

#include "nlohmann/json.hpp"

namespace ccm::csi::syncer {

// metadata name, resourceVersion, labels; spec.csi driver and volumeHandle; spec.claimRef
// namespace and name; the reclaim policy and phase (whether the volume is the provisioner's to
// delete).
void TrimPvForSyncer(nlohmann::json& pv);
// metadata name, namespace, resourceVersion, labels; spec.volumeName.
void TrimPvcForSyncer(nlohmann::json& pvc);
// metadata name, namespace, resourceVersion, deletionTimestamp; the persistentVolumeClaim
// claimName of each volume that has one; status.phase.
void TrimPodForSyncer(nlohmann::json& pod);

}  // namespace ccm::csi::syncer
