#include "vsphere/cns/wire.h"

#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "common/status_macros.h"
#include "vsphere/soap.h"

namespace ccm::vsphere::cns {
namespace {

std::string This() { return MorefXml("_this", VolumeManagerRef()); }

std::string VolumeIdXml(absl::string_view tag, absl::string_view id) {
  return absl::StrCat("<", tag, ">", TextXml("id", id), "</", tag, ">");
}

std::string KeyValueXml(absl::string_view tag, const KeyValues& kvs) {
  std::string out;
  for (const auto& [k, v] : kvs) {
    absl::StrAppend(&out, "<", tag, ">", TextXml("key", k), TextXml("value", v), "</", tag, ">");
  }
  return out;
}

// Optional text: vCenter rejects an empty element where a value is expected.
std::string OptText(absl::string_view tag, absl::string_view text) {
  return text.empty() ? "" : TextXml(tag, text);
}

std::string ContainerClusterXml(absl::string_view tag, const ContainerCluster& c) {
  return absl::StrCat("<", tag, ">", TextXml("clusterType", c.cluster_type),
                      TextXml("clusterId", c.cluster_id), TextXml("vSphereUser", c.vsphere_user),
                      OptText("clusterFlavor", c.cluster_flavor),
                      OptText("clusterDistribution", c.cluster_distribution), "</", tag, ">");
}

std::string EntityXml(const EntityMetadata& e) {
  // CnsEntityMetadata's fields come first, then CnsKubernetesEntityMetadata's.
  std::string out =
      absl::StrCat(R"(<entityMetadata xsi:type="CnsKubernetesEntityMetadata">)",
                   TextXml("entityName", e.entity_name), KeyValueXml("labels", e.labels));
  if (e.remove) absl::StrAppend(&out, TextXml("delete", "true"));
  absl::StrAppend(&out, OptText("clusterId", e.cluster_id), TextXml("entityType", e.entity_type),
                  OptText("namespace", e.namespace_name));
  for (const EntityReference& r : e.referred_entity) {
    absl::StrAppend(&out, "<referredEntity>", TextXml("entityType", r.entity_type),
                    TextXml("entityName", r.entity_name), OptText("namespace", r.namespace_name),
                    OptText("clusterId", r.cluster_id), "</referredEntity>");
  }
  return absl::StrCat(out, "</entityMetadata>");
}

absl::StatusOr<int64_t> Int(const pugi::xml_node& parent, absl::string_view child,
                            absl::string_view what) {
  pugi::xml_node n = Child(parent, child);
  if (!n) return 0;  // optional in the schema
  int64_t v = 0;
  if (!absl::SimpleAtoi(n.text().get(), &v)) {
    return absl::InternalError(absl::StrCat("malformed CNS answer: ", what, ".", child,
                                            " is not a number: \"", n.text().get(), "\""));
  }
  return v;
}

absl::Status ParseCursor(const pugi::xml_node& cursor, Cursor& out) {
  for (auto [field, dst] : {std::pair{"offset", &out.offset}, std::pair{"limit", &out.limit},
                            std::pair{"totalRecords", &out.total_records}}) {
    auto v = Int(cursor, field, "cursor");
    if (!v.ok()) return v.status();
    *dst = *v;
  }
  return absl::OkStatus();
}

KeyValues ParseKeyValues(const pugi::xml_node& n, absl::string_view tag) {
  KeyValues out;
  for (const pugi::xml_node& kv : Children(n, tag)) {
    out.emplace_back(ChildText(kv, "key"), ChildText(kv, "value"));
  }
  return out;
}

ContainerCluster ParseContainerCluster(const pugi::xml_node& n) {
  ContainerCluster c;
  c.cluster_type = ChildText(n, "clusterType");
  c.cluster_id = ChildText(n, "clusterId");
  c.vsphere_user = ChildText(n, "vSphereUser");
  c.cluster_flavor = ChildText(n, "clusterFlavor");
  c.cluster_distribution = ChildText(n, "clusterDistribution");
  return c;
}

}  // namespace

std::string VolumeMetadataXml(absl::string_view tag, const VolumeMetadata& m) {
  std::string out =
      absl::StrCat("<", tag, ">", ContainerClusterXml("containerCluster", m.container_cluster));
  for (const EntityMetadata& e : m.entity_metadata) absl::StrAppend(&out, EntityXml(e));
  for (const ContainerCluster& c : m.container_cluster_array) {
    absl::StrAppend(&out, ContainerClusterXml("containerClusterArray", c));
  }
  return absl::StrCat(out, "</", tag, ">");
}

namespace {
// A file volume's CnsVSANFileCreateSpec: the quota and the share's access rules.
std::string FileCreateSpecXml(const CreateSpec& s) {
  std::string out = absl::StrCat(R"(<createSpec xsi:type="CnsVSANFileCreateSpec">)",
                                 TextXml("softQuotaInMb", absl::StrCat(s.capacity_mb)));
  for (const NetPermission& p : s.permissions) {
    absl::StrAppend(&out, R"(<permission xsi:type="VsanFileShareNetPermission">)",
                    TextXml("ips", p.ips), OptText("permissions", p.permissions),
                    TextXml("allowRoot", p.allow_root ? "true" : "false"), "</permission>");
  }
  return absl::StrCat(out, "</createSpec>");
}
}  // namespace

std::string CreateVolumeArgs(const std::vector<CreateSpec>& specs) {
  std::string out = This();
  for (const CreateSpec& s : specs) {
    const bool file = s.volume_type == kVolumeTypeFile;
    absl::StrAppend(&out, "<createSpecs>", TextXml("name", s.name),
                    TextXml("volumeType", file ? kVolumeTypeFile : kVolumeTypeBlock));
    for (const Moref& ds : s.datastores) absl::StrAppend(&out, MorefXml("datastores", ds));
    absl::StrAppend(&out, VolumeMetadataXml("metadata", s.metadata),
                    file ? R"(<backingObjectDetails xsi:type="CnsVsanFileShareBackingDetails">)"
                         : R"(<backingObjectDetails xsi:type="CnsBlockBackingDetails">)");
    if (s.capacity_mb > 0)
      absl::StrAppend(&out, TextXml("capacityInMb", absl::StrCat(s.capacity_mb)));
    if (!s.backing_disk_id.empty())
      absl::StrAppend(&out, TextXml("backingDiskId", s.backing_disk_id));
    if (!s.backing_disk_url_path.empty()) {
      absl::StrAppend(&out, TextXml("backingDiskUrlPath", s.backing_disk_url_path));
    }
    absl::StrAppend(&out, "</backingObjectDetails>");
    if (!s.storage_policy_id.empty()) {
      absl::StrAppend(&out, R"(<profile xsi:type="VirtualMachineDefinedProfileSpec">)",
                      TextXml("profileId", s.storage_policy_id), "</profile>");
    }
    if (file) absl::StrAppend(&out, FileCreateSpecXml(s));
    if (!s.source_snapshot_id.empty()) {  // the last field of CnsVolumeCreateSpec
      absl::StrAppend(&out, R"(<volumeSource xsi:type="CnsSnapshotVolumeSource">)",
                      VolumeIdXml("volumeId", s.source_volume_id),
                      VolumeIdXml("snapshotId", s.source_snapshot_id), "</volumeSource>");
    }
    // Added in 9.1 after the others; never sent to an older vCenter (it refuses the element).
    if (!s.volume_id.empty()) absl::StrAppend(&out, VolumeIdXml("volumeId", s.volume_id));
    absl::StrAppend(&out, "</createSpecs>");
  }
  return out;
}

std::string DeleteVolumeArgs(const std::vector<std::string>& volume_ids, bool delete_disk) {
  std::string out = This();
  for (const std::string& id : volume_ids) absl::StrAppend(&out, VolumeIdXml("volumeIds", id));
  return absl::StrCat(out, TextXml("deleteDisk", delete_disk ? "true" : "false"));
}

namespace {
std::string AttachDetachArgs(absl::string_view tag, const std::vector<AttachDetach>& specs) {
  std::string out = This();
  for (const AttachDetach& s : specs) {
    absl::StrAppend(&out, "<", tag, ">", VolumeIdXml("volumeId", s.volume_id), MorefXml("vm", s.vm),
                    "</", tag, ">");
  }
  return out;
}
}  // namespace

std::string AttachVolumeArgs(const std::vector<AttachDetach>& specs) {
  return AttachDetachArgs("attachSpecs", specs);
}

std::string DetachVolumeArgs(const std::vector<AttachDetach>& specs) {
  return AttachDetachArgs("detachSpecs", specs);
}

std::string ExtendVolumeArgs(const std::vector<Extend>& specs) {
  std::string out = This();
  for (const Extend& s : specs) {
    absl::StrAppend(&out, "<extendSpecs>", VolumeIdXml("volumeId", s.volume_id),
                    TextXml("capacityInMb", absl::StrCat(s.capacity_mb)), "</extendSpecs>");
  }
  return out;
}

std::string UpdateVolumeMetadataArgs(const std::vector<MetadataUpdate>& specs) {
  std::string out = This();
  for (const MetadataUpdate& s : specs) {
    absl::StrAppend(&out, "<updateSpecs>", VolumeIdXml("volumeId", s.volume_id),
                    VolumeMetadataXml("metadata", s.metadata), "</updateSpecs>");
  }
  return out;
}

std::string QueryFilterXml(absl::string_view tag, const QueryFilter& f) {
  std::string out = absl::StrCat("<", tag, ">");
  for (const std::string& id : f.volume_ids) absl::StrAppend(&out, VolumeIdXml("volumeIds", id));
  for (const std::string& n : f.names) absl::StrAppend(&out, TextXml("names", n));
  for (const std::string& c : f.container_cluster_ids) {
    absl::StrAppend(&out, TextXml("containerClusterIds", c));
  }
  absl::StrAppend(&out, OptText("storagePolicyId", f.storage_policy_id));
  for (const Moref& ds : f.datastores) absl::StrAppend(&out, MorefXml("datastores", ds));
  absl::StrAppend(&out, KeyValueXml("labels", f.labels));
  if (f.cursor) {
    absl::StrAppend(&out, "<cursor>", TextXml("offset", absl::StrCat(f.cursor->offset)),
                    TextXml("limit", absl::StrCat(f.cursor->limit)), "</cursor>");
  }
  return absl::StrCat(out, "</", tag, ">");
}

std::string QueryVolumeArgs(const QueryFilter& filter) {
  return absl::StrCat(This(), QueryFilterXml("filter", filter));
}

std::string CreateSnapshotsArgs(const std::vector<SnapshotRef>& specs) {
  std::string out = This();
  for (const SnapshotRef& s : specs) {
    absl::StrAppend(&out, "<snapshotSpecs>", VolumeIdXml("volumeId", s.volume_id),
                    TextXml("description", s.description), "</snapshotSpecs>");
  }
  return out;
}

std::string DeleteSnapshotsArgs(const std::vector<SnapshotRef>& specs) {
  std::string out = This();
  for (const SnapshotRef& s : specs) {
    absl::StrAppend(&out, "<snapshotDeleteSpecs>", VolumeIdXml("volumeId", s.volume_id),
                    VolumeIdXml("snapshotId", s.snapshot_id), "</snapshotDeleteSpecs>");
  }
  return out;
}

std::string QuerySnapshotsArgs(const SnapshotQueryFilter& filter) {
  std::string out = absl::StrCat(This(), "<snapshotQueryFilter>");
  for (const SnapshotQuerySpec& s : filter.specs) {
    absl::StrAppend(&out, "<snapshotQuerySpecs>", VolumeIdXml("volumeId", s.volume_id));
    if (!s.snapshot_id.empty()) absl::StrAppend(&out, VolumeIdXml("snapshotId", s.snapshot_id));
    absl::StrAppend(&out, "</snapshotQuerySpecs>");
  }
  if (filter.cursor) {
    absl::StrAppend(&out, "<cursor>", TextXml("offset", absl::StrCat(filter.cursor->offset)),
                    TextXml("limit", absl::StrCat(filter.cursor->limit)), "</cursor>");
  }
  return absl::StrCat(out, "</snapshotQueryFilter>");
}

std::string QueryVolumeInfoArgs(const std::vector<std::string>& volume_ids) {
  std::string out = This();
  for (const std::string& id : volume_ids) absl::StrAppend(&out, VolumeIdXml("volumes", id));
  return out;
}

std::string SetControlFlagsArgs(const Moref& manager, const std::string& volume_id,
                                const Moref& datastore, const std::vector<std::string>& flags) {
  std::string out = absl::StrCat(MorefXml("_this", manager), "<id>", TextXml("id", volume_id),
                                 "</id>", MorefXml("datastore", datastore));
  for (const std::string& f : flags) absl::StrAppend(&out, TextXml("controlFlags", f));
  return out;
}

absl::StatusOr<Snapshot> ParseSnapshot(const pugi::xml_node& n) {
  Snapshot s;
  s.snapshot_id = ChildText(Child(n, "snapshotId"), "id");
  s.volume_id = ChildText(Child(n, "volumeId"), "id");
  s.description = ChildText(n, "description");
  if (s.snapshot_id.empty() || s.volume_id.empty()) {
    return absl::InternalError("malformed CNS answer: a snapshot without snapshotId or volumeId");
  }
  const std::string when = ChildText(n, "createTime");
  std::string err;
  if (!absl::ParseTime(absl::RFC3339_full, when, &s.create_time, &err)) {
    return absl::InternalError(absl::StrCat("malformed CNS answer: snapshot ", s.snapshot_id,
                                            " has createTime \"", when, "\" (", err, ")"));
  }
  return s;
}

absl::StatusOr<SnapshotQueryResult> ParseSnapshotQueryResult(const pugi::xml_node& result) {
  if (!result) return absl::InternalError("malformed CNS answer: no CnsSnapshotQueryResult");
  SnapshotQueryResult out;
  for (const pugi::xml_node& e : Children(result, "entries")) {
    SnapshotQueryEntry entry;
    if (pugi::xml_node fault = Child(e, "error")) {
      entry.fault_name = XsiType(Child(fault, "fault"));
      if (entry.fault_name.empty()) entry.fault_name = "UnknownFault";
      entry.fault_message = ChildText(fault, "localizedMessage");
    } else {
      absl::StatusOr<Snapshot> s = ParseSnapshot(Child(e, "snapshot"));
      if (!s.ok()) return s.status();
      entry.snapshot = *std::move(s);
    }
    out.entries.push_back(std::move(entry));
  }
  CCM_RETURN_IF_ERROR(ParseCursor(Child(result, "cursor"), out.cursor));
  return out;
}

VolumeMetadata ParseVolumeMetadata(const pugi::xml_node& n) {
  VolumeMetadata m;
  m.container_cluster = ParseContainerCluster(Child(n, "containerCluster"));
  for (const pugi::xml_node& e : Children(n, "entityMetadata")) {
    EntityMetadata em;
    em.entity_name = ChildText(e, "entityName");
    em.labels = ParseKeyValues(e, "labels");
    em.remove = ChildText(e, "delete") == "true";
    em.cluster_id = ChildText(e, "clusterId");
    em.entity_type = ChildText(e, "entityType");
    em.namespace_name = ChildText(e, "namespace");
    for (const pugi::xml_node& r : Children(e, "referredEntity")) {
      em.referred_entity.push_back({ChildText(r, "entityType"), ChildText(r, "entityName"),
                                    ChildText(r, "namespace"), ChildText(r, "clusterId")});
    }
    m.entity_metadata.push_back(std::move(em));
  }
  for (const pugi::xml_node& c : Children(n, "containerClusterArray")) {
    m.container_cluster_array.push_back(ParseContainerCluster(c));
  }
  return m;
}

absl::StatusOr<QueryResult> ParseQueryResult(const pugi::xml_node& returnval) {
  if (!returnval) return absl::InternalError("malformed CNS answer: no CnsQueryResult");
  QueryResult out;
  for (const pugi::xml_node& v : Children(returnval, "volumes")) {
    Volume vol;
    vol.volume_id = ChildText(Child(v, "volumeId"), "id");
    if (vol.volume_id.empty()) {
      return absl::InternalError("malformed CNS answer: a volume without volumeId.id");
    }
    vol.name = ChildText(v, "name");
    vol.volume_type = ChildText(v, "volumeType");
    vol.datastore_url = ChildText(v, "datastoreUrl");
    vol.storage_policy_id = ChildText(v, "storagePolicyId");
    vol.metadata = ParseVolumeMetadata(Child(v, "metadata"));
    pugi::xml_node backing = Child(v, "backingObjectDetails");
    auto cap = Int(backing, "capacityInMb", "backingObjectDetails");
    if (!cap.ok()) return cap.status();
    vol.capacity_mb = *cap;
    vol.backing_disk_id = ChildText(backing, "backingDiskId");
    vol.backing_disk_object_id = ChildText(backing, "backingDiskObjectId");
    vol.backing_file_id = ChildText(backing, "backingFileId");
    vol.file_share_name = ChildText(backing, "name");
    vol.access_points = ParseKeyValues(backing, "accessPoints");
    vol.compliance_status = ChildText(v, "complianceStatus");
    vol.accessibility_status = ChildText(v, "datastoreAccessibilityStatus");
    vol.health_status = ChildText(v, "healthStatus");
    out.volumes.push_back(std::move(vol));
  }
  CCM_RETURN_IF_ERROR(ParseCursor(Child(returnval, "cursor"), out.cursor));
  return out;
}

absl::StatusOr<TaskInfo> ParseTaskInfo(std::shared_ptr<const pugi::xml_document> doc,
                                       const pugi::xml_node& info) {
  TaskInfo t;
  t.state = ChildText(info, "state");
  if (t.state != "queued" && t.state != "running" && t.state != "success" && t.state != "error") {
    return absl::InternalError(
        absl::StrCat("malformed task info: unknown state \"", t.state, "\""));
  }
  pugi::xml_node error = Child(info, "error");
  t.error_fault = XsiType(Child(error, "fault"));
  t.error_message = ChildText(error, "localizedMessage");
  if (t.state == "error" && t.error_fault.empty()) t.error_fault = "UnknownFault";
  t.result = Child(info, "result");
  t.doc = std::move(doc);
  return t;
}

absl::StatusOr<std::vector<VolumeOperationResult>> ParseBatchResult(const pugi::xml_node& result) {
  std::vector<VolumeOperationResult> out;
  for (const pugi::xml_node& r : Children(result, "volumeResults")) {
    VolumeOperationResult v;
    v.type = XsiType(r);
    v.volume_id = ChildText(Child(r, "volumeId"), "id");
    pugi::xml_node fault = Child(r, "fault");
    if (fault) {
      v.fault_name = XsiType(Child(fault, "fault"));
      if (v.fault_name.empty()) v.fault_name = "UnknownFault";
      v.fault_message = ChildText(fault, "localizedMessage");
      v.fault_volume_id = ChildText(Child(Child(fault, "fault"), "volumeId"), "id");
    }
    v.name = ChildText(r, "name");
    for (const pugi::xml_node& p : Children(r, "placementResults")) {
      v.placement.push_back(ParseMoref(Child(p, "datastore")));
    }
    v.disk_uuid = ChildText(r, "diskUUID");
    if (v.type == "CnsSnapshotCreateResult" && v.fault_name.empty()) {
      absl::StatusOr<Snapshot> s = ParseSnapshot(Child(r, "snapshot"));
      if (!s.ok()) return s.status();
      v.snapshot = *std::move(s);
    }
    v.snapshot_id = ChildText(Child(r, "snapshotId"), "id");
    if (v.type == "CnsQueryVolumeInfoResult") {
      pugi::xml_node config = Child(Child(Child(r, "volumeInfo"), "vStorageObject"), "config");
      pugi::xml_node backing = Child(config, "backing");
      v.backing.file_path = ChildText(backing, "filePath");
      v.backing.datastore = ParseMoref(Child(backing, "datastore"));
      v.backing.keep_after_delete_vm = ChildText(config, "keepAfterDeleteVm") == "true";
    }
    out.push_back(std::move(v));
  }
  return out;  // possibly empty: the caller decides from the volume (VolumeManager::Settle)
}

namespace {
constexpr absl::string_view kRegisteredVolumePayload = "ccm/cns-registered-volume-id";
}  // namespace

absl::Status ResultFaultStatus(const VolumeOperationResult& r) {
  absl::Status s = FaultStatus(r.fault_name, r.fault_message);
  if (!r.fault_volume_id.empty())
    s.SetPayload(kRegisteredVolumePayload, absl::Cord(r.fault_volume_id));
  return s;
}

std::string RegisteredVolumeId(const absl::Status& s) {
  auto p = s.GetPayload(kRegisteredVolumePayload);
  return p ? std::string(*p) : std::string();
}

absl::Status FaultStatus(absl::string_view fault_name, absl::string_view message) {
  absl::Status named = NamedFaultStatus(fault_name, message);
  absl::StatusCode code = named.code();
  if (fault_name == "NotFound" || fault_name == "ManagedObjectNotFound" ||
      fault_name == "CnsVolumeNotFoundFault" || fault_name == "CnsSnapshotNotFoundFault" ||
      fault_name == "FileNotFound") {
    code = absl::StatusCode::kNotFound;
  } else if (fault_name == "CnsVolumeAlreadyExistsFault") {
    code = absl::StatusCode::kAlreadyExists;  // a transaction's volume ID CNS has (9.1)
  } else if (fault_name == "ResourceInUse" || fault_name == "InvalidPowerState") {
    code = absl::StatusCode::kFailedPrecondition;
  } else if (fault_name == "TooManyDevices" || fault_name == "TooManyDisksOnLegacyHost" ||
             fault_name == "NoDiskSpace" || fault_name == "InsufficientResourcesFault") {
    code = absl::StatusCode::kResourceExhausted;  // no free SCSI slot, disk full
  } else if (fault_name == "TaskInProgress" || fault_name == "ConcurrentAccess") {
    code = absl::StatusCode::kAborted;  // another operation on the object: retry later
  } else if (fault_name == "InvalidState") {
    code = absl::StatusCode::kUnavailable;  // the object is busy changing state: retry
  }
  if (code == named.code()) return named;
  absl::Status out(code, named.message());
  named.ForEachPayload(
      [&](absl::string_view url, const absl::Cord& payload) { out.SetPayload(url, payload); });
  return out;
}

}  // namespace ccm::vsphere::cns
