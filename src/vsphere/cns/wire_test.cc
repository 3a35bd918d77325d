#include "vsphere/cns/wire.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "vsphere/cns/volume_manager.h"
#include "vsphere/soap.h"

namespace ccm::vsphere::cns {
namespace {

using ::testing::HasSubstr;

// Every token appears, in this order.
void ExpectInOrder(const std::string& xml, const std::vector<std::string>& tokens) {
  size_t pos = 0;
  for (const std::string& t : tokens) {
    size_t at = xml.find(t, pos);
    ASSERT_NE(at, std::string::npos) << "missing or out of order: " << t << "\nin: " << xml;
    pos = at + t.size();
  }
}

// The args parse as XML (inside an element that declares xsi, as the envelope does).
void ExpectWellFormed(const std::string& args) {
  pugi::xml_document doc;
  std::string wrapped =
      absl::StrCat(R"(<m xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">)", args, "</m>");
  EXPECT_TRUE(doc.load_string(wrapped.c_str())) << args;
}

CreateSpec Spec() {
  CreateSpec s;
  s.name = "pvc-1";
  s.capacity_mb = 1024;
  s.datastores = {{"Datastore", "datastore-1"}, {"Datastore", "datastore-2"}};
  s.metadata.container_cluster.cluster_id = "cluster-a";
  s.metadata.container_cluster.vsphere_user = "k8s@vsphere.local";
  return s;
}

struct BuildCase {
  std::string name;
  std::string xml;
  std::vector<std::string> tokens;
};

TEST(CnsWireTest, BuildsArgumentsInSchemaOrder) {
  CreateSpec with_policy = Spec();
  with_policy.storage_policy_id = "policy-1";
  VolumeMetadata meta;
  meta.container_cluster.cluster_id = "cluster-a";
  EntityMetadata pv;
  pv.entity_type = "PERSISTENT_VOLUME";
  pv.entity_name = "pv-1";
  pv.labels = {{"app", "db"}};
  pv.cluster_id = "cluster-a";
  EntityMetadata pvc;
  pvc.entity_type = "PERSISTENT_VOLUME_CLAIM";
  pvc.entity_name = "data";
  pvc.namespace_name = "ns1";
  pvc.remove = true;
  pvc.referred_entity = {{"PERSISTENT_VOLUME", "pv-1", "", "cluster-a"}};
  meta.entity_metadata = {pv, pvc};
  QueryFilter filter;
  filter.volume_ids = {"v1"};
  filter.names = {"pvc-1", "pvc-2"};
  filter.container_cluster_ids = {"cluster-a"};
  filter.datastores = {{"Datastore", "datastore-1"}};
  filter.labels = {{"k", "v"}};
  filter.cursor = Cursor{10, 5, 0};

  CreateSpec registration = Spec();
  registration.capacity_mb = 0;
  registration.backing_disk_id = "fcd-1";
  CreateSpec from_snapshot = with_policy;
  from_snapshot.source_volume_id = "v1";
  from_snapshot.source_snapshot_id = "s1";
  CreateSpec with_id = from_snapshot;
  with_id.volume_id = "5e0c3d7a-0000-4000-8000-000000000001";
  CreateSpec by_path = registration;
  by_path.backing_disk_id.clear();
  by_path.backing_disk_url_path = "https://vc/folder/kubevols/a.vmdk?dcPath=dc1&dsName=ds1";
  CreateSpec file = Spec();
  file.volume_type = kVolumeTypeFile;
  file.permissions = {{"*", "READ_WRITE", true}, {"10.0.0.0/8", "READ_ONLY", false}};
  const std::vector<BuildCase> cases = {
      {"create a file volume (vSAN file share) with its access rules",
       CreateVolumeArgs({file}),
       {"<volumeType>FILE</volumeType>",
        R"(<backingObjectDetails xsi:type="CnsVsanFileShareBackingDetails"><capacityInMb>1024)"
        "</capacityInMb></backingObjectDetails>",
        R"(<createSpec xsi:type="CnsVSANFileCreateSpec"><softQuotaInMb>1024</softQuotaInMb>)"
        R"(<permission xsi:type="VsanFileShareNetPermission"><ips>*</ips>)"
        "<permissions>READ_WRITE</permissions><allowRoot>true</allowRoot></permission>"
        R"(<permission xsi:type="VsanFileShareNetPermission"><ips>10.0.0.0/8</ips>)"
        "<permissions>READ_ONLY</permissions><allowRoot>false</allowRoot></permission>"
        "</createSpec></createSpecs>"}},
      {"create",
       CreateVolumeArgs({Spec()}),
       {R"(<_this type="CnsVolumeManager">cns-volume-manager</_this>)", "<createSpecs>",
        "<name>pvc-1</name>", "<volumeType>BLOCK</volumeType>",
        R"(<datastores type="Datastore">datastore-1</datastores>)",
        R"(<datastores type="Datastore">datastore-2</datastores>)", "<metadata>",
        "<containerCluster><clusterType>KUBERNETES</clusterType><clusterId>cluster-a</clusterId>"
        "<vSphereUser>k8s@vsphere.local</vSphereUser><clusterFlavor>VANILLA</clusterFlavor>",
        R"(<backingObjectDetails xsi:type="CnsBlockBackingDetails"><capacityInMb>1024)",
        "</createSpecs>"}},
      {"register a First Class Disk (no capacity: the disk's)",
       CreateVolumeArgs({registration}),
       {R"(<backingObjectDetails xsi:type="CnsBlockBackingDetails"><backingDiskId>fcd-1)",
        "</backingDiskId></backingObjectDetails>"}},
      {"register an in-tree VMDK by its URL path",
       CreateVolumeArgs({by_path}),
       {"<backingDiskUrlPath>https://vc/folder/kubevols/a.vmdk?dcPath=dc1&amp;dsName=ds1"
        "</backingDiskUrlPath>"}},
      {"create with policy",
       CreateVolumeArgs({with_policy}),
       {"</backingObjectDetails>", R"(<profile xsi:type="VirtualMachineDefinedProfileSpec">)",
        "<profileId>policy-1</profileId>", "</profile></createSpecs>"}},
      {"delete",
       DeleteVolumeArgs({"v1", "v2"}, true),
       {"<volumeIds><id>v1</id></volumeIds>", "<volumeIds><id>v2</id></volumeIds>",
        "<deleteDisk>true</deleteDisk>"}},
      {"query volume info",
       QueryVolumeInfoArgs({"v1"}),
       {R"(<_this type="CnsVolumeManager">cns-volume-manager</_this>)",
        "<volumes><id>v1</id></volumes>"}},
      {"keepAfterDeleteVm (vim25)",
       SetControlFlagsArgs({"VcenterVStorageObjectManager", "VStorageObjectManager"}, "v1",
                           {"Datastore", "datastore-1"}, {"keepAfterDeleteVm"}),
       {R"(<_this type="VcenterVStorageObjectManager">VStorageObjectManager</_this>)"
        R"(<id><id>v1</id></id><datastore type="Datastore">datastore-1</datastore>)"
        "<controlFlags>keepAfterDeleteVm</controlFlags>"}},
      {"delete keeping the disk",
       DeleteVolumeArgs({"v1"}, false),
       {"<deleteDisk>false</deleteDisk>"}},
      {"attach",
       AttachVolumeArgs({{"v1", {"VirtualMachine", "vm-7"}}}),
       {"<attachSpecs><volumeId><id>v1</id></volumeId>",
        R"(<vm type="VirtualMachine">vm-7</vm></attachSpecs>)"}},
      {"detach",
       DetachVolumeArgs({{"v1", {"VirtualMachine", "vm-7"}}}),
       {"<detachSpecs><volumeId><id>v1</id></volumeId>", "</detachSpecs>"}},
      {"extend",
       ExtendVolumeArgs({{"v1", 4096}}),
       {"<extendSpecs><volumeId><id>v1</id></volumeId><capacityInMb>4096</capacityInMb>"}},
      {"update metadata",
       UpdateVolumeMetadataArgs({{"v1", meta}}),
       {"<updateSpecs><volumeId><id>v1</id></volumeId><metadata>",
        R"(<entityMetadata xsi:type="CnsKubernetesEntityMetadata"><entityName>pv-1</entityName>)",
        "<labels><key>app</key><value>db</value></labels>", "<clusterId>cluster-a</clusterId>",
        "<entityType>PERSISTENT_VOLUME</entityType></entityMetadata>",
        "<entityName>data</entityName>", "<delete>true</delete>",
        "<entityType>PERSISTENT_VOLUME_CLAIM</entityType><namespace>ns1</namespace>",
        "<referredEntity><entityType>PERSISTENT_VOLUME</entityType><entityName>pv-1</entityName>",
        "</metadata></updateSpecs>"}},
      {"query",
       QueryVolumeArgs(filter),
       {"<filter>", "<volumeIds><id>v1</id></volumeIds>", "<names>pvc-1</names>",
        "<names>pvc-2</names>", "<containerClusterIds>cluster-a</containerClusterIds>",
        R"(<datastores type="Datastore">datastore-1</datastores>)",
        "<labels><key>k</key><value>v</value></labels>",
        "<cursor><offset>10</offset><limit>5</limit></cursor>", "</filter>"}},
      {"empty query", QueryVolumeArgs({}), {"</_this><filter></filter>"}},
      {"create from a snapshot (volumeSource last)",
       CreateVolumeArgs({from_snapshot}),
       {"</profile>", R"(<volumeSource xsi:type="CnsSnapshotVolumeSource">)",
        "<volumeId><id>v1</id></volumeId><snapshotId><id>s1</id></snapshotId>",
        "</volumeSource></createSpecs>"}},
      {"create with a transaction's volume ID (9.1: after volumeSource)",
       CreateVolumeArgs({with_id}),
       {"</volumeSource><volumeId><id>5e0c3d7a-0000-4000-8000-000000000001</id></volumeId>"
        "</createSpecs>"}},
      {"create snapshots",
       CreateSnapshotsArgs({{"v1", "", "snap-a-v1"}, {"v2", "", "snap-b-v2"}}),
       {"</_this><snapshotSpecs><volumeId><id>v1</id></volumeId>",
        "<description>snap-a-v1</description></snapshotSpecs>",
        "<snapshotSpecs><volumeId><id>v2</id></volumeId>"}},
      {"delete snapshots",
       DeleteSnapshotsArgs({{"v1", "s1", ""}}),
       {"<snapshotDeleteSpecs><volumeId><id>v1</id></volumeId>",
        "<snapshotId><id>s1</id></snapshotId></snapshotDeleteSpecs>"}},
      {"query snapshots",
       QuerySnapshotsArgs({{{"v1", ""}, {"v2", "s2"}}, Cursor{128, 64, 0}}),
       {"<snapshotQueryFilter><snapshotQuerySpecs><volumeId><id>v1</id></volumeId>"
        "</snapshotQuerySpecs>",
        "<snapshotQuerySpecs><volumeId><id>v2</id></volumeId><snapshotId><id>s2</id>",
        "<cursor><offset>128</offset><limit>64</limit></cursor></snapshotQueryFilter>"}},
      {"query every snapshot",
       QuerySnapshotsArgs({}),
       {"</_this><snapshotQueryFilter></snapshotQueryFilter>"}},
  };
  for (const BuildCase& c : cases) {
    SCOPED_TRACE(c.name);
    ExpectInOrder(c.xml, c.tokens);
    ExpectWellFormed(c.xml);
  }
}

TEST(CnsWireTest, EscapesText) {
  CreateSpec s = Spec();
  s.name = R"(a<b>&"c")";
  std::string xml = CreateVolumeArgs({s});
  EXPECT_THAT(xml, HasSubstr("<name>a&lt;b&gt;&amp;&quot;c&quot;</name>"));
  ExpectWellFormed(xml);
}

// Parses a whole SOAP answer the way the client does.
absl::StatusOr<SoapResponse> Answer(const std::string& body) {
  return ParseSoapResponse(absl::StrCat(
      R"(<?xml version="1.0" encoding="UTF-8"?><soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"><soapenv:Body>)",
      body, "</soapenv:Body></soapenv:Envelope>"));
}

struct QueryCase {
  std::string name;
  std::string returnval;  // inner XML of <returnval>
  std::string error;      // expected error substring, "" = ok
  size_t volumes = 0;
  Cursor cursor;
};

TEST(CnsWireTest, ParsesQueryResults) {
  const std::string vol =
      "<volumes><volumeId><id>v1</id></volumeId><datastoreUrl>ds:///vmfs/volumes/a/</datastoreUrl>"
      "<name>pvc-1</name><volumeType>BLOCK</volumeType><storagePolicyId>p1</storagePolicyId>"
      "<metadata><containerCluster><clusterType>KUBERNETES</clusterType><clusterId>c1</clusterId>"
      "<vSphereUser>u</vSphereUser><clusterFlavor>VANILLA</clusterFlavor></containerCluster>"
      "<entityMetadata xsi:type=\"CnsKubernetesEntityMetadata\"><entityName>pv-1</entityName>"
      "<labels><key>a</key><value>b</value></labels><entityType>PERSISTENT_VOLUME</entityType>"
      "</entityMetadata></metadata>"
      "<backingObjectDetails xsi:type=\"CnsBlockBackingDetails\"><capacityInMb>2048</capacityInMb>"
      "<backingDiskId>v1</backingDiskId><backingDiskObjectId>52f1</backingDiskObjectId>"
      "</backingObjectDetails>"
      "<complianceStatus>compliant</complianceStatus><healthStatus>green</healthStatus></volumes>";
  const std::vector<QueryCase> cases = {
      {"one volume",
       vol + "<cursor><offset>1</offset><limit>100</limit><totalRecords>3"
             "</totalRecords></cursor>",
       "",
       1,
       {1, 100, 3}},
      {"no volumes", "<cursor><offset>0</offset><limit>100</limit></cursor>", "", 0, {0, 100, 0}},
      {"bad number", "<cursor><offset>x</offset></cursor>", "cursor.offset is not a number", 0, {}},
      {"bad capacity",
       "<volumes><volumeId><id>v1</id></volumeId><backingObjectDetails><capacityInMb>12ab"
       "</capacityInMb></backingObjectDetails></volumes>",
       "capacityInMb is not a number",
       0,
       {}},
      {"volume without id", "<volumes><name>x</name></volumes>", "without volumeId", 0, {}},
  };
  for (const QueryCase& c : cases) {
    SCOPED_TRACE(c.name);
    auto r = Answer(absl::StrCat(R"(<CnsQueryVolumeResponse xmlns="urn:vsan"><returnval>)",
                                 c.returnval, "</returnval></CnsQueryVolumeResponse>"));
    ASSERT_TRUE(r.ok()) << r.status();
    auto q = ParseQueryResult(r->returnval());
    if (!c.error.empty()) {
      ASSERT_FALSE(q.ok());
      EXPECT_EQ(q.status().code(), absl::StatusCode::kInternal);
      EXPECT_THAT(q.status().message(), HasSubstr(c.error));
      continue;
    }
    ASSERT_TRUE(q.ok()) << q.status();
    EXPECT_EQ(q->volumes.size(), c.volumes);
    EXPECT_EQ(q->cursor, c.cursor);
  }
  auto r = Answer(absl::StrCat(R"(<CnsQueryVolumeResponse xmlns="urn:vsan"><returnval>)", vol,
                               "</returnval></CnsQueryVolumeResponse>"));
  ASSERT_TRUE(r.ok());
  auto q = ParseQueryResult(r->returnval());
  ASSERT_TRUE(q.ok()) << q.status();
  const Volume& v = q->volumes.at(0);
  EXPECT_EQ(v.volume_id, "v1");
  EXPECT_EQ(v.name, "pvc-1");
  EXPECT_EQ(v.capacity_mb, 2048);
  EXPECT_EQ(v.backing_disk_id, "v1");
  EXPECT_EQ(v.backing_disk_object_id, "52f1");
  EXPECT_EQ(v.storage_policy_id, "p1");
  EXPECT_EQ(v.datastore_url, "ds:///vmfs/volumes/a/");
  EXPECT_EQ(v.metadata.container_cluster.cluster_id, "c1");
  ASSERT_EQ(v.metadata.entity_metadata.size(), 1u);
  EXPECT_EQ(v.metadata.entity_metadata[0].entity_type, "PERSISTENT_VOLUME");
  EXPECT_EQ(v.metadata.entity_metadata[0].labels, (KeyValues{{"a", "b"}}));
}

// A file volume as vCenter answers it: CnsVsanFileShareBackingDetails with access points.
TEST(CnsWireTest, ParsesFileShareBacking) {
  auto r = Answer(
      R"(<CnsQueryVolumeResponse xmlns="urn:vsan" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">)"
      "<returnval><volumes><volumeId><id>file:5e1</id></volumeId><name>pvc-f</name>"
      "<volumeType>FILE</volumeType>"
      R"(<backingObjectDetails xsi:type="CnsVsanFileShareBackingDetails">)"
      "<capacityInMb>5120</capacityInMb><backingFileId>5e1</backingFileId><name>pvc-f</name>"
      "<accessPoints><key>NFSv3</key><value>10.0.0.9:/vsanfs/pvc-f</value></accessPoints>"
      "<accessPoints><key>NFSv4.1</key><value>10.0.0.9:/vsanfs/pvc-f</value></accessPoints>"
      "</backingObjectDetails></volumes></returnval></CnsQueryVolumeResponse>");
  ASSERT_TRUE(r.ok()) << r.status();
  auto q = ParseQueryResult(r->returnval());
  ASSERT_TRUE(q.ok()) << q.status();
  const Volume& v = q->volumes.at(0);
  EXPECT_EQ(v.volume_type, "FILE");
  EXPECT_EQ(v.capacity_mb, 5120);
  EXPECT_EQ(v.backing_file_id, "5e1");
  EXPECT_EQ(v.file_share_name, "pvc-f");
  EXPECT_EQ(v.backing_disk_id, "");
  EXPECT_EQ(v.access_points, (KeyValues{{"NFSv3", "10.0.0.9:/vsanfs/pvc-f"},
                                        {"NFSv4.1", "10.0.0.9:/vsanfs/pvc-f"}}));
}

