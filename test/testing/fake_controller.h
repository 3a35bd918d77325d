#pragma once
// In-memory stand-ins for the Controller service's seams (src/csi/controller/controller_cloud.h),
// for table tests of its RPCs without the simulator:
//  - FakeCns: CNS volumes in memory, answering as vCenter's CNS does where the service can tell
//    (NotFound and ResourceInUse faults, ResourceInUse for any attach of an attached volume,
//    tasks that can vanish, a fault injected at Start or in the task);
//  - FakeVms: a vCenter's VMs, and the attachments FakeCns holds;
//  - FakePolicies, FakePlacement (a fixed datastore view), FakeNodes, FakePvs;
//  - FakeControllerCloud: one vCenter "vc1" of all of these, with a cluster-id and in-memory
//    operation records.
// Thread-safe enough for a test (one mutex per fake).

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "csi/controller/controller_cloud.h"

namespace ccm::csi::testing {

class FakeCns final : public vsphere::cns::VolumeManager {
 public:
  struct Stored {
    vsphere::cns::Volume volume;
    std::string datastore;    // MOID
    std::string attached_vm;  // MOID, "" when detached
    std::string disk_uuid;
    std::string file_path;  // "[ds] path" (CnsQueryVolumeInfo)
    bool keep_after_delete_vm = false;
  };
  // The URL of a datastore MOID, for the volumes created there.
  void SetDatastoreUrl(const std::string& moid, const std::string& url);
  // The next `count` calls of `method` fail with `s`: in Start (CNS did not take it) or in the
  // task (Wait's answer; the change did not happen).
  void Fail(const std::string& method, absl::Status s, bool at_start = false, int count = 1);
  // The next Wait of a task started for `method` says the task vanished (the change happened).
  void VanishTask(const std::string& method);
  // A volume as if made before (another cluster, a static PV, ...).
  std::string Add(const std::string& name, int64_t capacity_mb, const std::string& datastore,
                  const std::string& cluster_id, const std::string& policy_id = "");
  void AttachTo(const std::string& volume_id, const std::string& vm_moid);
  // An in-tree disk CnsCreateVolume can register by `url_path` (backingDiskUrlPath); its file is
  // `file_path` ("[ds] kubevols/x.vmdk").
  void AddDisk(const std::string& url_path, const std::string& file_path, int64_t capacity_mb,
               const std::string& datastore);
  std::optional<Stored> Get(const std::string& volume_id) const;
  // CNS forgets a volume (reset, unregistered by an admin); its disk stays. False if unknown.
  bool Delete(const std::string& volume_id);
  // A query by name does not list the volume yet (a create whose answer was lost, not indexed).
  void HideName(const std::string& volume_id);
  std::vector<Stored> All() const;
  int Calls(const std::string& method) const;  // Start/QueryVolume calls by CNS method

  // A vCenter before 7.0U3 (off): SnapshotsSupported is false and every snapshot call answers
  // Unimplemented, as CnsClient answers for a vCenter that does not know the method.
  void SetSnapshotApi(bool on);
  absl::StatusOr<bool> SnapshotsSupported() override;
  // about.apiVersion (default "7.0.3.0").
  void SetApiVersion(const std::string& v);
  absl::StatusOr<std::string> ApiVersion() override;

  // Snapshots as CNS keeps them: per volume, in creation order.
  std::vector<vsphere::cns::Snapshot> SnapshotsOfVolume(const std::string& volume_id) const;

  absl::StatusOr<vsphere::cns::QueryResult> QueryVolume(
      const vsphere::cns::QueryFilter& filter) override;
  absl::StatusOr<vsphere::cns::SnapshotQueryResult> QuerySnapshots(
      const vsphere::cns::SnapshotQueryFilter& filter) override;
  absl::StatusOr<vsphere::Moref> Start(const vsphere::cns::Operation& op) override;
  absl::StatusOr<vsphere::cns::VolumeOperationResult> Wait(const vsphere::Moref& task,
                                                           absl::string_view what) override;
  absl::StatusOr<std::string> AttachedDiskUuid(const vsphere::Moref& vm,
                                               const std::string& volume_id) override;
  absl::Status KeepAfterVmDeletion(const std::string& volume_id,
                                   const vsphere::Moref& datastore) override;

