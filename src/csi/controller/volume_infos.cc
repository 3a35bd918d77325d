#include "csi/controller/volume_infos.h"

#include "absl/strings/str_cat.h"
#include "common/logging.h"
#include "csi/crd/cnsvolumeinfo.h"
#include "kube/errors.h"

namespace ccm::csi {

KubeVolumeInfos::KubeVolumeInfos(kube::Client& client, std::string ns)
    : client_(client), ns_(std::move(ns)) {
  kube::InformerOptions o;
  o.ns = ns_;
  informer_ = std::make_unique<kube::Informer>(client, CnsVolumeInfos(), std::move(o));
}

void KubeVolumeInfos::Start() { informer_->Start(); }
void KubeVolumeInfos::Stop() { informer_->Stop(); }

absl::StatusOr<std::string> KubeVolumeInfos::VCenterOf(const std::string& cns_id) const {
  if (!informer_->HasSynced()) {
    return absl::UnavailableError(
        absl::StrCat("the CnsVolumeInfo objects (", kCnsVolumeInfoCrd, ") are not read yet"));
  }
  kube::ObjectPtr obj = informer_->Get(absl::StrCat(ns_, "/", CnsVolumeInfoName(cns_id)));
  if (obj == nullptr) {
    return absl::NotFoundError(
        absl::StrCat("no CnsVolumeInfo ", ns_, "/", CnsVolumeInfoName(cns_id)));
  }
  CnsVolumeInfo info = ParseCnsVolumeInfo(*obj);
  if (info.vcenter_server.empty()) {
    return absl::NotFoundError(absl::StrCat("CnsVolumeInfo ", ns_, "/", CnsVolumeInfoName(cns_id),
                                            " names no vCenterServer"));
  }
  return info.vcenter_server;
}

absl::Status KubeVolumeInfos::Record(const std::string& cns_id, const std::string& vcenter) {
  absl::StatusOr<kube::Json> made =
      client_.Create(CnsVolumeInfos(), ns_, NewCnsVolumeInfo(ns_, cns_id, vcenter));
  if (made.ok() || kube::IsAlreadyExistsError(made.status())) return absl::OkStatus();
  return absl::Status(made.status().code(),
                      absl::StrCat("record volume ", cns_id, " of vCenter ", vcenter,
                                   " in a CnsVolumeInfo: ", made.status().message()));
}

absl::Status KubeVolumeInfos::Forget(const std::string& cns_id) {
  absl::Status s = client_.Delete(CnsVolumeInfos(), ns_, CnsVolumeInfoName(cns_id));
  if (s.ok() || kube::IsNotFoundError(s)) return absl::OkStatus();
  return absl::Status(s.code(), absl::StrCat("delete CnsVolumeInfo ", ns_, "/",
                                             CnsVolumeInfoName(cns_id), ": ", s.message()));
}

}  // namespace ccm::csi