TEST(CnsWireTest, ParsesTaskInfoAndVolumeResults) {
  struct Case {
    std::string name, info, state, fault, message, error;
  };
  const std::vector<Case> cases = {
      {"running", "<state>running</state>", "running", "", "", ""},
      {"success", "<state>success</state><result/>", "success", "", "", ""},
      {"error",
       "<state>error</state><error><fault xsi:type=\"InvalidArgument\"/>"
       "<localizedMessage>bad spec</localizedMessage></error>",
       "error", "InvalidArgument", "bad spec", ""},
      {"error without fault", "<state>error</state>", "error", "UnknownFault", "", ""},
      {"unknown state", "<state>paused</state>", "", "", "", "unknown state"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    auto doc = std::make_shared<pugi::xml_document>();
    std::string text = absl::StrCat(
        R"(<val xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">)", c.info, "</val>");
    ASSERT_TRUE(doc->load_string(text.c_str()));
    auto t = ParseTaskInfo(doc, doc->child("val"));
    if (!c.error.empty()) {
      ASSERT_FALSE(t.ok());
      EXPECT_THAT(t.status().message(), HasSubstr(c.error));
      continue;
    }
    ASSERT_TRUE(t.ok()) << t.status();
    EXPECT_EQ(t->state, c.state);
    EXPECT_EQ(t->error_fault, c.fault);
    EXPECT_EQ(t->error_message, c.message);
  }

  auto doc = std::make_shared<pugi::xml_document>();
  ASSERT_TRUE(doc->load_string(
      R"(<result xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:type="CnsVolumeOperationBatchResult">)"
      R"(<volumeResults xsi:type="CnsVolumeCreateResult"><volumeId><id>v1</id></volumeId>)"
      R"(<name>pvc-1</name><placementResults><datastore type="Datastore">ds-1</datastore>)"
      R"(</placementResults></volumeResults>)"
      R"(<volumeResults xsi:type="CnsVolumeAttachResult"><volumeId><id>v2</id></volumeId>)"
      R"(<diskUUID>6000C291-aaaa</diskUUID></volumeResults>)"
      R"(<volumeResults xsi:type="CnsVolumeOperationResult"><volumeId><id>v3</id></volumeId>)"
      R"(<fault><fault xsi:type="ResourceInUse"><type>volume</type></fault>)"
      R"(<localizedMessage>The resource 'volume' is in use.</localizedMessage></fault>)"
      R"(</volumeResults></result>)"));
  auto results = ParseBatchResult(doc->child("result"));
  ASSERT_TRUE(results.ok()) << results.status();
  ASSERT_EQ(results->size(), 3u);
  EXPECT_EQ((*results)[0].volume_id, "v1");
  EXPECT_EQ((*results)[0].placement, (std::vector<Moref>{{"Datastore", "ds-1"}}));
  EXPECT_EQ((*results)[1].disk_uuid, "6000C291-aaaa");
  EXPECT_EQ((*results)[2].fault_name, "ResourceInUse");
  EXPECT_EQ((*results)[2].fault_message, "The resource 'volume' is in use.");

  pugi::xml_document empty;
  ASSERT_TRUE(empty.load_string("<result/>"));
  // No volumeResults (another CNS implementation's answer for a volume it does not know): an
  // empty list, for the caller to decide from the volume (VolumeManager::Settle).
  auto none = ParseBatchResult(empty.child("result"));
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_TRUE(none->empty());
}

// CnsQueryVolumeInfo's results, and the volume ID of a CnsAlreadyRegisteredFault.
TEST(CnsWireTest, ParsesVolumeInfoAndAlreadyRegistered) {
  auto doc = std::make_shared<pugi::xml_document>();
  ASSERT_TRUE(doc->load_string(
      R"(<result xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">)"
      R"(<volumeResults xsi:type="CnsQueryVolumeInfoResult"><volumeId><id>v1</id></volumeId>)"
      R"(<volumeInfo xsi:type="CnsBlockVolumeInfo"><vStorageObject><config><id><id>v1</id></id>)"
      R"(<name>pv-1</name><keepAfterDeleteVm>true</keepAfterDeleteVm>)"
      R"(<backing xsi:type="BaseConfigInfoDiskFileBackingInfo">)"
      R"(<datastore type="Datastore">datastore-1</datastore>)"
      R"(<filePath>[ds1] kubevols/pv-1.vmdk</filePath><provisioningType>thin</provisioningType>)"
      R"(</backing><capacityInMB>1024</capacityInMB></config></vStorageObject></volumeInfo>)"
      R"(</volumeResults>)"
      R"(<volumeResults xsi:type="CnsVolumeCreateResult"><volumeId></volumeId>)"
      R"(<fault><fault xsi:type="CnsAlreadyRegisteredFault"><reason>already registered</reason>)"
      R"(<volumeId><id>v9</id></volumeId></fault>)"
      R"(<localizedMessage>The input volume is already registered.</localizedMessage></fault>)"
      R"(</volumeResults>)"
      R"(<volumeResults xsi:type="CnsVolumeCreateResult"><volumeId></volumeId>)"
      R"(<fault><fault xsi:type="CnsVolumeAlreadyExistsFault"><reason>volume exists</reason>)"
      R"(<volumeId><id>v7</id></volumeId><datastore type="Datastore">datastore-1</datastore>)"
      R"(</fault><localizedMessage>A volume with ID v7 already exists.</localizedMessage>)"
      R"(</fault></volumeResults></result>)"));
  auto results = ParseBatchResult(doc->child("result"));
  ASSERT_TRUE(results.ok()) << results.status();
  const DiskBacking& b = (*results)[0].backing;
  EXPECT_EQ(b.file_path, "[ds1] kubevols/pv-1.vmdk");
  EXPECT_EQ(b.datastore, (Moref{"Datastore", "datastore-1"}));
  EXPECT_TRUE(b.keep_after_delete_vm);
  const absl::Status already = ResultFaultStatus((*results)[1]);
  EXPECT_EQ(FaultName(already), "CnsAlreadyRegisteredFault");
  EXPECT_EQ(RegisteredVolumeId(Annotate(already, "context")), "v9");  // kept through Annotate
  EXPECT_EQ(RegisteredVolumeId(absl::UnknownError("x")), "");
  const absl::Status exists = ResultFaultStatus((*results)[2]);  // a transaction's ID (9.1)
  EXPECT_TRUE(absl::IsAlreadyExists(exists)) << exists;
  EXPECT_EQ(FaultName(exists), "CnsVolumeAlreadyExistsFault");
  EXPECT_EQ(RegisteredVolumeId(exists), "v7");
  EXPECT_TRUE(absl::IsNotFound(FaultStatus("FileNotFound", "File [ds1] x.vmdk was not found")));
  // A result without the disk's file (malformed): an error naming the call, not an empty path.
  absl::StatusOr<DiskBacking> none =
      DiskBackingOf(QueryVolumeInfoOp("v1"), VolumeOperationResult{});
  EXPECT_EQ(none.status().code(), absl::StatusCode::kInternal);
  EXPECT_THAT(none.status().message(), HasSubstr("CNS query volume info of v1"));
}

