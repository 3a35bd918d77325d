#include "vsphere/vm_facts.h"

#include "gtest/gtest.h"
#include "vsphere/soap.h"

namespace ccm::vsphere {
namespace {

// A RetrievePropertiesEx answer for one VM with two NICs (IPv4 + IPv6) and a guest-internal NIC.
constexpr char kVmXml[] = R"(<?xml version="1.0"?>
<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/"
 xmlns:xsd="http://www.w3.org/2001/XMLSchema" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
<soapenv:Body><RetrievePropertiesExResponse xmlns="urn:vim25"><returnval>
<objects><obj type="VirtualMachine">vm-42</obj>
<propSet><name>name</name><val xsi:type="xsd:string">node-1</val></propSet>
<propSet><name>config.uuid</name><val xsi:type="xsd:string">422e4956-ad22-1139-6d72-59cc8f26bc90</val></propSet>
<propSet><name>config.instanceUuid</name><val xsi:type="xsd:string">502e0000-0000-0000-0000-000000000001</val></propSet>
<propSet><name>config.guestId</name><val xsi:type="xsd:string">ubuntu64Guest</val></propSet>
<propSet><name>config.hardware.numCPU</name><val xsi:type="xsd:int">4</val></propSet>
<propSet><name>config.hardware.memoryMB</name><val xsi:type="xsd:int">8192</val></propSet>
<propSet><name>config.extraConfig</name><val xsi:type="ArrayOfOptionValue">
  <OptionValue xsi:type="OptionValue"><key>svga.present</key><value xsi:type="xsd:string">TRUE</value></OptionValue>
  <OptionValue xsi:type="OptionValue"><key>guestinfo.metadata</key><value xsi:type="xsd:string">aW5zdGFuY2UtaWQ6IHgK</value></OptionValue>
  <OptionValue xsi:type="OptionValue"><key>guestinfo.metadata.encoding</key><value xsi:type="xsd:string">base64</value></OptionValue>
</val></propSet>
<propSet><name>runtime.powerState</name><val xsi:type="VirtualMachinePowerState">poweredOn</val></propSet>
<propSet><name>runtime.host</name><val type="HostSystem" xsi:type="ManagedObjectReference">host-21</val></propSet>
<propSet><name>guest.hostName</name><val xsi:type="xsd:string">node-1.example.com</val></propSet>
<propSet><name>guest.guestId</name><val xsi:type="xsd:string">ubuntu64Guest</val></propSet>
<propSet><name>guest.net</name><val xsi:type="ArrayOfGuestNicInfo">
  <GuestNicInfo xsi:type="GuestNicInfo"><network>VM Network</network><ipAddress>10.0.0.11</ipAddress><ipAddress>fd00::11</ipAddress><ipAddress>fe80::1</ipAddress><macAddress>00:50:56:aa:bb:01</macAddress><connected>true</connected><deviceConfigId>4000</deviceConfigId></GuestNicInfo>
  <GuestNicInfo xsi:type="GuestNicInfo"><network>storage</network><macAddress>00:50:56:aa:bb:02</macAddress><connected>true</connected><deviceConfigId>4001</deviceConfigId>
    <ipConfig><ipAddress><ipAddress>192.168.5.3</ipAddress><prefixLength>24</prefixLength></ipAddress></ipConfig></GuestNicInfo>
  <GuestNicInfo xsi:type="GuestNicInfo"><ipAddress>172.17.0.1</ipAddress><connected>true</connected><deviceConfigId>-1</deviceConfigId></GuestNicInfo>
</val></propSet>
<propSet><name>resourcePool</name><val type="ResourcePool" xsi:type="ManagedObjectReference">resgroup-9</val></propSet>
<propSet><name>parent</name><val type="Folder" xsi:type="ManagedObjectReference">group-v3</val></propSet>
</objects></returnval></RetrievePropertiesExResponse></soapenv:Body></soapenv:Envelope>)";

TEST(VmFactsTest, ParsesEveryField) {
  auto r = ParseSoapResponse(kVmXml);
  ASSERT_TRUE(r.ok()) << r.status();
  RetrievePage page = ParseRetrieveResult(r->doc, r->returnval());
  ASSERT_EQ(page.objects.size(), 1u);
  auto f = ParseVmFacts(page.objects[0]);
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->moref, (Moref{"VirtualMachine", "vm-42"}));
  EXPECT_EQ(f->name, "node-1");
  EXPECT_EQ(f->bios_uuid, "422e4956-ad22-1139-6d72-59cc8f26bc90");
  EXPECT_EQ(f->instance_uuid, "502e0000-0000-0000-0000-000000000001");
  EXPECT_EQ(f->config_guest_id, "ubuntu64Guest");
  EXPECT_EQ(f->guest_guest_id, "ubuntu64Guest");
  EXPECT_EQ(f->num_cpu, 4);
  EXPECT_EQ(f->memory_mb, 8192);
  EXPECT_EQ(f->metadata, "aW5zdGFuY2UtaWQ6IHgK");
  EXPECT_EQ(f->metadata_encoding, "base64");
  EXPECT_TRUE(f->powered_on());
  EXPECT_EQ(f->host, (Moref{"HostSystem", "host-21"}));
  EXPECT_EQ(f->guest_hostname, "node-1.example.com");
  EXPECT_EQ(f->resource_pool, (Moref{"ResourcePool", "resgroup-9"}));
  EXPECT_EQ(f->parent_folder, (Moref{"Folder", "group-v3"}));
  ASSERT_EQ(f->nics.size(), 3u);
  EXPECT_EQ(f->nics[0].network, "VM Network");
  EXPECT_EQ(f->nics[0].device_config_id, 4000);
  EXPECT_EQ(f->nics[0].ip_addresses,
            (std::vector<std::string>{"10.0.0.11", "fd00::11", "fe80::1"}));
  EXPECT_EQ(f->nics[0].mac_address, "00:50:56:aa:bb:01");
  EXPECT_TRUE(f->nics[0].connected);
  EXPECT_EQ(f->nics[1].ip_addresses, (std::vector<std::string>{"192.168.5.3"}));  // ipConfig
  EXPECT_EQ(f->nics[2].device_config_id, -1);
  EXPECT_EQ(f->nics[2].network, "");
}

