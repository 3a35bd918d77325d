#include "csi/syncer/entities.h"

#include <algorithm>
#include <functional>
#include <initializer_list>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "csi/core/constants.h"

namespace ccm::csi::syncer {
namespace {

std::string Str(const Json& obj, const Json::json_pointer& p) {
  if (!obj.contains(p)) return "";
  const Json& v = obj.at(p);
  return v.is_string() ? v.get<std::string>() : "";
}

std::string Name(const Json& o) { return Str(o, "/metadata/name"_json_pointer); }
std::string Namespace(const Json& o) { return Str(o, "/metadata/namespace"_json_pointer); }

cns::KeyValues SortedLabels(const Json& obj) {
  cns::KeyValues out;
  const Json::json_pointer p = "/metadata/labels"_json_pointer;
  if (!obj.contains(p) || !obj.at(p).is_object()) return out;
  for (const auto& [k, v] : obj.at(p).items()) {
    if (v.is_string()) out.emplace_back(k, v.get<std::string>());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Entity identity as CNS keys it: kind, name, namespace, cluster.
auto Key(const cns::EntityMetadata& e) {
  return std::tie(e.entity_type, e.entity_name, e.namespace_name, e.cluster_id);
}

cns::EntityMetadata Normalised(cns::EntityMetadata e) {
  std::sort(e.labels.begin(), e.labels.end());
  auto ref_key = [](const cns::EntityReference& r) {
    return std::tie(r.entity_type, r.entity_name, r.namespace_name, r.cluster_id);
  };
  std::sort(e.referred_entity.begin(), e.referred_entity.end(),
            [&](const auto& a, const auto& b) { return ref_key(a) < ref_key(b); });
  e.remove = false;
  return e;
}

// The values at `paths` (null where absent), in order.
Json Pick(const Json& o, std::initializer_list<const char*> paths) {
  Json out = Json::array();
  for (const char* p : paths) {
    const Json::json_pointer ptr(p);
    out.push_back(o.contains(ptr) ? o.at(ptr) : Json());
  }
  return out;
}

}  // namespace

uint64_t EntitiesDigest(const std::vector<cns::EntityMetadata>& entities) {
  std::vector<std::string> parts;
  for (const cns::EntityMetadata& raw : entities) {
    const cns::EntityMetadata e = Normalised(raw);
    std::string p = absl::StrCat(e.entity_type.size(), ":", e.entity_type, e.entity_name.size(),
                                 ":", e.entity_name, e.namespace_name.size(), ":", e.namespace_name,
                                 e.cluster_id.size(), ":", e.cluster_id, "|");
    for (const auto& [k, v] : e.labels) absl::StrAppend(&p, k.size(), ":", k, v.size(), ":", v);
    absl::StrAppend(&p, "|");
    for (const cns::EntityReference& r : e.referred_entity) {
      absl::StrAppend(&p, r.entity_type.size(), ":", r.entity_type, r.entity_name.size(), ":",
                      r.entity_name, r.namespace_name.size(), ":", r.namespace_name,
                      r.cluster_id.size(), ":", r.cluster_id);
    }
    parts.push_back(std::move(p));
  }
  std::sort(parts.begin(), parts.end());
  return std::hash<std::string>()(absl::StrJoin(parts, "\n"));
}

bool PvUpdateMatters(const Json& old_pv, const Json& new_pv) {
  auto facts = [](const Json& pv) {
    return Pick(pv, {"/metadata/name", "/metadata/labels",
                     "/metadata/annotations/pv.kubernetes.io~1provisioned-by",
                     "/metadata/annotations/pv.kubernetes.io~1migrated-to", "/spec/csi/driver",
                     "/spec/csi/volumeHandle", "/spec/vsphereVolume/volumePath",
                     "/spec/vsphereVolume/storagePolicyName", "/spec/claimRef/namespace",
                     "/spec/claimRef/name"});
  };
  return facts(old_pv) != facts(new_pv);
}

bool PvcUpdateMatters(const Json& old_pvc, const Json& new_pvc) {
  auto facts = [](const Json& pvc) {
    return Pick(pvc,
                {"/metadata/name", "/metadata/namespace", "/metadata/labels", "/spec/volumeName"});
  };
  return facts(old_pvc) != facts(new_pvc);
}

bool IsOurPv(const Json& pv) {
  return Str(pv, "/spec/csi/driver"_json_pointer) == kDriverName && !VolumeHandle(pv).empty();
}

std::string VolumeHandle(const Json& pv) { return Str(pv, "/spec/csi/volumeHandle"_json_pointer); }

std::string ClaimKey(const Json& pv) {
  std::string name = Str(pv, "/spec/claimRef/name"_json_pointer);
  if (name.empty()) return "";
  return Str(pv, "/spec/claimRef/namespace"_json_pointer) + "/" + name;
}

std::vector<std::string> PodClaimKeys(const Json& pod) {
  std::vector<std::string> out;
  const Json::json_pointer p = "/spec/volumes"_json_pointer;
  if (!pod.contains(p) || !pod.at(p).is_array()) return out;
  for (const Json& v : pod.at(p)) {
    std::string claim = Str(v, "/persistentVolumeClaim/claimName"_json_pointer);
    if (!claim.empty()) out.push_back(Namespace(pod) + "/" + claim);
  }
  return out;
}

bool PodIsRunning(const Json& pod) {
  return Str(pod, "/status/phase"_json_pointer) == "Running" &&
         !pod.contains("/metadata/deletionTimestamp"_json_pointer);
}

std::vector<cns::EntityMetadata> DesiredEntities(const Json& pv, const Json* pvc,
                                                 const std::vector<Json>& pods,
                                                 const std::string& cluster_id) {
  std::vector<cns::EntityMetadata> out;
  cns::EntityMetadata pv_entity;
  pv_entity.entity_type = kEntityPv;
  pv_entity.entity_name = Name(pv);
  pv_entity.labels = SortedLabels(pv);
  pv_entity.cluster_id = cluster_id;
  out.push_back(pv_entity);

  const bool bound = pvc != nullptr && ClaimKey(pv) == Namespace(*pvc) + "/" + Name(*pvc) &&
                     Str(*pvc, "/spec/volumeName"_json_pointer) == Name(pv);
  if (!bound) return out;
  cns::EntityMetadata claim;
  claim.entity_type = kEntityPvc;
  claim.entity_name = Name(*pvc);
  claim.namespace_name = Namespace(*pvc);
  claim.labels = SortedLabels(*pvc);
  claim.cluster_id = cluster_id;
  claim.referred_entity.push_back({kEntityPv, Name(pv), "", cluster_id});
  out.push_back(claim);

  const std::string claim_key = claim.namespace_name + "/" + claim.entity_name;
  for (const Json& pod : pods) {
    const std::vector<std::string> claims = PodClaimKeys(pod);
    if (!PodIsRunning(pod) || std::find(claims.begin(), claims.end(), claim_key) == claims.end()) {
      continue;
    }
    cns::EntityMetadata p;
    p.entity_type = kEntityPod;
    p.entity_name = Name(pod);
    p.namespace_name = Namespace(pod);
    p.cluster_id = cluster_id;
    p.referred_entity.push_back({kEntityPvc, claim.entity_name, claim.namespace_name, cluster_id});
    out.push_back(p);
  }
  return out;
}

std::vector<cns::EntityMetadata> PlanEntityUpdate(const std::vector<cns::EntityMetadata>& current,
                                                  const std::vector<cns::EntityMetadata>& desired,
                                                  const std::string& cluster_id) {
  std::vector<cns::EntityMetadata> plan;
  for (const cns::EntityMetadata& want : desired) {
    auto it = std::find_if(current.begin(), current.end(),
                           [&](const cns::EntityMetadata& c) { return Key(c) == Key(want); });
    if (it == current.end() || Normalised(*it) != Normalised(want)) plan.push_back(want);
  }
  for (const cns::EntityMetadata& have : current) {
    if (have.cluster_id != cluster_id) continue;
    bool wanted = std::any_of(desired.begin(), desired.end(),
                              [&](const cns::EntityMetadata& d) { return Key(d) == Key(have); });
    if (wanted) continue;
    // CNS matches a removal by kind, name, namespace and cluster only.
    cns::EntityMetadata gone = have;
    gone.remove = true;
    gone.labels.clear();
    gone.referred_entity.clear();
    plan.push_back(gone);
  }
  return plan;
}

uint64_t OwnEntitiesDigest(const std::vector<cns::EntityMetadata>& current,
                           const std::string& cluster_id) {
  std::vector<cns::EntityMetadata> own;
  for (const cns::EntityMetadata& e : current) {
    if (e.cluster_id == cluster_id) own.push_back(e);
  }
  return EntitiesDigest(own);
}

std::optional<std::string> BackingObjectAnnotationChange(const std::optional<std::string>& current,
                                                         const std::string& pv_uid,
                                                         const std::string& object_id) {
  if (pv_uid.empty() || object_id.empty()) {
    if (!current.has_value() || current->empty()) return std::nullopt;
    return std::string();
  }
  std::string want = pv_uid + ":" + object_id;
  if (current == want) return std::nullopt;
  return want;
}

std::vector<cns::EntityMetadata> PvMissingEntities(const std::vector<cns::EntityMetadata>& current,
                                                   const std::string& volume_name,
                                                   const std::string& cluster_id) {
  std::vector<cns::EntityMetadata> out;
  for (const cns::EntityMetadata& e : current) {
    if (e.cluster_id != cluster_id || e.entity_type != kEntityPv) continue;
    cns::EntityMetadata labelled = e;
    labelled.remove = false;
    std::erase_if(labelled.labels, [](const auto& kv) { return kv.first == kPvMissingLabel; });
    labelled.labels.emplace_back(kPvMissingLabel, "true");
    out.push_back(std::move(labelled));
  }
  if (out.empty() && !volume_name.empty()) {
    cns::EntityMetadata pv;
    pv.entity_type = kEntityPv;
    pv.entity_name = volume_name;
    pv.cluster_id = cluster_id;
    pv.labels = {{kPvMissingLabel, "true"}};
    out.push_back(std::move(pv));
  }
  return out;
}

bool HasEntitiesOf(const cns::VolumeMetadata& metadata, const std::string& cluster_id) {
  return std::any_of(metadata.entity_metadata.begin(), metadata.entity_metadata.end(),
                     [&](const cns::EntityMetadata& e) { return e.cluster_id == cluster_id; });
}

}  // namespace ccm::csi::syncer