TEST(CnsWireTest, ParsesSnapshotResults) {
  auto doc = std::make_shared<pugi::xml_document>();
  ASSERT_TRUE(doc->load_string(
      R"(<result xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">)"
      R"(<volumeResults xsi:type="CnsSnapshotCreateResult"><volumeId><id>v1</id></volumeId>)"
      R"(<snapshot><snapshotId><id>s1</id></snapshotId><volumeId><id>v1</id></volumeId>)"
      R"(<description>snap-a-v1</description><createTime>2026-11-26T09:01:02.5Z</createTime>)"
      R"(</snapshot></volumeResults>)"
      R"(<volumeResults xsi:type="CnsSnapshotDeleteResult"><volumeId><id>v1</id></volumeId>)"
      R"(<snapshotId><id>s0</id></snapshotId></volumeResults></result>)"));
  auto results = ParseBatchResult(doc->child("result"));
  ASSERT_TRUE(results.ok()) << results.status();
  const Snapshot want{"s1", "v1", "snap-a-v1",
                      absl::FromUnixMillis(1795683662000 + 500)};  // 2026-11-26T09:01:02.5Z
  EXPECT_EQ((*results)[0].snapshot, want);
  EXPECT_EQ((*results)[1].snapshot_id, "s0");

  ASSERT_TRUE(doc->load_string(
      R"(<result xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">)"
      R"(<entries><snapshot><snapshotId><id>s1</id></snapshotId><volumeId><id>v1</id></volumeId>)"
      R"(<createTime>2026-11-26T10:01:02+01:00</createTime></snapshot></entries>)"
      R"(<entries><error><fault xsi:type="CnsSnapshotNotFoundFault"/>)"
      R"(<localizedMessage>no snapshot s9</localizedMessage></error></entries>)"
      R"(<cursor><offset>2</offset><limit>128</limit><totalRecords>2</totalRecords></cursor>)"
      R"(</result>)"));
  auto q = ParseSnapshotQueryResult(doc->child("result"));
  ASSERT_TRUE(q.ok()) << q.status();
  ASSERT_EQ(q->entries.size(), 2u);
  EXPECT_EQ(q->entries[0].snapshot.create_time, absl::FromUnixSeconds(1795683662));
  EXPECT_EQ(q->entries[1].fault_name, "CnsSnapshotNotFoundFault");
  EXPECT_EQ(q->entries[1].fault_message, "no snapshot s9");
  EXPECT_EQ(q->cursor, (Cursor{2, 128, 2}));

  // A snapshot without a readable time is malformed, named.
  ASSERT_TRUE(doc->load_string(
      R"(<result><entries><snapshot><snapshotId><id>s1</id></snapshotId><volumeId><id>v1</id>)"
      R"(</volumeId><createTime>yesterday</createTime></snapshot></entries></result>)"));
  auto bad = ParseSnapshotQueryResult(doc->child("result"));
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("snapshot s1 has createTime \"yesterday\""));
}

