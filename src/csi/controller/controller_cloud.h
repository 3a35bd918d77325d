#pragma once
// The Controller service's seams: everything it asks of vCenter and Kubernetes goes through the
// interfaces here (as aws-ebs-csi-driver's Cloud), so every RPC branch is table-tested on fakes
// (test/testing/fake_controller.h, controller_service_test.cc) and the real implementations
// against the simulator and the API emulator.
//  - per vCenter (VCenterEndpoint): CNS (vsphere::cns::VolumeManager), its VMs (VmDirectory),
//    its storage policies (PolicyCatalog);
//  - the placement view over all vCenters (PlacementView: DatastoreInventory);
//  - the Kubernetes side: the node VMs (NodeVmSource: NodeVms), the driver's PVs (PvCounter:
//    DriverPvs);
//  - ControllerCloud, the whole: ControllerBackend in the binary.
// Implementations are thread-safe.

#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "cloud/config/config.h"
#include "csi/controller/attachments.h"
#include "csi/controller/operation_store.h"
#include "csi/controller/placement_view.h"
#include "csi/core/file_placement.h"
#include "csi/core/topology.h"
#include "csi/migration/registrar.h"
#include "csi/migration/volume_migrations.h"
#include "vsphere/cns/volume_manager.h"
#include "vsphere/inventory_cache.h"
#include "vsphere/vm_facts.h"

