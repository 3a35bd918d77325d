#include "csi/crd/cnsvolumeinfo.h"

#include "absl/strings/match.h"

namespace ccm::csi {

const kube::Resource& CnsVolumeInfos() {
  static const auto* r = new kube::Resource{"cns.vmware.com", "v1alpha1", "cnsvolumeinfoes",
                                            "CNSVolumeInfo", /*namespaced=*/true};
  return *r;
}

std::string CnsVolumeInfoName(const std::string& volume_id) {
  if (absl::StartsWith(volume_id, "file:")) return "file-" + volume_id.substr(5);
  return volume_id;
}

kube::Json NewCnsVolumeInfo(const std::string& ns, const std::string& volume_id,
                            const std::string& vcenter_server) {
  return {{"apiVersion", CnsVolumeInfos().api_version()},
          {"kind", CnsVolumeInfos().kind},
          {"metadata", {{"name", CnsVolumeInfoName(volume_id)}, {"namespace", ns}}},
          {"spec", {{"volumeID", volume_id}, {"vCenterServer", vcenter_server}}}};
}

CnsVolumeInfo ParseCnsVolumeInfo(const kube::Json& obj) {
  CnsVolumeInfo out;
  if (!obj.is_object()) return out;
  auto spec = obj.find("spec");
  if (spec == obj.end() || !spec->is_object()) return out;
  auto str = [&](const char* key) {
    auto it = spec->find(key);
    return it != spec->end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  out.volume_id = str("volumeID");
  out.vcenter_server = str("vCenterServer");
  return out;
}

}  // namespace ccm::csi