TEST(CnsWireTest, MapsFaults) {
  struct Case {
    std::string fault;
    absl::StatusCode code;
  };
  const std::vector<Case> cases = {
      {"NotFound", absl::StatusCode::kNotFound},
      {"ManagedObjectNotFound", absl::StatusCode::kNotFound},
      {"CnsVolumeNotFoundFault", absl::StatusCode::kNotFound},
      {"CnsSnapshotNotFoundFault", absl::StatusCode::kNotFound},
      {"ResourceInUse", absl::StatusCode::kFailedPrecondition},
      {"InvalidPowerState", absl::StatusCode::kFailedPrecondition},
      {"TooManyDevices", absl::StatusCode::kResourceExhausted},
      {"TooManyDisksOnLegacyHost", absl::StatusCode::kResourceExhausted},
      {"NoDiskSpace", absl::StatusCode::kResourceExhausted},
      {"InsufficientResourcesFault", absl::StatusCode::kResourceExhausted},
      {"TaskInProgress", absl::StatusCode::kAborted},
      {"ConcurrentAccess", absl::StatusCode::kAborted},
      {"InvalidState", absl::StatusCode::kUnavailable},
      {"InvalidArgument", absl::StatusCode::kInvalidArgument},
      {"NotSupported", absl::StatusCode::kUnimplemented},
      {"CnsFault", absl::StatusCode::kUnknown},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.fault);
    absl::Status s = FaultStatus(c.fault, "what vCenter said");
    EXPECT_EQ(s.code(), c.code);
    EXPECT_EQ(FaultName(s), c.fault);
    EXPECT_THAT(s.message(), HasSubstr("what vCenter said"));
    EXPECT_THAT(s.message(), HasSubstr(c.fault));
  }
}

