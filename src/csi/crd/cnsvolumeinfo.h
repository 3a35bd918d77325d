#pragma once
// The CnsVolumeInfo custom resource (cnsvolumeinfoes.cns.vmware.com/v1alpha1, kind
// CNSVolumeInfo, namespaced: the driver's namespace), with the reference's names: with several
// vCenters the controller keeps one per volume, named after the volume ID ("file:" becomes
// "file-"), spec {volumeID, vCenterServer}, so the volume ID stays the bare CNS ID.

#include <string>

#include "kube/client.h"
#include "kube/resource.h"

namespace ccm::csi {

const kube::Resource& CnsVolumeInfos();
inline constexpr char kCnsVolumeInfoCrd[] = "cnsvolumeinfoes.cns.vmware.com";

// The object's name for a volume ID, as the reference names it.
std::string CnsVolumeInfoName(const std::string& volume_id);

kube::Json NewCnsVolumeInfo(const std::string& ns, const std::string& volume_id,
                            const std::string& vcenter_server);

struct CnsVolumeInfo {
  std::string volume_id;       // spec.volumeID
  std::string vcenter_server;  // spec.vCenterServer
};
// Tolerant: a member of the wrong type reads as empty.
CnsVolumeInfo ParseCnsVolumeInfo(const kube::Json& obj);

}  // namespace ccm::csi
