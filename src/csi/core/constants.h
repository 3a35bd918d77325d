#pragma once
// Names and defaults the CSI driver shares with kubernetes-sigs/vsphere-csi-driver (the
// "reference"). They are on the wire (StorageClass parameters, publish and volume context, topology
// keys, environment variables), so they must stay identical. Each entry says where the reference
// keeps it; paths are relative to that repository.

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace ccm::csi {

// The User-Agent of the driver's vCenter sessions, as vCenter's session list shows it: the
// reference's "k8s-csi-useragent" (pkg/common/cns-lib/vsphere/virtualcenter.go), with the
// cluster-id and the component appended as its newer releases append the cluster-id and a
// feature: "k8s-csi-useragent-<cluster-id>-controller", "...-syncer".
inline std::string CsiUserAgent(absl::string_view cluster_id, absl::string_view component) {
  return absl::StrCat("k8s-csi-useragent-", cluster_id, "-", component);
}

// pkg/csi/service/common/constants.go VSphereCSIDriverName.
inline constexpr absl::string_view kDriverName = "csi.vsphere.vmware.com";

// ---- Sizes (common/constants.go MbInBytes, GbInBytes, DefaultGbDiskSize) ----
inline constexpr int64_t kMiB = int64_t{1024} * 1024;
inline constexpr int64_t kGiB = kMiB * 1024;
// The size of a volume created without required_bytes: 10 GiB ("Volume Size - Default is 10 GiB"
// in vanilla/controller.go createBlockVolume).
inline constexpr int64_t kDefaultVolumeSizeBytes = 10 * kGiB;

// ---- StorageClass parameters (common/constants.go Attribute*; keys compared lower-cased by
// common/util.go ParseStorageClassParams) ----
inline constexpr absl::string_view kParamDatastoreUrl = "datastoreurl";
inline constexpr absl::string_view kParamStoragePolicyName = "storagepolicyname";
// Deprecated by the reference (it logs a warning and ignores the value); accepted the same way.
inline constexpr absl::string_view kParamFsTypeDeprecated = "fstype";
// In-tree migration marker (CSIMigrationParams) and the in-tree parameters it allows
// (DatastoreMigrationParam, DiskFormatMigrationParam, *MigrationParam).
inline constexpr absl::string_view kParamCsiMigration = "csimigration";
inline constexpr absl::string_view kParamDatastoreMigration = "datastore-migrationparam";
inline constexpr absl::string_view kParamDiskFormatMigration = "diskformat-migrationparam";
// Keys the external-provisioner adds with --extra-create-metadata (AttributePvName,
// AttributePvcName, AttributePvcNamespace) and the fstype key it consumes itself
// (csi.storage.k8s.io/fstype, named in the reference's deprecation warning).
inline constexpr absl::string_view kParamPvName = "csi.storage.k8s.io/pv/name";
inline constexpr absl::string_view kParamPvcName = "csi.storage.k8s.io/pvc/name";
inline constexpr absl::string_view kParamPvcNamespace = "csi.storage.k8s.io/pvc/namespace";
inline constexpr absl::string_view kParamFsType = "csi.storage.k8s.io/fstype";

// ---- Volume and publish context (common/constants.go) ----
// AttributeDiskType: the key of both the CreateVolume volume_context and the
// ControllerPublishVolume publish_context; DiskTypeBlockVolume its value for block volumes.
inline constexpr absl::string_view kContextType = "type";
inline constexpr absl::string_view kDiskTypeBlockVolume = "vSphere CNS Block Volume";
// DiskTypeFileVolume: a vSAN file share (CNS volume type FILE); its publish context carries
// Nfsv4AccessPoint, the share's NFSv4.1 export ("<address>:/<path>") from the CNS access point
// keyed Nfsv4AccessPointKey.
inline constexpr absl::string_view kDiskTypeFileVolume = "vSphere CNS File Volume";
inline constexpr absl::string_view kPublishNfsv4AccessPoint = "Nfsv4AccessPoint";
inline constexpr absl::string_view kNfsv4AccessPointKey = "NFSv4.1";
// AttributeFirstClassDiskUUID: the attached disk's SCSI UUID, formatted by common/util.go
// FormatDiskUUID (no dashes or spaces, lower case).
inline constexpr absl::string_view kPublishDiskUuid = "diskUUID";

// ---- Filesystems (common/constants.go Ext4FsType, Ext3FsType, XFSType, NfsFsType,
// NfsV4FsType, NTFSFsType) ----
inline constexpr absl::string_view kFsExt4 = "ext4";  // default for block volumes
inline constexpr absl::string_view kFsExt3 = "ext3";
inline constexpr absl::string_view kFsXfs = "xfs";
inline constexpr absl::string_view kFsNfs = "nfs";    // file volumes only
inline constexpr absl::string_view kFsNfs4 = "nfs4";  // file volumes only (their default)
inline constexpr absl::string_view kFsNtfs = "ntfs";  // Windows nodes only: not supported here
// osutils/os_utils.go EnsureMountVol adds this mount option for xfs (a clone or restored snapshot
// carries the same filesystem UUID, which xfs refuses to mount twice otherwise).
inline constexpr absl::string_view kXfsNoUuidMountOption = "nouuid";

// ---- Topology keys ----
// k8s.io/api core/v1 LabelFailureDomainBetaZone / LabelFailureDomainBetaRegion: what the reference
// publishes for [Labels] zone/region (node.go fetchTopologyLabelsUsingVCCreds, and
// syncer/.../csinodetopology_controller.go getNodeTopologyInfo when no [TopologyCategory] label
// override is configured).
inline constexpr absl::string_view kLegacyZoneKey = "failure-domain.beta.kubernetes.io/zone";
inline constexpr absl::string_view kLegacyRegionKey = "failure-domain.beta.kubernetes.io/region";
// core/v1 LabelTopologyZone / LabelTopologyRegion: what our CCM writes on Nodes (and the reference
// guest-cluster flavor publishes).
inline constexpr absl::string_view kZoneKey = "topology.kubernetes.io/zone";
inline constexpr absl::string_view kRegionKey = "topology.kubernetes.io/region";
// common/constants.go TopologyLabelsDomain: "<domain>/<category>" for [Labels] topology-categories.
inline constexpr absl::string_view kTopologyLabelsDomain = "topology.csi.vmware.com";

// ---- Node plugin ----
// node.go NodeGetInfo: the node ID is $NODE_NAME, or the VM UUID when the "use-csinode-id" feature
// state is on (it is "true" in manifests/vanilla internal-feature-states.csi.vsphere.vmware.com).
inline constexpr absl::string_view kEnvNodeName = "NODE_NAME";
inline constexpr absl::string_view kFeatureUseCsiNodeId = "use-csinode-id";
// node.go NodeGetInfo: max_volumes_per_node is 59 (4 paravirtual SCSI controllers of 15 targets,
// one for the VM's own disk), as the current reference answers by default; its
// high-pv-node-density feature state raises it to 255 (vSphere 8), which this driver does not read
// yet. MAX_VOLUMES_PER_NODE, which older references read and the current one does not, still
// overrides it here with a value from 1 to 255 (0 or unset: the default); negative or
// non-numeric is an error.
inline constexpr absl::string_view kEnvMaxVolumesPerNode = "MAX_VOLUMES_PER_NODE";
inline constexpr int64_t kDefaultBlockVolumesPerNode = 59;
inline constexpr int64_t kMaxAllowedBlockVolumesPerNode = 255;
// osutils/linux_os_utils.go devDiskID and blockPrefix: the attached disk is
// <devDiskID>/<blockPrefix><diskUUID>.
inline constexpr absl::string_view kDevDiskById = "/dev/disk/by-id";
inline constexpr absl::string_view kDiskLinkPrefix = "wwn-0x";
// osutils/linux_os_utils.go dmiDir + "id/product_serial" and UUIDPrefix: the VM UUID the node
// reads locally ("VMware-56 4d 39 5e ...").
inline constexpr absl::string_view kProductSerialPath = "/sys/class/dmi/id/product_serial";
inline constexpr absl::string_view kProductSerialPrefix = "VMware-";

// CSI spec v1.9 "Size Limits": a string field (volume_id among them) is at most 128 bytes.
inline constexpr size_t kMaxVolumeIdBytes = 128;

}  // namespace ccm::csi
