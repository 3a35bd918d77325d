#include "vsphere/vm_facts.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace ccm::vsphere {
namespace {

constexpr absl::string_view kMetadataKey = "guestinfo.metadata";
constexpr absl::string_view kEncodingKey = "guestinfo.metadata.encoding";

absl::Status ParseInt(absl::string_view path, const pugi::xml_node& v, int& out) {
  if (!v) {
    out = 0;
    return absl::OkStatus();
  }
  if (!absl::SimpleAtoi(v.child_value(), &out)) {
    out = 0;
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": '", v.child_value(), "' is not an integer"));
  }
  return absl::OkStatus();
}

absl::Status ParseNic(const pugi::xml_node& n, GuestNic& nic) {
  nic.network = ChildText(n, "network");
  nic.mac_address = ChildText(n, "macAddress");
  nic.connected = ChildText(n, "connected") == "true";
  std::string id = ChildText(n, "deviceConfigId");
  nic.device_config_id = -1;
  if (!id.empty() && !absl::SimpleAtoi(id, &nic.device_config_id)) {
    return absl::InvalidArgumentError(
        absl::StrCat("guest.net: deviceConfigId '", id, "' is not an integer"));
  }
  for (const pugi::xml_node& ip : Children(n, "ipAddress")) {
    nic.ip_addresses.push_back(ip.child_value());
  }
  if (nic.ip_addresses.empty()) {  // some Tools versions only fill ipConfig
    for (const pugi::xml_node& a : Children(Child(n, "ipConfig"), "ipAddress")) {
      nic.ip_addresses.push_back(ChildText(a, "ipAddress"));
    }
  }
  return absl::OkStatus();
}

void ApplyOption(VmFacts& vm, const pugi::xml_node& option) {
  std::string key = ChildText(option, "key");
  if (key == kMetadataKey) vm.metadata = ChildText(option, "value");
  if (key == kEncodingKey) vm.metadata_encoding = ChildText(option, "value");
}

// One VirtualDevice: kept when it is a First Class Disk (a VirtualDisk with a vDiskId).
void AddDisk(VmFacts& vm, const pugi::xml_node& d) {
  if (XsiType(d) != "VirtualDisk") return;
  std::string id = ChildText(Child(d, "vDiskId"), "id");
  if (!id.empty()) vm.disks.push_back({std::move(id), ChildText(Child(d, "backing"), "uuid")});
}

// Paths whose value is a data object holding other known paths.
bool IsContainerPath(absl::string_view p) {
  return p == "config" || p == "config.hardware" || p == "guest" || p == "runtime" ||
         p == "summary" || p == "summary.config" || p == "summary.runtime" || p == "summary.guest";
}

}  // namespace

std::vector<std::string> VmFactsPropertyPaths() {
  return {"name",
          "config.uuid",
          "config.instanceUuid",
          "config.guestId",
          "config.hardware.numCPU",
          "config.hardware.memoryMB",
          "config.extraConfig",
          "runtime.powerState",
          "runtime.host",
          "guest.hostName",
          "guest.guestId",
          "guest.net",
          "resourcePool",
          "parent"};
}

std::vector<std::string> VmDiskPropertyPaths() { return {"config.hardware.device"}; }