 private:
  struct Disk {
    std::string file_path;
    int64_t capacity_mb = 0;
    std::string datastore;
  };
  struct Failure {
    absl::Status status;
    bool at_start = false;
    int count = 0;
  };
  absl::StatusOr<vsphere::cns::VolumeOperationResult> Apply(const vsphere::cns::Operation& op)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::StatusOr<vsphere::cns::VolumeOperationResult> ApplySnapshot(
      const vsphere::cns::Operation& op) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // CnsCreateVolume with backingDiskUrlPath.
  absl::StatusOr<vsphere::cns::VolumeOperationResult> Register(const vsphere::cns::Operation& op)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  std::string NewId() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  mutable absl::Mutex mu_;
  std::map<std::string, Stored> volumes_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::vector<vsphere::cns::Snapshot>> snapshots_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::string> urls_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, Disk> disks_ ABSL_GUARDED_BY(mu_);  // by URL path
  std::set<std::string> unnamed_ ABSL_GUARDED_BY(mu_);      // HideName
  std::map<std::string, Failure> failures_ ABSL_GUARDED_BY(mu_);
  std::set<std::string> vanish_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, absl::StatusOr<vsphere::cns::VolumeOperationResult>> tasks_
      ABSL_GUARDED_BY(mu_);
  std::map<std::string, int> calls_ ABSL_GUARDED_BY(mu_);
  int next_ ABSL_GUARDED_BY(mu_) = 1;
  bool snapshot_api_ ABSL_GUARDED_BY(mu_) = true;
  std::string api_version_ ABSL_GUARDED_BY(mu_) = "7.0.3.0";
};

class FakeVms final : public VmDirectory {
 public:
  explicit FakeVms(const FakeCns& cns) : cns_(cns) {}
  // A VM "vm-<n>" named `name` (the guest hostname too) with `uuid` on `host`; its MOID.
  std::string Add(const std::string& name, const std::string& uuid, const std::string& host);
  void SetUnavailable(absl::Status s) { unavailable_ = std::move(s); }
  // The stream lags: the VMs' disks stay as they are now until ResumeStream().
  void HoldStream();
  void ResumeStream() { held_.reset(); }

  absl::StatusOr<vsphere::VmFacts> FindByUuid(absl::string_view bios_uuid) override;
  absl::StatusOr<std::vector<vsphere::VmFacts>> FindByHostname(absl::string_view hostname) override;
  absl::Status ForEachVm(const std::function<void(const vsphere::VmFacts&)>& fn) override;
  absl::StatusOr<AttachmentMap> Attachments() override;

 private:
  // The VM as the inventory stream shows it: with the disks of the volumes attached to it.
  vsphere::VmFacts WithDisks(vsphere::VmFacts f) const;
  const FakeCns& cns_;
  std::vector<vsphere::VmFacts> vms_;
  absl::Status unavailable_;
  std::optional<std::map<std::string, std::vector<vsphere::VmDisk>>> held_;  // by VM MOID
};

class FakePolicies final : public PolicyCatalog {
 public:
  void Add(const std::string& name, const std::string& id, std::set<std::string> compatible) {
    ids_[name] = id;
    compatible_[id] = std::move(compatible);
  }
  absl::StatusOr<std::string> IdOf(const std::string& name) override;
  absl::StatusOr<std::set<std::string>> Compatible(
      const std::string& profile_id, const std::vector<std::string>& datastores) override;

 private:
  std::map<std::string, std::string> ids_;
  std::map<std::string, std::set<std::string>> compatible_;
};

class FakePlacement final : public PlacementView {
 public:
  InventorySnapshot& view() { return view_; }  // edit before the calls
  void SetUnavailable(absl::Status s) { unavailable_ = std::move(s); }
  int refreshes() const { return refreshes_; }
  int64_t noted_bytes() const { return noted_; }

  absl::StatusOr<SnapshotPtr> Snapshot() const override;
  void NoteChange(const std::string& vcenter, const std::string& url,
                  int64_t delta_bytes) override {
    noted_ += delta_bytes;
  }
  void RequestFullRefresh() override { ++refreshes_; }

