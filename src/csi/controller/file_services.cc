#include "csi/controller/file_services.h"

#include "absl/time/clock.h"
#include "common/logging.h"
#include "common/status_macros.h"
#include "vsphere/cns/vsan_config.h"
#include "vsphere/property_collector.h"
#include "vsphere/soap.h"

namespace ccm::csi {

absl::StatusOr<std::vector<FileServiceCluster>> VsanFileServices::Clusters() {
  absl::MutexLock l(&mu_);
  if (cached_ && absl::Now() - read_at_ < ttl_) return *cached_;
  CCM_ASSIGN_OR_RETURN(std::vector<FileServiceCluster> fresh, Read());
  cached_ = fresh;
  read_at_ = absl::Now();
  return fresh;
}

absl::StatusOr<std::vector<FileServiceCluster>> VsanFileServices::Read() {
  CCM_ASSIGN_OR_RETURN(
      std::vector<vsphere::ObjectContent> objects,
      vsphere::RetrieveAllOfType(client_, "ClusterComputeResource", {"name", "datastore"}));
  std::vector<FileServiceCluster> out;
  for (const vsphere::ObjectContent& oc : objects) {
    FileServiceCluster c;
    c.moid = oc.obj.value;
    c.name = oc.GetText("name");
    for (const pugi::xml_node& m :
         vsphere::Children(oc.Get("datastore"), "ManagedObjectReference")) {
      c.datastores.push_back(vsphere::ParseMoref(m).value);
    }
    absl::StatusOr<vsphere::cns::VsanClusterConfig> vsan =
        vsphere::cns::GetVsanClusterConfig(client_, oc.obj);
    if (absl::IsNotFound(vsan.status())) continue;  // removed since the listing
    if (!vsan.ok()) return vsan.status();
    c.vsan = vsan->vsan_enabled;
    c.file_service = vsan->vsan_enabled && vsan->file_service_enabled;
    VLOG(1, "cluster {} ({}): vSAN {}, file service {}", c.name, c.moid, c.vsan, c.file_service);
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace ccm::csi
