#include "csi/syncer/trim.h"

#include <initializer_list>

namespace ccm::csi::syncer {

using Json = nlohmann::json;  // as entities.h, which a unity build may put beside this file

namespace {

// Moves the values at `paths` (those present) from `from` into a new object, same places.
Json Keep(Json& from, std::initializer_list<const char*> paths) {
  Json out = Json::object();
  for (const char* p : paths) {
    const Json::json_pointer ptr(p);
    if (from.contains(ptr)) out[ptr] = std::move(from.at(ptr));
  }
  return out;
}

}  // namespace

void TrimPvForSyncer(Json& pv) {
  if (!pv.is_object()) return;
  pv = Keep(
      pv, {"/metadata/name", "/metadata/uid", "/metadata/resourceVersion", "/metadata/labels",
           "/metadata/deletionTimestamp", "/metadata/annotations/pv.kubernetes.io~1provisioned-by",
           "/metadata/annotations/pv.kubernetes.io~1migrated-to", "/spec/csi/driver",
           "/spec/csi/volumeHandle", "/spec/vsphereVolume/volumePath",
           "/spec/vsphereVolume/storagePolicyName", "/spec/claimRef/namespace",
           "/spec/claimRef/name", "/spec/persistentVolumeReclaimPolicy", "/status/phase"});
}

void TrimPvcForSyncer(Json& pvc) {
  if (!pvc.is_object()) return;
  pvc = Keep(pvc, {"/metadata/name", "/metadata/namespace", "/metadata/resourceVersion",
                   "/metadata/labels",
                   "/metadata/annotations/cns.vmware.com~1pv-to-backingdiskobjectid-mapping",
                   "/spec/volumeName"});
}

void TrimPodForSyncer(Json& pod) {
  if (!pod.is_object()) return;
  Json claims = Json::array();
  const Json::json_pointer volumes("/spec/volumes");
  if (pod.contains(volumes) && pod.at(volumes).is_array()) {
    for (Json& v : pod.at(volumes)) {
      const Json::json_pointer name("/persistentVolumeClaim/claimName");
      const Json::json_pointer vmdk("/vsphereVolume/volumePath");  // an inline in-tree volume
      if (v.is_object() && v.contains(name)) {
        claims.push_back({{"persistentVolumeClaim", {{"claimName", std::move(v.at(name))}}}});
      } else if (v.is_object() && v.contains(vmdk)) {
        claims.push_back({{"vsphereVolume", {{"volumePath", std::move(v.at(vmdk))}}}});
      }
    }
  }
  Json out = Keep(pod, {"/metadata/name", "/metadata/namespace", "/metadata/resourceVersion",
                        "/metadata/deletionTimestamp", "/status/phase"});
  if (!claims.empty()) out["spec"]["volumes"] = std::move(claims);
  pod = std::move(out);
}

}  // namespace ccm::csi::syncer
