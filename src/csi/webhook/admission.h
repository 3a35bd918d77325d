#pragma once
// The validating admission webhook of the vSphere CSI driver (the reference's vanilla
// WEBHOOK_SERVER, POST /validate): AdmissionReview v1 in, AdmissionReview v1 out. Pure, with
// the two API reads it needs behind AdmissionLookups.
//   StorageClass (CREATE, UPDATE): a csi.vsphere.vmware.com StorageClass may not carry CSI
//     migration's parameters (csimigration, *-migrationparam): those are for the translation of
//     in-tree StorageClasses only.
//   PersistentVolume (CREATE): a file volume (ReadWriteMany/ReadOnlyMany, not Block) may not have
//     node affinity.
//   PersistentVolumeClaim (UPDATE, DELETE): a block volume with VolumeSnapshots may not grow,
//     nor be deleted while its PV would be deleted with it (reclaim policy Delete), as CNS would
//     refuse; a PVC of a namespace being deleted is let go.
// Anything the webhook cannot judge (an object it cannot read, an API error) is allowed, as the
// reference: it must not block the cluster.

#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "nlohmann/json.hpp"

namespace ccm::csi {

struct AdmissionLookups {
  // spec.persistentVolumeReclaimPolicy of a PV.
  std::function<absl::StatusOr<std::string>(const std::string& pv)> reclaim_policy;
  // Names of the VolumeSnapshots of a namespace whose source is this PVC.
  std::function<absl::StatusOr<std::vector<std::string>>(const std::string& ns,
                                                         const std::string& pvc)>
      snapshots_of;
  // Whether a namespace is being deleted (deletionTimestamp set).
  std::function<absl::StatusOr<bool>(const std::string& ns)> namespace_terminating;
};

struct AdmissionVerdict {
  bool allowed = true;
  std::string message;  // why not (empty when allowed)
};

// One AdmissionRequest (the review's "request").
AdmissionVerdict Judge(const nlohmann::json& request, const AdmissionLookups& lookups);

// The HTTP exchange: the answer's status code and body. 415 for a body that is not JSON by its
// Content-Type, 400 for an empty one; a review that cannot be read is answered (200) with a
// response saying so, as the reference.
struct HttpAnswer {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
};
HttpAnswer ReviewAdmission(absl::string_view content_type, absl::string_view body,
                           const AdmissionLookups& lookups);

}  // namespace ccm::csi
