#pragma once
// Value types of the vCenter Cloud Native Storage (CNS) volume manager calls, named after the
// vSphere API types (CnsVolumeCreateSpec, CnsQueryFilter, ...) they are written to and read from.
// Block volumes ("BLOCK", First Class Disks) and file volumes ("FILE", vSAN file shares: a
// CnsVsanFileShareBackingDetails backing and a CnsVSANFileCreateSpec with the share's access
// rules): the vanilla CSI driver's scope.

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/time/time.h"
#include "vsphere/moref.h"

namespace ccm::vsphere::cns {

using KeyValues = std::vector<std::pair<std::string, std::string>>;

// CnsContainerCluster: the Kubernetes cluster that owns a volume.
struct ContainerCluster {
  std::string cluster_type = "KUBERNETES";
  std::string cluster_id;    // csi-vsphere.conf [Global] cluster-id
  std::string vsphere_user;  // the user the driver logs in as
  std::string cluster_flavor = "VANILLA";
  std::string cluster_distribution;  // optional
  bool operator==(const ContainerCluster&) const = default;
};

// CnsKubernetesEntityReference: e.g. the PVC a PV is bound to.
struct EntityReference {
  std::string entity_type;  // "PERSISTENT_VOLUME_CLAIM", ...
  std::string entity_name;
  std::string namespace_name;
  std::string cluster_id;
  bool operator==(const EntityReference&) const = default;
};

// CnsKubernetesEntityMetadata: what the metadata syncer tells CNS about a PV, PVC or POD.
struct EntityMetadata {
  std::string entity_type;  // "PERSISTENT_VOLUME", "PERSISTENT_VOLUME_CLAIM", "POD"
  std::string entity_name;
  std::string namespace_name;  // empty for a PV
  KeyValues labels;
  bool remove = false;  // CnsEntityMetadata.delete: drop this entity from the volume
  std::string cluster_id;
  std::vector<EntityReference> referred_entity;
  bool operator==(const EntityMetadata&) const = default;
};

// CnsVolumeMetadata.
struct VolumeMetadata {
  ContainerCluster container_cluster;
  std::vector<EntityMetadata> entity_metadata;
  std::vector<ContainerCluster> container_cluster_array;
  bool operator==(const VolumeMetadata&) const = default;
};

// One volume's part of a CnsUpdateVolumeMetadata call.
struct MetadataUpdate {
  std::string volume_id;
  VolumeMetadata metadata;
};

// VsanFileShareNetPermission: one access rule of a file share.
struct NetPermission {
  std::string ips;          // an address, a CIDR or "*"
  std::string permissions;  // READ_WRITE, READ_ONLY, NO_ACCESS
  bool allow_root = false;
  bool operator==(const NetPermission&) const = default;
};

inline constexpr char kVolumeTypeBlock[] = "BLOCK";
inline constexpr char kVolumeTypeFile[] = "FILE";

// CnsVolumeCreateSpec of a block volume (CnsBlockBackingDetails) or, with volume_type FILE, of a
// vSAN file share (CnsVsanFileShareBackingDetails; CnsVSANFileCreateSpec with softQuotaInMb =
// capacity_mb and the permissions). Rounding the requested size to whole MiB is the caller's
// job (CSI core).
struct CreateSpec {
  std::string name;  // the CSI volume name (pvc-<uid>)
  std::string volume_type = kVolumeTypeBlock;
  std::vector<NetPermission> permissions;  // FILE only
  int64_t capacity_mb = 0;
  // Candidates in order of preference; CNS places the volume on one of them. Empty: CNS chooses.
  std::vector<Moref> datastores;
  std::string storage_policy_id;  // optional SPBM profile id
  VolumeMetadata metadata;
  // Registration of an existing disk instead of a new one (capacity_mb then 0): the First Class
  // Disk's ID (a statically provisioned PV), or the disk's URL path (an in-tree VMDK).
  std::string backing_disk_id;
  std::string backing_disk_url_path;
  // A volume from a snapshot (CnsSnapshotVolumeSource): CNS makes the new disk on the
  // snapshot's datastore, of the snapshot's size.
  std::string source_volume_id;
  std::string source_snapshot_id;
  // CNS transactions (vCenter 9.1 and later): the new volume's ID, chosen by the caller, so a
  // create sent again is the same volume (CnsVolumeAlreadyExistsFault). Empty: CNS chooses.
  std::string volume_id;
};

struct CreateResult {
  std::string volume_id;  // the FCD id
  Moref datastore;        // where CNS placed it (placementResults)
};

// CnsCursor. In an answer, `offset` is where the next page starts.
struct Cursor {
  int64_t offset = 0;
  int64_t limit = 0;
  int64_t total_records = 0;
  bool operator==(const Cursor&) const = default;
};

// CnsQueryFilter: every set field must match.
struct QueryFilter {
  std::vector<std::string> volume_ids;
  std::vector<std::string> names;
  std::vector<std::string> container_cluster_ids;
  std::string storage_policy_id;
  std::vector<Moref> datastores;
  KeyValues labels;
  std::optional<Cursor> cursor;  // unset: one page with the server's limit
};

// CnsVolume as a query returns it.
struct Volume {
  std::string volume_id;
  std::string name;
  std::string volume_type;  // "BLOCK"
  std::string datastore_url;
  std::string storage_policy_id;
  int64_t capacity_mb = 0;
  std::string backing_disk_id;
  // CnsBlockBackingDetails.backingDiskObjectId (vCenter 7.0U2+): the vSAN or vVol object behind
  // the disk; empty on VMFS and NFS.
  std::string backing_disk_object_id;
  // A file volume's CnsVsanFileShareBackingDetails: the share's name, its vSAN file ID and
  // access points (key "NFSv4.1" or "NFSv3", value "<address>:/<path>").
  std::string file_share_name;
  std::string backing_file_id;
  KeyValues access_points;
  VolumeMetadata metadata;
  std::string compliance_status;
  std::string accessibility_status;
  std::string health_status;
};

struct QueryResult {
  std::vector<Volume> volumes;
  Cursor cursor;
};

// CnsSnapshot.
struct Snapshot {
  std::string snapshot_id;
  std::string volume_id;
  std::string description;  // the reference writes "<CSI snapshot name>-<volume id>" here
  absl::Time create_time = absl::UnixEpoch();
  bool operator==(const Snapshot&) const = default;
};

// CnsSnapshotQuerySpec: one volume's snapshots, or one of them.
struct SnapshotQuerySpec {
  std::string volume_id;
  std::string snapshot_id;  // empty: every snapshot of the volume
};

// CnsSnapshotQueryFilter: no spec asks for every snapshot CNS has.
struct SnapshotQueryFilter {
  std::vector<SnapshotQuerySpec> specs;
  std::optional<Cursor> cursor;
};

// CnsSnapshotQueryResultEntry: a snapshot, or the fault for a spec (e.g. an unknown snapshot).
struct SnapshotQueryEntry {
  Snapshot snapshot;
  std::string fault_name;
  std::string fault_message;
};

struct SnapshotQueryResult {
  std::vector<SnapshotQueryEntry> entries;
  Cursor cursor;
};

// One entry of a task's CnsVolumeOperationBatchResult (CnsVolumeOperationResult and subtypes).
// A volume's disk as CnsQueryVolumeInfo gives it (CnsBlockVolumeInfo.vStorageObject).
struct DiskBacking {
  std::string file_path;  // "[datastore1] kubevols/pvc-1.vmdk"
  Moref datastore;
  bool keep_after_delete_vm = false;
};

struct VolumeOperationResult {
  std::string type;  // xsi:type, e.g. "CnsVolumeCreateResult"
  std::string volume_id;
  std::string fault_name;        // xsi:type of fault.fault; empty when the operation succeeded
  std::string fault_message;     // fault.localizedMessage
  std::string fault_volume_id;   // CnsAlreadyRegisteredFault.volumeId: the disk's volume
  std::string name;              // CnsVolumeCreateResult
  std::vector<Moref> placement;  // CnsVolumeCreateResult.placementResults[].datastore
  std::string disk_uuid;         // CnsVolumeAttachResult
  Snapshot snapshot;             // CnsSnapshotCreateResult
  std::string snapshot_id;       // CnsSnapshotDeleteResult
  DiskBacking backing;           // CnsQueryVolumeInfoResult
};

}  // namespace ccm::vsphere::cns
