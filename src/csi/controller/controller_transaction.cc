// CNS transactions (vCenter 9.1 and later; the reference's csi-transaction-support, released):
// CreateVolume sends the new volume's ID, the UID in the PV name the external-provisioner gives,
// so a create whose answer was lost (a controller restarted, a timed-out call, a second replica
// during a leader change) is the same volume in CNS itself: CNS answers the second one
// CnsVolumeAlreadyExistsFault. That volume, when it is this name's and compatible with the
// request, is the answer (the reference deletes it and creates it again).
#include "absl/strings/str_cat.h"
#include "common/logging.h"
#include "common/status_macros.h"
#include "csi/controller/controller_service.h"
#include "csi/core/volume_id.h"

namespace ccm::csi {

std::string ControllerService::TransactionIdFor(VCenterEndpoint& vc, const std::string& name) {
  absl::StatusOr<std::string> api = vc.cns->ApiVersion();
  // Unknown version: none sent (an older vCenter refuses the element; the create then fails on
  // the vCenter itself if it is down).
  if (!api.ok() || !vsphere::cns::HasTransactions(*api)) return "";
  return TransactionVolumeId(name);
}

absl::Status ControllerService::AdoptCreated(const CreatePlan& plan, VCenterEndpoint& vc,
                                             const std::string& cns_id,
                                             ::csi::v1::CreateVolumeResponse* resp) {
  const std::string what =
      absl::StrCat("create volume ", plan.name, ": CNS of vCenter ", vc.label, " has volume ",
                   cns_id, " (the ID the name carries) already");
  vsphere::cns::QueryFilter filter;
  filter.volume_ids = {cns_id};
  absl::StatusOr<vsphere::cns::QueryResult> r = vc.cns->QueryVolume(filter);
  if (!r.ok()) return Annotate(r.status(), what);
  if (r->volumes.empty()) {
    // Deleted since, or not listed yet: either way a retry decides.
    return absl::UnavailableError(absl::StrCat(what, ", but does not list it: retry"));
  }
  const vsphere::cns::Volume& v = r->volumes.front();
  if (v.name != plan.name) {
    return absl::AlreadyExistsError(absl::StrCat(what, ", named \"", v.name, "\""));
  }
  CCM_RETURN_IF_ERROR(Adopt(plan, vc, v, resp));
  LOG_INFO("created volume {} ({}): CNS had it from a create sent before", plan.name,
           resp->volume().volume_id());
  return absl::OkStatus();
}

}  // namespace ccm::csi