pugi::xml_node Load(pugi::xml_document& d, const char* xml) {
  EXPECT_TRUE(d.load_string(xml));
  return d.document_element();
}

TEST(ApplyVmPropertyTest, UnsetResetsAndErrorsNamePath) {
  VmFacts vm;
  pugi::xml_document d;
  ASSERT_TRUE(ApplyVmProperty(vm, "guest.hostName", Load(d, "<val>h1</val>")).ok());
  EXPECT_EQ(vm.guest_hostname, "h1");
  ASSERT_TRUE(ApplyVmProperty(vm, "guest.hostName", pugi::xml_node()).ok());
  EXPECT_EQ(vm.guest_hostname, "");
  absl::Status s = ApplyVmProperty(vm, "config.hardware.numCPU", Load(d, "<val>four</val>"));
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("config.hardware.numCPU"), absl::string_view::npos);
  EXPECT_TRUE(ApplyVmProperty(vm, "some.unknown.path", Load(d, "<val>x</val>")).ok());
}

TEST(ApplyVmPropertyTest, WholeObjectsAndAliases) {
  struct Case {
    const char* path;
    const char* xml;
    std::function<void(const VmFacts&)> check;
  };
  std::vector<Case> cases = {
      {"summary.config.uuid", "<val>u-1</val>",
       [](const VmFacts& v) { EXPECT_EQ(v.bios_uuid, "u-1"); }},
      {"summary.config.numCpu", "<val>2</val>", [](const VmFacts& v) { EXPECT_EQ(v.num_cpu, 2); }},
      {"summary.config.memorySizeMB", "<val>2048</val>",
       [](const VmFacts& v) { EXPECT_EQ(v.memory_mb, 2048); }},
      {"summary.runtime.powerState", "<val>poweredOff</val>",
       [](const VmFacts& v) { EXPECT_FALSE(v.powered_on()); }},
      {"config",
       "<val><uuid>u-2</uuid><guestId>rhel9_64Guest</guestId><hardware><numCPU>8</numCPU>"
       "<memoryMB>4096</memoryMB></hardware><extraConfig><key>guestinfo.metadata</key>"
       "<value>m</value></extraConfig><extraConfig><key>guestinfo.metadata.encoding</key>"
       "<value>gzip+base64</value></extraConfig></val>",
       [](const VmFacts& v) {
         EXPECT_EQ(v.bios_uuid, "u-2");
         EXPECT_EQ(v.config_guest_id, "rhel9_64Guest");
         EXPECT_EQ(v.num_cpu, 8);
         EXPECT_EQ(v.memory_mb, 4096);
         EXPECT_EQ(v.metadata, "m");
         EXPECT_EQ(v.metadata_encoding, "gzip+base64");
       }},
      {"guest",
       "<val><hostName>g</hostName><net><network>n1</network><ipAddress>1.2.3.4</ipAddress>"
       "<deviceConfigId>4000</deviceConfigId></net><net><network>n2</network>"
       "<ipAddress>fd00::2</ipAddress><deviceConfigId>4001</deviceConfigId></net></val>",
       [](const VmFacts& v) {
         EXPECT_EQ(v.guest_hostname, "g");
         ASSERT_EQ(v.nics.size(), 2u);
         EXPECT_EQ(v.nics[1].network, "n2");
         EXPECT_EQ(v.nics[1].ip_addresses[0], "fd00::2");
       }},
      {"config.extraConfig[\"guestinfo.metadata\"]",
       "<val xsi:type=\"OptionValue\"><key>guestinfo.metadata</key><value>zz</value></val>",
       [](const VmFacts& v) { EXPECT_EQ(v.metadata, "zz"); }},
      {"guest.net", "<val/>", [](const VmFacts& v) { EXPECT_TRUE(v.nics.empty()); }},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.path);
    VmFacts vm;
    vm.nics.push_back({});
    if (std::string(c.path) == "guest") vm.nics.clear();
    pugi::xml_document d;
    ASSERT_TRUE(ApplyVmProperty(vm, c.path, Load(d, c.xml)).ok());
    c.check(vm);
  }
}