absl::Status ApplyVmProperty(VmFacts& vm, absl::string_view path, const pugi::xml_node& v) {
  std::string text = v ? v.child_value() : "";
  if (path == "name") {
    vm.name = text;
  } else if (path == "config.uuid" || path == "summary.config.uuid") {
    vm.bios_uuid = text;
  } else if (path == "config.instanceUuid" || path == "summary.config.instanceUuid") {
    vm.instance_uuid = text;
  } else if (path == "config.guestId" || path == "summary.config.guestId") {
    vm.config_guest_id = text;
  } else if (path == "config.hardware.numCPU") {
    return ParseInt(path, v, vm.num_cpu);
  } else if (path == "summary.config.numCpu") {
    return ParseInt(path, v, vm.num_cpu);
  } else if (path == "config.hardware.memoryMB" || path == "summary.config.memorySizeMB") {
    return ParseInt(path, v, vm.memory_mb);
  } else if (path == "config.extraConfig") {
    vm.metadata.clear();
    vm.metadata_encoding.clear();
    for (pugi::xml_node o = v.first_child(); o; o = o.next_sibling()) {
      if (o.type() == pugi::node_element) ApplyOption(vm, o);
    }
  } else if (path == absl::StrCat("config.extraConfig[\"", kMetadataKey, "\"]")) {
    vm.metadata = ChildText(v, "value");
  } else if (path == absl::StrCat("config.extraConfig[\"", kEncodingKey, "\"]")) {
    vm.metadata_encoding = ChildText(v, "value");
  } else if (path == "runtime.powerState" || path == "summary.runtime.powerState") {
    vm.power_state = text;
  } else if (path == "runtime.host" || path == "summary.runtime.host") {
    vm.host = ParseMoref(v);
  } else if (path == "guest.hostName" || path == "summary.guest.hostName") {
    vm.guest_hostname = text;
  } else if (path == "guest.guestId" || path == "summary.guest.guestId") {
    vm.guest_guest_id = text;
  } else if (path == "guest.net") {
    vm.nics.clear();
    for (pugi::xml_node n = v.first_child(); n; n = n.next_sibling()) {
      if (n.type() != pugi::node_element) continue;
      GuestNic nic;
      CCM_RETURN_IF_ERROR(ParseNic(n, nic));
      vm.nics.push_back(std::move(nic));
    }
  } else if (path == "config.hardware.device") {
    vm.disks.clear();  // ArrayOfVirtualDevice
    for (const pugi::xml_node& d : Children(v, "VirtualDevice")) AddDisk(vm, d);
  } else if (path == "resourcePool") {
    vm.resource_pool = ParseMoref(v);
  } else if (path == "parent") {
    vm.parent_folder = ParseMoref(v);
  } else if (IsContainerPath(path)) {
    if (path == "guest") vm.nics.clear();
    if (path == "config") vm.metadata.clear(), vm.metadata_encoding.clear();
    if (path == "config" || path == "config.hardware") vm.disks.clear();
    for (pugi::xml_node c = v.first_child(); c; c = c.next_sibling()) {
      if (c.type() != pugi::node_element) continue;
      std::string sub = absl::StrCat(path, ".", LocalName(c.name()));
      if (sub == "config.extraConfig") {
        ApplyOption(vm, c);  // a data object lists array items as repeated elements
        continue;
      }
      if (sub == "config.hardware.device") {
        AddDisk(vm, c);
        continue;
      }
      if (sub == "guest.net") {
        GuestNic nic;
        CCM_RETURN_IF_ERROR(ParseNic(c, nic));
        vm.nics.push_back(std::move(nic));
        continue;
      }
      CCM_RETURN_IF_ERROR(ApplyVmProperty(vm, sub, c));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<VmFacts> ParseVmFacts(const ObjectContent& object) {
  VmFacts vm;
  vm.moref = object.obj;
  for (const PropertyValue& p : object.props) {
    absl::Status s = ApplyVmProperty(vm, p.path, p.val);
    if (!s.ok()) return Annotate(s, absl::StrCat("VM ", object.obj.value));
  }
  return vm;
}

absl::StatusOr<VmFactsResult> FetchVmFacts(Client& client, const std::vector<Moref>& vms,
                                           RetrieveOptions options) {
  VmFactsResult out;
  if (vms.empty()) return out;
  CCM_ASSIGN_OR_RETURN(
      RetrieveObjectsResult r,
      RetrieveObjects(client, vms, {{"VirtualMachine", VmFactsPropertyPaths()}}, options));
  out.not_found = std::move(r.not_found);
  for (const ObjectContent& o : r.objects) {
    CCM_ASSIGN_OR_RETURN(VmFacts f, ParseVmFacts(o));
    out.vms.push_back(std::move(f));
  }
  return out;
}

absl::StatusOr<std::vector<VmFacts>> FetchAllVmFacts(Client& client, RetrieveOptions options,
                                                     Moref container) {
  CCM_ASSIGN_OR_RETURN(
      std::vector<ObjectContent> objs,
      RetrieveAllOfType(client, "VirtualMachine", VmFactsPropertyPaths(), options, container));
  std::vector<VmFacts> out;
  for (const ObjectContent& o : objs) {
    CCM_ASSIGN_OR_RETURN(VmFacts f, ParseVmFacts(o));
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace ccm::vsphere
