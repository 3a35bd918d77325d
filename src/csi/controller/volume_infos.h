#pragma once
// VolumeInfos (controller_cloud.h) on the reference's CnsVolumeInfo objects in the driver's
// namespace (csi/crd/cnsvolumeinfo.h): an informer keeps volume ID -> vCenter in memory; records
// are created after a create and deleted after a delete. Needs on cnsvolumeinfoes: create, get,
// list, watch, delete (the reference's controller rules). Thread-safe.

#include <memory>
#include <string>

#include "csi/controller/controller_cloud.h"
#include "kube/client.h"
#include "kube/informer.h"

namespace ccm::csi {

class KubeVolumeInfos final : public VolumeInfos {
 public:
  // `client` must outlive this object.
  KubeVolumeInfos(kube::Client& client, std::string ns);
  void Start();
  void Stop();

  absl::StatusOr<std::string> VCenterOf(const std::string& cns_id) const override;
  absl::Status Record(const std::string& cns_id, const std::string& vcenter) override;
  absl::Status Forget(const std::string& cns_id) override;

 private:
  kube::Client& client_;
  std::string ns_;
  std::unique_ptr<kube::Informer> informer_;
};

}  // namespace ccm::csi
