#include "csi/controller/attachments.h"

#include "absl/strings/ascii.h"
#include "common/status_macros.h"
#include "vsphere/soap.h"

namespace ccm::csi {

absl::StatusOr<AttachmentMap> ListAttachments(vsphere::Client& client) {
  CCM_ASSIGN_OR_RETURN(std::vector<vsphere::ObjectContent> vms,
                       vsphere::RetrieveAllOfType(client, "VirtualMachine",
                                                  {"config.uuid", "config.hardware.device"}));
  return AttachmentsOf(vms);
}

AttachmentMap AttachmentsOf(const std::vector<vsphere::ObjectContent>& vms) {
  AttachmentMap out;
  for (const vsphere::ObjectContent& vm : vms) {
    const std::string uuid = absl::AsciiStrToLower(vm.GetText("config.uuid"));
    for (const pugi::xml_node& d :
         vsphere::Children(vm.Get("config.hardware.device"), "VirtualDevice")) {
      if (vsphere::XsiType(d) != "VirtualDisk") continue;
      const std::string id = vsphere::ChildText(vsphere::Child(d, "vDiskId"), "id");
      if (!id.empty()) out[id].push_back({vm.obj, uuid});
    }
  }
  return out;
}

}  // namespace ccm::csi