 private:
  InventorySnapshot view_;
  absl::Status unavailable_;
  int refreshes_ = 0;
  int64_t noted_ = 0;
};

class FakeNodes final : public NodeVmSource {
 public:
  std::vector<NodeVmRef> nodes;
  std::vector<std::string> unknown_nodes;
  std::map<std::string, int64_t> limits;  // node ID -> its CSINode's allocatable count
  absl::StatusOr<std::vector<NodeVmRef>> List() const override { return nodes; }
  std::vector<std::string> unknown() const override { return unknown_nodes; }
  std::optional<int64_t> VolumeLimit(const std::string& node_id) const override {
    auto it = limits.find(node_id);
    return it == limits.end() ? std::nullopt : std::optional<int64_t>(it->second);
  }
};

class FakePvs final : public PvCounter {
 public:
  size_t count = 0;
  absl::StatusOr<size_t> Count() const override { return count; }
};

// One vCenter "vc1" (cluster-id "cluster-1", user "k8s@vsphere.local") with two hosts of zone
// "zone-a" (host-1, host-2) and one of "zone-b" (host-3); datastores "shared-a" (host-1 and
// host-2, 100 GiB free), "local-1" (host-1 only, 500 GiB free) and "shared-all" (all three, 50
// GiB free); node VMs node-1 on host-1 and node-2 on host-2. Topology is not configured unless
// WithZones() is called.
class FakeMigrations final : public VolumeMigrations {
 public:
  std::map<std::string, InTreeVolume> by_path;  // VMDK path -> its registration
  std::vector<std::string> forgotten;           // volume IDs Forget() was called with
  absl::Status fail_save;                       // Save's answer (then nothing is saved)
  void Add(const std::string& path, const std::string& id, bool protect = false) {
    by_path[path] = {path, id, protect};
  }
  absl::StatusOr<InTreeVolume> Find(const std::string& volume_path) const override {
    auto it = by_path.find(volume_path);
    if (it == by_path.end()) return absl::NotFoundError("not registered");
    return it->second;
  }
  absl::Status Save(const InTreeVolume& v) override {
    if (!fail_save.ok()) return fail_save;
    // As the real one: objects are named by volume ID (one that exists is left as it is); the
    // newest registration of a path is the one found by it.
    for (const auto& [path, known] : by_path) {
      if (known.volume_id == v.volume_id) return absl::OkStatus();
    }
    by_path[v.volume_path] = v;
    return absl::OkStatus();
  }
  absl::Status MarkProtected(const std::string& volume_id) override {
    for (auto& [path, v] : by_path) {
      if (v.volume_id == volume_id) v.protected_from_vm_delete = true;
    }
    return absl::OkStatus();
  }
  absl::Status Forget(const std::string& volume_id) override {
    forgotten.push_back(volume_id);
    std::erase_if(by_path, [&](const auto& e) { return e.second.volume_id == volume_id; });
    return absl::OkStatus();
  }
  absl::StatusOr<std::map<std::string, std::string>> PathsByVolumeId() const override {
    std::map<std::string, std::string> out;
    for (const auto& [path, v] : by_path) out[v.volume_id] = path;
    return out;
  }
};

class FakeControllerCloud final : public ControllerCloud {
 public:
  FakeControllerCloud();
  // [Labels] zone = "k8s-zone", region = "k8s-region" (the hosts' segments are always set).
  void WithZones();
  static constexpr char kVCenter[] = "vc1";
  static constexpr char kClusterId[] = "cluster-1";

  FakeCns cns;
  FakeVms vms{cns};
  FakePolicies policies;
  FakePlacement placement;
  FakeNodes node_vms;
  FakePvs driver_pvs;
  FakeMigrations volume_migrations;
  cloud::Config cfg;
  TopologyConfig topo;
  bool kube = true;  // false: no Kubernetes API (nodes() and pvs() are null)
  std::string node1_uuid, node2_uuid, node1_moid, node2_moid;

  const cloud::Config& config() const override { return cfg; }
  const TopologyConfig& topology() const override { return topo; }
  std::vector<VCenterEndpoint>& vcenters() override { return endpoints_; }
  PlacementView& datastores() override { return placement; }
  NodeVmSource* nodes() override { return kube ? &node_vms : nullptr; }
  PvCounter* pvs() override { return kube ? &driver_pvs : nullptr; }
  OperationStore& operations() override { return *operations_; }
  VolumeMigrations* migrations() override { return kube ? &volume_migrations : nullptr; }
  // Registers disks of host "vc1.example.com", datacenter "/dc1" (FakeCns::AddDisk's URL).
  InTreeRegistrar* registrar() override { return kube ? &in_tree_registrar : nullptr; }
  InTreeRegistrar in_tree_registrar{cns, volume_migrations, RegistrarOptions()};

 private:
  static InTreeRegistrarOptions RegistrarOptions();
  std::vector<VCenterEndpoint> endpoints_;
  std::unique_ptr<OperationStore> operations_;
};

}  // namespace ccm::csi::testing
