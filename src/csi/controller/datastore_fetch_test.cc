#include "csi/controller/datastore_fetch.h"

#include <memory>

#include "gtest/gtest.h"
#include "pugixml.hpp"

namespace ccm::csi {
namespace {

// A RetrievePropertiesEx answer in the shape vCenter sends for FetchDatastores' spec.
constexpr char kAnswer[] = R"(<returnval xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
  <objects><obj type="Datacenter">datacenter-2</obj>
    <propSet><name>datastore</name><val xsi:type="ArrayOfManagedObjectReference">
      <ManagedObjectReference type="Datastore">datastore-10</ManagedObjectReference>
      <ManagedObjectReference type="Datastore">datastore-11</ManagedObjectReference>
      <ManagedObjectReference type="Datastore">datastore-12</ManagedObjectReference>
    </val></propSet></objects>
  <objects><obj type="Datastore">datastore-10</obj>
    <propSet><name>name</name><val xsi:type="xsd:string">shared-a</val></propSet>
    <propSet><name>summary.url</name><val xsi:type="xsd:string">ds:///vmfs/volumes/a/</val></propSet>
    <propSet><name>summary.type</name><val xsi:type="xsd:string">vsan</val></propSet>
    <propSet><name>summary.freeSpace</name><val xsi:type="xsd:long">1073741824</val></propSet>
    <propSet><name>summary.accessible</name><val xsi:type="xsd:boolean">true</val></propSet>
    <propSet><name>summary.maintenanceMode</name><val xsi:type="xsd:string">normal</val></propSet>
    <propSet><name>parent</name><val type="StoragePod" xsi:type="ManagedObjectReference">group-p1</val></propSet>
    <propSet><name>host</name><val xsi:type="ArrayOfDatastoreHostMount">
      <DatastoreHostMount><key type="HostSystem">host-1</key>
        <mountInfo><accessMode>readWrite</accessMode><mounted>true</mounted><accessible>true</accessible></mountInfo></DatastoreHostMount>
      <DatastoreHostMount><key type="HostSystem">host-2</key>
        <mountInfo><accessMode>readWrite</accessMode><mounted>false</mounted></mountInfo></DatastoreHostMount>
      <DatastoreHostMount><key type="HostSystem">host-3</key>
        <mountInfo><accessMode>readWrite</accessMode></mountInfo></DatastoreHostMount>
    </val></propSet></objects>
  <objects><obj type="Datastore">datastore-11</obj>
    <propSet><name>name</name><val xsi:type="xsd:string">down</val></propSet>
    <propSet><name>summary.url</name><val xsi:type="xsd:string">ds:///vmfs/volumes/b/</val></propSet>
    <propSet><name>summary.accessible</name><val xsi:type="xsd:boolean">false</val></propSet>
    <propSet><name>customValue</name><val xsi:type="ArrayOfCustomFieldValue">
      <CustomFieldValue xsi:type="CustomFieldStringValue"><key>101</key><value>cns.vmware.com/datastoreSuspended</value></CustomFieldValue>
    </val></propSet></objects>
  <objects><obj type="Datastore">datastore-12</obj>
    <propSet><name>name</name><val xsi:type="xsd:string">maint</val></propSet>
    <propSet><name>customValue</name><val xsi:type="ArrayOfCustomFieldValue">
      <CustomFieldValue xsi:type="CustomFieldStringValue"><key>102</key><value>owner: storage team</value></CustomFieldValue>
    </val></propSet>
    <propSet><name>summary.maintenanceMode</name><val xsi:type="xsd:string">inMaintenance</val></propSet></objects>
  <objects><obj type="HostSystem">host-1</obj>
    <propSet><name>name</name><val xsi:type="xsd:string">esx-1</val></propSet></objects>
  <objects><obj type="HostSystem">host-9</obj>
    <propSet><name>name</name><val xsi:type="xsd:string">esx-9</val></propSet></objects>
</returnval>)";

TEST(ParseDatastoresTest, ReadsPlacementFactsAndMountedHosts) {
  auto doc = std::make_shared<pugi::xml_document>();
  ASSERT_TRUE(doc->load_string(kAnswer));
  vsphere::RetrievePage page = vsphere::ParseRetrieveResult(doc, doc->child("returnval"));
  vsphere::Datacenter dc;
  dc.moref = {"Datacenter", "datacenter-2"};
  dc.name = "dc1";
  DatastoreFetch fetched = ParseDatastores(page.objects, {dc});
  const std::vector<DatastoreRecord>& records = fetched.datastores;
  ASSERT_EQ(records.size(), 3u);

  const DatastoreRecord& a = records[0];
  EXPECT_EQ(a.moref, (vsphere::Moref{"Datastore", "datastore-10"}));
  EXPECT_EQ(a.datacenter, "dc1");
  EXPECT_EQ(a.name, "shared-a");
  EXPECT_EQ(a.url, "ds:///vmfs/volumes/a/");
  EXPECT_EQ(a.type, "vsan");
  EXPECT_EQ(a.free_bytes, 1073741824);
  EXPECT_TRUE(a.usable);
  EXPECT_EQ(a.parent, (vsphere::Moref{"StoragePod", "group-p1"}));
  // host-2 is not mounted; host-3 leaves the flags out (defaults: mounted, accessible).
  EXPECT_EQ(a.hosts,
            (std::vector<vsphere::Moref>{{"HostSystem", "host-1"}, {"HostSystem", "host-3"}}));
  EXPECT_FALSE(records[1].usable);  // not accessible
  EXPECT_FALSE(records[2].usable);  // in maintenance
  // CNS manager's suspension is a custom value; any other value is not one.
  EXPECT_FALSE(a.suspended);
  EXPECT_TRUE(records[1].suspended);
  EXPECT_FALSE(records[2].suspended);
  // Every host, a host that mounts nothing (host-9) included: a zone's hosts are all of them.
  ASSERT_EQ(fetched.hosts.size(), 2u);
  EXPECT_EQ(fetched.hosts[1].moref, (vsphere::Moref{"HostSystem", "host-9"}));
  EXPECT_EQ(fetched.hosts[1].name, "esx-9");
}

}  // namespace
}  // namespace ccm::csi