TEST(CnsWireTest, MalformedAnswersAreClearErrors) {
  const std::vector<std::string> bodies = {
      "",
      "<soapenv:Envelope",
      R"(<?xml version="1.0"?><soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/"><soapenv:Body><CnsQueryVolumeResponse><returnval>)",
      "not xml at all",
  };
  for (const std::string& b : bodies) {
    SCOPED_TRACE(b);
    auto r = ParseSoapResponse(b, "https://vc/vsanHealth");
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInternal);
    EXPECT_THAT(r.status().message(), HasSubstr("malformed"));
  }
  // A well-formed answer without a result is an error too, not an empty success.
  auto r = Answer(R"(<CnsQueryVolumeResponse xmlns="urn:vsan"/>)");
  ASSERT_TRUE(r.ok()) << r.status();
  auto q = ParseQueryResult(r->returnval());
  ASSERT_FALSE(q.ok());
  EXPECT_THAT(q.status().message(), HasSubstr("no CnsQueryResult"));
}

}  // namespace
TEST(HasSnapshotApiTest, Table) {
  struct Case {
    const char* version;
    bool has;
  } cases[] = {{"7.0.3.0", true}, {"7.0.3", true},    {"8.0.0.1", true},
               {"7.0.4.0", true}, {"7.0.2.0", false}, {"7.0", false},
               {"6.7.3", false},  {"", false},        {"x.y", false}};
  for (const Case& c : cases) EXPECT_EQ(HasSnapshotApi(c.version), c.has) << c.version;
}

TEST(HasOnlineExtendTest, Table) {
  struct Case {
    const char* version;
    bool has;
  } cases[] = {{"7.0.2.0", true},  {"7.0.3.0", true}, {"8.0.1.0", true}, {"7.0.1.0", false},
               {"7.0.0.1", false}, {"6.7.3", false},  {"", false},       {"7.x", false}};
  for (const Case& c : cases) EXPECT_EQ(HasOnlineExtend(c.version), c.has) << c.version;
}

TEST(HasTransactionsTest, Table) {
  struct Case {
    const char* version;
    bool has;
  } cases[] = {{"9.1.0.0", true},  {"9.1.0", true},    {"9.2.0.0", true}, {"10.0.0.0", true},
               {"9.0.0.0", false}, {"8.0.3.0", false}, {"", false},       {"9.x", false}};
  for (const Case& c : cases) EXPECT_EQ(HasTransactions(c.version), c.has) << c.version;
}

}  // namespace ccm::vsphere::cns
