#pragma once
// Which VM holds which CNS volume's disk, from the VMs' virtual hardware (a VirtualDisk whose
// vDiskId is the volume ID), as the reference's ListVolumes finds published nodes: CNS itself does
// not report attachments. One paged RetrievePropertiesEx over every VM (plus a container view),
// so it serves a whole ListVolumes page, never a call per volume.

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "vsphere/client.h"
#include "vsphere/moref.h"
#include "vsphere/property_collector.h"

namespace ccm::csi {

struct AttachedVm {
  vsphere::Moref vm;
  std::string bios_uuid;  // config.uuid, lower case: the node ID NodeGetInfo reports
};

// volume ID -> the VMs holding its disk.
using AttachmentMap = std::map<std::string, std::vector<AttachedVm>>;

absl::StatusOr<AttachmentMap> ListAttachments(vsphere::Client& client);

// Pure: the map from VirtualMachine objects with config.uuid and config.hardware.device.
AttachmentMap AttachmentsOf(const std::vector<vsphere::ObjectContent>& vms);

}  // namespace ccm::csi
