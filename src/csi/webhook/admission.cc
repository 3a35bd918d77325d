#include "csi/webhook/admission.h"

#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/logging.h"
#include "csi/core/constants.h"
#include "kube/quantity.h"

namespace ccm::csi {
namespace {

using Json = nlohmann::json;

// The reference's messages, word for word: users search for them.
constexpr char kMigrationParams[] =
    "Invalid StorageClass Parameters. Migration specific parameters should not be used in the "
    "StorageClass";
constexpr char kFileVolumeAffinity[] =
    "Invalid configuration. File volumes cannot have node affinity rules";
constexpr char kExpandWithSnapshots[] = "Expanding volume with snapshots is not allowed";
constexpr char kDeleteWithSnapshots[] = "Deleting volume with snapshots is not allowed";

std::string Str(const Json& o, const char* pointer) {
  const Json::json_pointer p(pointer);
  return o.contains(p) && o.at(p).is_string() ? o.at(p).get<std::string>() : "";
}

AdmissionVerdict Deny(std::string message) { return {false, std::move(message)}; }

AdmissionVerdict JudgeStorageClass(const Json& sc) {
  if (Str(sc, "/provisioner") != kDriverName) return {};
  static const std::set<std::string>* const migration =
      new std::set<std::string>{"csimigration",
                                "datastore-migrationparam",
                                "diskformat-migrationparam",
                                "hostfailurestotolerate-migrationparam",
                                "forceprovisioning-migrationparam",
                                "cachereservation-migrationparam",
                                "diskstripes-migrationparam",
                                "objectspacereservation-migrationparam",
                                "iopslimit-migrationparam"};
  const Json::json_pointer params("/parameters");
  if (!sc.contains(params) || !sc.at(params).is_object()) return {};
  for (const auto& [key, value] : sc.at(params).items()) {
    if (migration->count(key)) return Deny(absl::StrCat(kMigrationParams, " (", key, ")"));
  }
  return {};
}

bool IsFileVolume(const Json& spec) {
  if (spec.value("volumeMode", "Filesystem") == "Block") return false;
  for (const Json& m : spec.value("accessModes", Json::array())) {
    if (m == "ReadWriteMany" || m == "ReadOnlyMany") return true;
  }
  return false;
}

bool HasMultiNodeAccess(const Json& spec) {
  for (const Json& m : spec.value("accessModes", Json::array())) {
    if (m == "ReadWriteMany" || m == "ReadOnlyMany") return true;
  }
  return false;
}

// The reference's rule (validatepv.go): a PV with a multi-node access mode, whatever its
// volumeMode (a ReadWriteMany Block PV too), may not carry node affinity. Judged for this
// driver's PVs (and in-tree vsphereVolume ones) only: the reference judges every PV the webhook
// is sent, which refuses other drivers' (an NFS PV with node affinity is valid).
AdmissionVerdict JudgePersistentVolume(const Json& pv) {
  const Json spec = pv.value("spec", Json::object());
  const bool ours =
      Str(pv, "/spec/csi/driver") == "csi.vsphere.vmware.com" || spec.contains("vsphereVolume");
  if (ours && HasMultiNodeAccess(spec) && spec.contains("nodeAffinity") &&
      !spec.at("nodeAffinity").is_null()) {
    return Deny(kFileVolumeAffinity);
  }
  return {};
}

long double StorageRequest(const Json& pvc) {
  absl::StatusOr<long double> q = kube::ParseQuantity(Str(pvc, "/spec/resources/requests/storage"));
  return q.ok() ? *q : 0;
}

AdmissionVerdict JudgeClaim(const Json& req, const AdmissionLookups& lookups) {
  const std::string op = req.value("operation", "");
  if (op != "UPDATE" && op != "DELETE") return {};
  const Json old_pvc = req.value("oldObject", Json());
  if (!old_pvc.is_object() || IsFileVolume(old_pvc.value("spec", Json::object()))) return {};
  const std::string ns = Str(old_pvc, "/metadata/namespace");
  const std::string name = Str(old_pvc, "/metadata/name");
  if (op == "UPDATE") {
    const Json new_pvc = req.value("object", Json());
    if (!new_pvc.is_object() || StorageRequest(new_pvc) <= StorageRequest(old_pvc)) return {};
  } else {
    const std::string pv = Str(old_pvc, "/spec/volumeName");
    if (pv.empty() || !lookups.reclaim_policy) return {};
    absl::StatusOr<std::string> policy = lookups.reclaim_policy(pv);
    if (!policy.ok() || *policy != "Delete") return {};  // the disk stays: nothing to protect
    if (lookups.namespace_terminating) {
      absl::StatusOr<bool> terminating = lookups.namespace_terminating(ns);
      if (terminating.ok() && *terminating) return {};
    }
  }
  if (!lookups.snapshots_of) return {};
  absl::StatusOr<std::vector<std::string>> snaps = lookups.snapshots_of(ns, name);
  if (!snaps.ok()) {
    LOG_WARN("admission of PVC {}/{}: VolumeSnapshots cannot be listed ({}); allowed", ns, name,
             snaps.status().message());
    return {};
  }
  if (snaps->empty()) return {};
  return Deny(absl::StrCat(op == "UPDATE" ? kExpandWithSnapshots : kDeleteWithSnapshots, " (PVC ",
                           ns, "/", name, " has VolumeSnapshots ", absl::StrJoin(*snaps, ", "),
                           ")"));
}

}  // namespace

AdmissionVerdict Judge(const Json& request, const AdmissionLookups& lookups) {
  const std::string kind = Str(request, "/kind/kind");
  const Json object = request.value("object", Json());
  if (kind == "StorageClass") {
    return object.is_object() ? JudgeStorageClass(object) : Deny("cannot read the StorageClass");
  }
  if (kind == "PersistentVolume") {
    if (request.value("operation", "") != "CREATE" || !object.is_object()) return {};
    return JudgePersistentVolume(object);
  }
  if (kind == "PersistentVolumeClaim") return JudgeClaim(request, lookups);
  return {};  // not ours to judge
}

HttpAnswer ReviewAdmission(absl::string_view content_type, absl::string_view body,
                           const AdmissionLookups& lookups) {
  if (body.empty()) return {400, "text/plain", "received empty request body"};
  if (!absl::StartsWith(content_type, "application/json")) {
    return {415, "text/plain", "invalid Content-Type, expect `application/json`"};
  }
  Json review = Json::parse(body, nullptr, /*allow_exceptions=*/false);
  Json response = {{"allowed", false}};
  const Json* request = nullptr;
  if (review.is_object() && review.contains("request") && review.at("request").is_object()) {
    request = &review.at("request");
  }
  if (request == nullptr) {
    response["status"] = {{"message", "cannot read the AdmissionReview: no request"}};
  } else {
    const AdmissionVerdict v = Judge(*request, lookups);
    response["uid"] = request->value("uid", "");
    response["allowed"] = v.allowed;
    if (!v.allowed) {
      response["status"] = {{"message", v.message}, {"code", 403}};
      LOG_INFO("admission of {} {}: denied: {}", Str(*request, "/kind/kind"),
               request->value("name", ""), v.message);
    }
  }
  const Json out = {{"apiVersion", "admission.k8s.io/v1"},
                    {"kind", "AdmissionReview"},
                    {"response", std::move(response)}};
  return {200, "application/json", out.dump()};
}

}  // namespace ccm::csi