// config.hardware.device: only First Class Disks (a VirtualDisk with a vDiskId: a CNS volume)
// are kept, from the property's array or from a whole config; an unset value empties them.
TEST(ApplyVmPropertyTest, FirstClassDisksOfTheVirtualHardware) {
  constexpr char kDevices[] =
      "<val xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\" "
      "xsi:type=\"ArrayOfVirtualDevice\">"
      "<VirtualDevice xsi:type=\"ParaVirtualSCSIController\"><key>1000</key></VirtualDevice>"
      "<VirtualDevice xsi:type=\"VirtualDisk\"><key>2000</key><backing "
      "xsi:type=\"VirtualDiskFlatVer2BackingInfo\"><fileName>[ds1] vm/boot.vmdk</fileName>"
      "<uuid>6000C291-0000-0000-0000-000000000001</uuid></backing></VirtualDevice>"
      "<VirtualDevice xsi:type=\"VirtualDisk\"><key>2001</key><backing "
      "xsi:type=\"VirtualDiskFlatVer2BackingInfo\"><fileName>[ds1] fcd/a.vmdk</fileName>"
      "<uuid>6000C29a-aaaa-aaaa-aaaa-aaaaaaaaaaaa</uuid></backing>"
      "<vDiskId><id>5e0c3d7a-0000-4000-8000-000000000001</id></vDiskId></VirtualDevice>"
      "<VirtualDevice xsi:type=\"VirtualE1000\"><key>4000</key></VirtualDevice></val>";
  pugi::xml_document d;
  VmFacts vm;
  vm.disks.push_back({"stale", "x"});
  ASSERT_TRUE(ApplyVmProperty(vm, "config.hardware.device", Load(d, kDevices)).ok());
  EXPECT_EQ(vm.disks, (std::vector<VmDisk>{{"5e0c3d7a-0000-4000-8000-000000000001",
                                            "6000C29a-aaaa-aaaa-aaaa-aaaaaaaaaaaa"}}));
  ASSERT_TRUE(ApplyVmProperty(vm, "config.hardware.device", pugi::xml_node()).ok());
  EXPECT_TRUE(vm.disks.empty());
  // A whole config lists the devices as repeated elements.
  pugi::xml_document c;
  ASSERT_TRUE(
      ApplyVmProperty(vm, "config",
                      Load(c,
                           "<val xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\"><hardware>"
                           "<device xsi:type=\"VirtualDisk\"><backing><uuid>u-b</uuid></backing>"
                           "<vDiskId><id>vol-b</id></vDiskId></device></hardware></val>"))
          .ok());
  EXPECT_EQ(vm.disks, (std::vector<VmDisk>{{"vol-b", "u-b"}}));
}

TEST(VmFactsPropertyPathsTest, EveryPathIsUnderstood) {
  // Applying an unset value to each path must succeed (the cache relies on this for removals).
  for (const std::string& p : VmDiskPropertyPaths()) {
    VmFacts vm;
    EXPECT_TRUE(ApplyVmProperty(vm, p, pugi::xml_node()).ok()) << p;
  }
  for (const std::string& p : VmFactsPropertyPaths()) {
    VmFacts vm;
    EXPECT_TRUE(ApplyVmProperty(vm, p, pugi::xml_node()).ok()) << p;
  }
}

}  // namespace
}  // namespace ccm::vsphere