namespace ccm::csi {

// One vCenter's VMs, from memory, and which of them hold which volumes' disks.
class VmDirectory {
 public:
  virtual ~VmDirectory() = default;
  // Unavailable while the VMs are not known (never NotFound then); NotFound: no such VM.
  virtual absl::StatusOr<vsphere::VmFacts> FindByUuid(absl::string_view bios_uuid) = 0;
  virtual absl::StatusOr<std::vector<vsphere::VmFacts>> FindByHostname(
      absl::string_view hostname) = 0;
  virtual absl::Status ForEachVm(const std::function<void(const vsphere::VmFacts&)>& fn) = 0;
  // Volume ID -> the VMs holding its disk (one vCenter query, not from memory).
  virtual absl::StatusOr<AttachmentMap> Attachments() = 0;
};

// One vCenter's storage policies (SPBM).
class PolicyCatalog {
 public:
  virtual ~PolicyCatalog() = default;
  // NotFound naming the policy and the vCenter when there is no profile of that name.
  virtual absl::StatusOr<std::string> IdOf(const std::string& name) = 0;
  // The MOIDs among `datastores` (MOIDs) that satisfy the profile.
  virtual absl::StatusOr<std::set<std::string>> Compatible(
      const std::string& profile_id, const std::vector<std::string>& datastores) = 0;
};

// One vCenter's compute clusters as file volumes see them (file_services.h).
class FileServiceSource {
 public:
  virtual ~FileServiceSource() = default;
  // Every cluster with its vSAN and file-services state and datastores; Unavailable when
  // vCenter cannot be asked.
  virtual absl::StatusOr<std::vector<FileServiceCluster>> Clusters() = 0;
};

// One vCenter as the service uses it.
struct VCenterEndpoint {
  std::string label;  // the config's vCenter label: qualified volume IDs name it
  std::string user;   // the CNS container cluster's vsphere_user
  vsphere::cns::VolumeManager* cns = nullptr;
  VmDirectory* vms = nullptr;
  PolicyCatalog* policies = nullptr;
  FileServiceSource* file_services = nullptr;  // null: file volumes cannot be placed here
  FileShareTargets file_share_targets;         // targetvSANFileShare* of its config
};

struct NodeVmRef {
  std::string node;  // the Node's name
  std::string uuid;  // the VM's BIOS UUID, lower case
};

class NodeVmSource {
 public:
  virtual ~NodeVmSource() = default;
  // Every node whose VM is known: by the VM UUID its CSINode names as this driver's node ID,
  // else by its Node's vSphere providerID. Unavailable before they are known.
  virtual absl::StatusOr<std::vector<NodeVmRef>> List() const = 0;
  // The Nodes known by neither, for messages.
  virtual std::vector<std::string> unknown() const = 0;
  // How many volumes of this driver the node whose node ID is `node_id` takes: its CSINode's
  // allocatable count (the kubelet writes NodeGetInfo's max_volumes_per_node there); nullopt
  // when no CSINode names that ID or gives a count.
  virtual std::optional<int64_t> VolumeLimit(const std::string& node_id) const {
    return std::nullopt;
  }
};

class PvCounter {
 public:
  virtual ~PvCounter() = default;
  // The PersistentVolumes of this driver; Unavailable before they are known.
  virtual absl::StatusOr<size_t> Count() const = 0;
};

// Which vCenter holds each volume, with several vCenters: the reference's CnsVolumeInfo objects
// (volume_infos.h), so volume IDs stay bare CNS IDs.
class VolumeInfos {
 public:
  virtual ~VolumeInfos() = default;
  // The vCenter (its config label: the [VirtualCenter "<host>"] name) recorded for the volume.
  // NotFound without a record; Unavailable before the records are known.
  virtual absl::StatusOr<std::string> VCenterOf(const std::string& cns_id) const = 0;
  // Records it (an existing record is kept); Forget removes it (none is success).
  virtual absl::Status Record(const std::string& cns_id, const std::string& vcenter) = 0;
  virtual absl::Status Forget(const std::string& cns_id) = 0;
};

class ControllerCloud {
 public:
  virtual ~ControllerCloud() = default;
  virtual const cloud::Config& config() const = 0;
  virtual const TopologyConfig& topology() const = 0;
  virtual std::vector<VCenterEndpoint>& vcenters() = 0;
  virtual PlacementView& datastores() = 0;
  virtual NodeVmSource* nodes() = 0;  // null without a Kubernetes API
  virtual PvCounter* pvs() = 0;       // null without a Kubernetes API
  virtual OperationStore& operations() = 0;
  virtual VolumeMigrations* migrations() { return nullptr; }  // null without a Kubernetes API
  // Registers in-tree disks with CNS again when CNS lost their volumes (CSI migration, one
  // vCenter with a Kubernetes API); null otherwise.
  virtual InTreeRegistrar* registrar() { return nullptr; }
  // Null without a Kubernetes API or with one vCenter.
  virtual VolumeInfos* volume_infos() { return nullptr; }
  // ListVolumes' published nodes of file volumes: publishing a file share changes nothing in
  // vCenter, so the VolumeAttachments are the record (handle -> Node names). Empty without a
  // Kubernetes API.
  virtual absl::StatusOr<std::map<std::string, std::vector<std::string>>> FilePublications() {
    return std::map<std::string, std::vector<std::string>>{};
  }
};

// The real VmDirectory: the vCenter's InventoryCache, and RetrieveProperties for attachments.
class CachedVmDirectory final : public VmDirectory {
 public:
  CachedVmDirectory(vsphere::InventoryCache& cache, vsphere::Client& client)
      : cache_(cache), client_(client) {}
  absl::StatusOr<vsphere::VmFacts> FindByUuid(absl::string_view bios_uuid) override {
    return cache_.FindByUuid(bios_uuid);
  }
  absl::StatusOr<std::vector<vsphere::VmFacts>> FindByHostname(
      absl::string_view hostname) override {
    return cache_.FindByHostname(hostname);
  }
  absl::Status ForEachVm(const std::function<void(const vsphere::VmFacts&)>& fn) override {
    return cache_.ForEachVm(fn);
  }
  absl::StatusOr<AttachmentMap> Attachments() override { return ListAttachments(client_); }

 private:
  vsphere::InventoryCache& cache_;
  vsphere::Client& client_;
};

}  // namespace ccm::csi
