#pragma once
// Everything the provider needs to know about one VM, fetched in one property retrieval for many
// VMs at once, and the parsing shared with the inventory cache (WaitForUpdatesEx delivers the same
// property paths and <val> elements).

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "pugixml.hpp"
#include "vsphere/client.h"
#include "vsphere/moref.h"
#include "vsphere/property_collector.h"

namespace ccm::vsphere {

struct GuestNic {
  int device_config_id = -1;  // -1: no real virtual device (e.g. a guest-internal interface)
  std::string network;        // port group name
  std::string mac_address;
  bool connected = false;
  std::vector<std::string> ip_addresses;  // as reported (IPv4 and IPv6, unfiltered)
};

// A disk of the VM's virtual hardware that is a First Class Disk (a CNS volume): a VirtualDisk
// whose vDiskId is the volume ID.
struct VmDisk {
  std::string volume_id;  // vDiskId.id
  std::string disk_uuid;  // backing.uuid, as vCenter writes it ("6000C29...")
  bool operator==(const VmDisk&) const = default;
};

struct VmFacts {
  Moref moref;  // {"VirtualMachine", "vm-42"}
  std::string name;
  std::string bios_uuid;          // config.uuid (the provider ID uuid)
  std::string instance_uuid;      // config.instanceUuid
  std::string power_state;        // runtime.powerState: poweredOn / poweredOff / suspended
  std::string guest_hostname;     // guest.hostName
  std::vector<GuestNic> nics;     // guest.net
  std::string config_guest_id;    // config.guestId (configured OS)
  std::string guest_guest_id;     // guest.guestId (reported by VMware Tools)
  int num_cpu = 0;                // config.hardware.numCPU
  int memory_mb = 0;              // config.hardware.memoryMB
  std::string metadata;           // extraConfig guestinfo.metadata
  std::string metadata_encoding;  // extraConfig guestinfo.metadata.encoding
  Moref host;                     // runtime.host
  Moref resource_pool;            // resourcePool
  Moref parent_folder;            // parent
  // config.hardware.device's First Class Disks; only where that path is asked for
  // (VmDiskPropertyPaths: the CSI controller's inventory), else always empty.
  std::vector<VmDisk> disks;
  // Not a VM property: filled by whoever knows it (search per datacenter, ancestry).
  Moref datacenter;
  std::string datacenter_name;

  bool powered_on() const { return power_state == "poweredOn"; }
};

// The property paths FetchVmFacts retrieves (use the same list for a PropertyFilter).
std::vector<std::string> VmFactsPropertyPaths();
// What VmFacts::disks needs on top: config.hardware.device (every device of the VM; the CSI
// controller's inventory asks for it, the cloud provider's does not).
std::vector<std::string> VmDiskPropertyPaths();

// Applies one property to `vm`. `value` is the <val> element (any name; children read by local
// name); an empty node means the property is unset/removed and resets the field. Whole-object
// paths ("config", "guest.net", "summary.config", ...) and the summary.* aliases are understood;
// unknown paths are ignored. Errors: InvalidArgument for a malformed value (e.g. a non-numeric
// numCPU), naming the path.
absl::Status ApplyVmProperty(VmFacts& vm, absl::string_view path, const pugi::xml_node& value);

// Builds VmFacts from one retrieved object (all its propSet entries).
absl::StatusOr<VmFacts> ParseVmFacts(const ObjectContent& object);

struct VmFactsResult {
  std::vector<VmFacts> vms;
  std::vector<Moref> not_found;  // VMs that no longer exist
};

// Facts for many VMs in one paged RetrievePropertiesEx.
absl::StatusOr<VmFactsResult> FetchVmFacts(Client& client, const std::vector<Moref>& vms,
                                           RetrieveOptions options = {});
// Facts for every VM below `container` (default: root folder), through a container view.
absl::StatusOr<std::vector<VmFacts>> FetchAllVmFacts(Client& client, RetrieveOptions options = {},
                                                     Moref container = {});

}  // namespace ccm::vsphere
