#pragma once
// The CSI Controller service for vSphere block volumes (CNS First Class Disks), thin over
// src/csi/core (every decision), the datastore inventory and the CNS client.
//
// Contracts per RPC (CSI spec v1.9 error codes; a vCenter fault keeps its name and message; an
// unreachable vCenter or a cache not loaded yet is Unavailable, never NotFound):
//  - CreateVolume: idempotent on the name through a CNS query by name (and cluster-id): the same
//    name with a compatible size, storage policy, datastore and accessibility returns that volume;
//    otherwise AlreadyExists. Placement (placement.h): the datastores shared by every node VM's
//    host (no requirements) or by every host of the requested segments, narrowed by datastoreurl
//    (a datastore or a datastore cluster) and by the storage policy's SPBM-compatible
//    datastores, all from memory (datastore inventory, VM caches, Node informer, policy cache);
//    each choice tried in order (CNS may still refuse one), the policy's profile id in the CNS
//    create spec; a transport error ends the attempt (the volume may exist: the retry finds it by
//    name). volume_context and accessible_topology as the reference returns them.
//  - DeleteVolume: unknown ID is success; attached is FailedPrecondition (no silent detach).
//  - ControllerPublishVolume: node ID (VM UUID, or a node name) -> VM from the vCenter's VM
//    cache; CNS attach; the publish context {type, diskUUID}; attached to the same VM already is
//    success with the same context; attached elsewhere is FailedPrecondition.
//  - ControllerUnpublishVolume: unknown volume or node is success; no node ID detaches from
//    whichever VM holds the disk.
//  - ListVolumes: every volume of the cluster-id, sorted by ID, offset tokens (paging.h), with
//    published_node_ids (VM UUIDs, the node IDs NodeGetInfo gives).
//  - GetCapacity: per topology segment from the inventory (CapacityForSegment).
//  - ControllerExpandVolume: CNS extend, never shrinking; node expansion for filesystems.
//  - CreateSnapshot / DeleteSnapshot / ListSnapshots: CNS snapshots (controller_snapshot.cc:
//    IDs, limits and idempotency as the reference); CreateVolume from a snapshot
//    (controller_restore.cc); DeleteVolume and ControllerExpandVolume of a volume with snapshots
//    are FailedPrecondition, as the reference decides.
//  - ControllerGetVolume, ControllerModifyVolume, volume clones: Unimplemented (not announced).
// Concurrency: one operation per volume (VolumeLocks: Aborted for a concurrent one), any number
// on different volumes (gRPC's thread pool).

#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "csi/controller/controller_cloud.h"
#include "csi/core/capabilities.h"
#include "csi/core/parameters.h"
#include "csi/core/placement.h"
#include "csi/core/snapshot.h"
#include "csi/proto/csi.grpc.pb.h"
#include "csi/server/volume_locks.h"
#include "vsphere/cns/types.h"

namespace ccm::csi {

class ControllerService final : public ::csi::v1::Controller::Service {
 public:
  explicit ControllerService(std::shared_ptr<ControllerCloud> cloud);

  using Ctx = grpc::ServerContext;
  grpc::Status CreateVolume(Ctx*, const ::csi::v1::CreateVolumeRequest* req,
                            ::csi::v1::CreateVolumeResponse* resp) override;
  grpc::Status DeleteVolume(Ctx*, const ::csi::v1::DeleteVolumeRequest* req,
                            ::csi::v1::DeleteVolumeResponse* resp) override;
  grpc::Status ControllerPublishVolume(Ctx*, const ::csi::v1::ControllerPublishVolumeRequest* req,
                                       ::csi::v1::ControllerPublishVolumeResponse* resp) override;
  grpc::Status ControllerUnpublishVolume(
      Ctx*, const ::csi::v1::ControllerUnpublishVolumeRequest* req,
      ::csi::v1::ControllerUnpublishVolumeResponse* resp) override;
  grpc::Status ValidateVolumeCapabilities(
      Ctx*, const ::csi::v1::ValidateVolumeCapabilitiesRequest* req,
      ::csi::v1::ValidateVolumeCapabilitiesResponse* resp) override;
  grpc::Status ListVolumes(Ctx*, const ::csi::v1::ListVolumesRequest* req,
                           ::csi::v1::ListVolumesResponse* resp) override;
  grpc::Status GetCapacity(Ctx*, const ::csi::v1::GetCapacityRequest* req,
                           ::csi::v1::GetCapacityResponse* resp) override;
  grpc::Status ControllerGetCapabilities(
      Ctx*, const ::csi::v1::ControllerGetCapabilitiesRequest* req,
      ::csi::v1::ControllerGetCapabilitiesResponse* resp) override;
  grpc::Status ControllerExpandVolume(Ctx*, const ::csi::v1::ControllerExpandVolumeRequest* req,
                                      ::csi::v1::ControllerExpandVolumeResponse* resp) override;
  grpc::Status CreateSnapshot(Ctx*, const ::csi::v1::CreateSnapshotRequest* req,
                              ::csi::v1::CreateSnapshotResponse* resp) override;
  grpc::Status DeleteSnapshot(Ctx*, const ::csi::v1::DeleteSnapshotRequest* req,
                              ::csi::v1::DeleteSnapshotResponse* resp) override;
  grpc::Status ListSnapshots(Ctx*, const ::csi::v1::ListSnapshotsRequest* req,
                             ::csi::v1::ListSnapshotsResponse* resp) override;

  // CreateVolume's decisions without creating anything (diagnose): the request's checks, then
  // placement as CreateVolume would run it now (datastore inventory, node VMs, storage policy).
  // The names of the datastores it would try, in order; CreateVolume's error otherwise.
  absl::StatusOr<std::vector<std::string>> PlanCreate(const ::csi::v1::CreateVolumeRequest& req);

 private:
  // A volume found in CNS, and the vCenter holding it.
  struct Located {
    VCenterEndpoint* vc = nullptr;
    std::string cns_id;
    vsphere::cns::Volume volume;  // filled by FindVolume only
  };
  absl::Status ProtectInTree(const std::string& handle, const Located& loc);
  // In-tree volumes whose CNS volume CNS lost (controller_migration.cc): CheckInTree asks CNS
  // for the volume of a mapping once per process and registers a lost one again; RetryInTree
  // runs `op`, and when CNS answers NotFound for an in-tree volume asked for earlier, asks again
  // and runs it once more on the volume found (or answers NotFound naming the path).
  absl::StatusOr<std::string> CheckInTree(const std::string& handle, VCenterEndpoint& vc,
                                          const std::string& id);
  absl::Status RetryInTree(const std::string& handle, Located& loc,
                           const std::function<absl::Status(const Located&)>& op);
  // Publish's attach of a located volume: the disk's UUID.
  absl::StatusOr<std::string> AttachLocated(const ::csi::v1::ControllerPublishVolumeRequest& req,
                                            const Located& loc);
  // The UUID of the volume's disk when it is on the VM: the VM stream shows it there and no
  // detach of ours since may be missing from the stream, or our own attach ended moments ago and
  // the stream does not show it yet (a publish answered without a CNS call); else nullopt.
  std::optional<std::string> AttachedInStream(const VCenterEndpoint& vc, const vsphere::VmFacts& vm,
                                              const std::string& cns_id);
  // An attach (with the disk's UUID) or a detach of ours ended: the stream may lag behind it.
  void NoteChange(const VCenterEndpoint& vc, const vsphere::Moref& vm, const std::string& cns_id,
                  bool attached, const std::string& disk_uuid);
  // CreateVolume in named steps (controller_create.cc).
  struct CreatePlan {
    std::string name;
    CapacityRange range;
    int64_t size_mib = 0;
    VolumeParameters params;
    std::optional<TopologyRequirement> requirement;
    // vCenters that could not be asked for the name (FindExisting): not placed on.
    std::vector<std::string> unreachable;
    std::string source_snapshot_id;  // volume_content_source.snapshot: a restore
    bool file = false;               // a multi-node mode: a file volume (vSAN file share)
    // The record written before anything was sent (RecordFirst): the name was never created, so
    // CNS is not asked for it, and the create's RunTracked starts from it without reading it.
    std::optional<OperationRecord> record;
  };
  struct Placed {
    PlacementView::SnapshotPtr view;
    std::vector<PlacementChoice> choices;
    std::map<std::string, std::string> policy_ids;  // vCenter label -> profile id
  };
  absl::Status DoCreate(const ::csi::v1::CreateVolumeRequest& req,
                        ::csi::v1::CreateVolumeResponse* resp);
  absl::StatusOr<CreatePlan> ParseCreate(const ::csi::v1::CreateVolumeRequest& req) const;
  absl::Status FindOrCreate(CreatePlan& plan, ::csi::v1::CreateVolumeResponse* resp);
  // Migrated in-tree StorageClasses (controller_migration.cc).
  absl::Status ResolveMigrationDatastore(VolumeParameters& params) const;
  absl::Status AddInTreePath(::csi::v1::CreateVolumeResponse* resp);
  // The volume CNS already has under the plan's name: true (and `resp` filled) when it matches
  // the plan, AlreadyExists when it does not, false when there is none.
  // A vCenter that cannot be asked is skipped (and left out of placement) unless the operation
  // records say the name was created there: one vCenter down affects its own volumes only.
  absl::StatusOr<bool> FindExisting(CreatePlan& plan, ::csi::v1::CreateVolumeResponse* resp);
  // AlreadyExists naming what differs; `accessible`: the existing volume's datastore's segments.
  // A volume CNS has under the plan's name: the answer if it is compatible (CheckExisting).
  absl::Status Adopt(const CreatePlan& plan, const VCenterEndpoint& vc,
                     const vsphere::cns::Volume& v, ::csi::v1::CreateVolumeResponse* resp);
  // CNS transactions (controller_transaction.cc): the volume ID a create sends to `vc` ("" before
  // vCenter 9.1 or for a name without a UUID), and the answer when CNS says it has that ID.
  std::string TransactionIdFor(VCenterEndpoint& vc, const std::string& name);
  absl::Status AdoptCreated(const CreatePlan& plan, VCenterEndpoint& vc, const std::string& cns_id,
                            ::csi::v1::CreateVolumeResponse* resp);
  absl::Status CheckExisting(const CreatePlan& plan, const VCenterEndpoint& vc,
                             const vsphere::cns::Volume& v, const DatastoreCandidate* datastore,
                             const std::vector<Segments>& accessible) const;
  // A create an earlier attempt started and recorded (a timeout, a restart): waits for its task.
  absl::StatusOr<bool> ResumeCreate(const CreatePlan& plan, ::csi::v1::CreateVolumeResponse* resp);
  absl::StatusOr<Placed> Place(const CreatePlan& plan);
  absl::StatusOr<std::vector<NodeHost>> NodeHosts(const InventorySnapshot& view);
  // The storage policy's verdict per datastore of the view; fills placed.policy_ids.
  absl::StatusOr<std::vector<bool>> PolicyVerdicts(const std::string& policy,
                                                   const InventorySnapshot& view, Placed& placed);
  absl::Status CreateOnChoices(const CreatePlan& plan, const Placed& placed,
                               ::csi::v1::CreateVolumeResponse* resp);
  // File volumes (controller_file.cc): a vSAN file share on the datastores ChooseFileShare-
  // Datastores leaves; the publish context with its NFSv4.1 access point.
  struct FilePlaced {
    Placed placed;               // the view and the policy's profile ids
    std::string vcenter;         // where the share goes
    std::vector<size_t> chosen;  // its candidate datastores in the view (CNS picks one)
  };
  absl::StatusOr<FilePlaced> PlaceFile(const CreatePlan& plan);
  absl::Status CreateFileVolume(const CreatePlan& plan, ::csi::v1::CreateVolumeResponse* resp);
  absl::StatusOr<std::map<std::string, std::vector<FileServiceCluster>>> FileServiceClusters(
      const CreatePlan& plan);
  absl::Status PublishFileVolume(const ::csi::v1::ControllerPublishVolumeRequest& req,
                                 ::csi::v1::ControllerPublishVolumeResponse* resp);
  // A volume from a snapshot (controller_restore.cc): CNS makes it on the snapshot's datastore.
  absl::Status CreateFromSnapshot(const CreatePlan& plan, ::csi::v1::CreateVolumeResponse* resp);
  // The snapshot's volume, after the checks above (NotFound, OutOfRange, InvalidArgument).
  absl::StatusOr<Located> RestoreSource(const CreatePlan& plan, const SnapshotRef& ref);
  static void SetSnapshotSource(const std::string& snapshot_id,
                                ::csi::v1::CreateVolumeResponse* resp);
  absl::Status DoDelete(const ::csi::v1::DeleteVolumeRequest& req);
  absl::Status DeleteLocated(const ::csi::v1::DeleteVolumeRequest& req);  // its lock held
  absl::Status DoPublish(const ::csi::v1::ControllerPublishVolumeRequest& req,
                         ::csi::v1::ControllerPublishVolumeResponse* resp);
  absl::Status DoUnpublish(const ::csi::v1::ControllerUnpublishVolumeRequest& req);
  absl::Status DoValidate(const ::csi::v1::ValidateVolumeCapabilitiesRequest& req,
                          ::csi::v1::ValidateVolumeCapabilitiesResponse* resp);
  // ListVolumes (controller_list.cc): a listing is read from vCenter once, when a CO starts one
  // (no starting_token), and its pages are served from that snapshot for `kListingTtl`.
  struct ListedVolume {
    std::string id;
    int64_t capacity_mb = 0;
    std::vector<std::string> published;  // VM UUIDs
  };
  using Listing = std::shared_ptr<const std::vector<ListedVolume>>;
  absl::Status DoList(const ::csi::v1::ListVolumesRequest& req,
                      ::csi::v1::ListVolumesResponse* resp);
  absl::StatusOr<Listing> ReadListing();
  absl::Status AddFilePublications(std::vector<ListedVolume>& listing);
  void ReleaseListing(Listing& served);
  absl::Status CheckListingThreshold(size_t cns_volumes) const;
  absl::Status DoCapacity(const ::csi::v1::GetCapacityRequest& req,
                          ::csi::v1::GetCapacityResponse* resp);
  absl::Status DoExpand(const ::csi::v1::ControllerExpandVolumeRequest& req,
                        ::csi::v1::ControllerExpandVolumeResponse* resp);

  // Snapshots (controller_snapshot.cc).
  absl::Status DoCreateSnapshot(const ::csi::v1::CreateSnapshotRequest& req,
                                ::csi::v1::CreateSnapshotResponse* resp);
  absl::Status DoDeleteSnapshot(const ::csi::v1::DeleteSnapshotRequest& req);
  absl::Status DoListSnapshots(const ::csi::v1::ListSnapshotsRequest& req,
                               ::csi::v1::ListSnapshotsResponse* resp);
  absl::Status ListVolumeSnapshots(const Located& loc, const std::string& volume_id,
                                   const std::string& snapshot_id,
                                   const ::csi::v1::ListSnapshotsRequest& req,
                                   ::csi::v1::ListSnapshotsResponse* resp);
  absl::Status ListAllSnapshots(const ::csi::v1::ListSnapshotsRequest& req,
                                ::csi::v1::ListSnapshotsResponse* resp);
  // FailedPrecondition naming the snapshots when the volume has any (DeleteVolume, Expand).
  // Whether the snapshot capabilities are announced: some vCenter has (or may have) the API.
  bool AnyVcenterMayHaveSnapshots();
  absl::Status CheckNoSnapshots(const Located& loc, const std::string& volume_id,
                                absl::string_view action);
  // The snapshot names this process made or found, with their source volume: AlreadyExists for
  // a name reused with another source while its snapshot exists (the last 10,000 names are
  // remembered; a deleted snapshot's name is forgotten).
  absl::Status CheckSnapshotName(const std::string& name, const std::string& volume_id);
  void RememberSnapshotName(const std::string& name, const std::string& volume_id,
                            const std::string& snapshot_id);
  void ForgetSnapshotName(const std::string& snapshot_id);

  // Runs `op` on `vc` at most once across retries and restarts (operation_store.h): waits for
  // the task an earlier attempt recorded under `name` on this vCenter, else starts and records.
  // `known`: the record as it stands (not read again), or null.
  absl::StatusOr<vsphere::cns::VolumeOperationResult> RunTracked(
      const std::string& name, VCenterEndpoint& vc, const vsphere::cns::Operation& op,
      const OperationRecord* known = nullptr);
  // CreateVolume of a name with no record, on one vCenter: writes an "InProgress" record without
  // a task before anything is sent, and keeps it in the plan (true). False when the name has a
  // record (an earlier attempt), when there are several vCenters (asking each for the name also
  // finds the ones that do not answer) or when the record cannot be read or written.
  bool RecordFirst(CreatePlan& plan);

  // A VMDK path (an in-tree volume under CSI migration) as the CNS volume ID it was registered
  // as (VolumeMigrations); FailedPrecondition while it is not registered, never NotFound; any
  // other ID as it is. Locate and FindVolume resolve their handle through it.
  absl::StatusOr<std::string> ResolveHandle(const std::string& volume_id);
  // After a DeleteVolume of a VMDK path: its CnsVSphereVolumeMigration goes too.
  void ForgetVolumeInfo(const std::string& cns_id);
  absl::Status ForgetInTree(const std::string& handle);
  VCenterEndpoint* Endpoint(const std::string& label);
  std::vector<std::string> Labels() const;
  std::string VolumeId(const std::string& cns_id, const std::string& label) const;
  // VolumeId of a volume just created (or found by name): with several vCenters its vCenter is
  // recorded first (a CnsVolumeInfo, as the reference), so the bare ID can be found again.
  absl::StatusOr<std::string> NewVolumeId(const std::string& cns_id, const std::string& label);
  // The vCenter of a volume ID without asking CNS when the ID (or a single vCenter) says it;
  // otherwise as FindVolume.
  absl::StatusOr<Located> Locate(const std::string& volume_id);
  // Asks CNS: NotFound when no vCenter has it (DecideVolumeVCenter's rules).
  absl::StatusOr<Located> FindVolume(const std::string& volume_id);
  // The VM of a node ID in `vc`'s VM cache.
  absl::StatusOr<vsphere::Moref> FindNodeVm(VCenterEndpoint& vc, const std::string& node_id);
  absl::StatusOr<vsphere::VmFacts> FindNodeVmFacts(VCenterEndpoint& vc, const std::string& node_id);
  // FailedPrecondition when the volume is attached and its vCenter predates online expansion.
  absl::Status CheckOnlineExtend(const Located& loc, const std::string& volume);
  // RESOURCE_EXHAUSTED when the node VM holds as many of this driver's disks as its CSINode
  // says it takes (max_volumes_per_node), unless `cns_id` is one of them already.
  absl::Status CheckVolumeLimit(const std::string& node_id, const vsphere::VmFacts& vm,
                                const std::string& cns_id) const;
  // The CNS container cluster this driver files volumes under.
  vsphere::cns::ContainerCluster Cluster(const VCenterEndpoint& vc) const;
  std::vector<std::string> ClusterIds() const;

  std::shared_ptr<ControllerCloud> cloud_;
  const CapabilityOptions cap_options_;
  VolumeLocks locks_;
  absl::Mutex listing_mu_;
  Listing listing_ ABSL_GUARDED_BY(listing_mu_);
  absl::Time listing_at_ ABSL_GUARDED_BY(listing_mu_);
  absl::Mutex names_mu_;
  // name -> (source volume ID, CSI snapshot ID)
  std::map<std::string, std::pair<std::string, std::string>> snapshot_sources_
      ABSL_GUARDED_BY(names_mu_);
  std::deque<std::string> snapshot_names_ ABSL_GUARDED_BY(names_mu_);  // oldest first
  // VMDK paths this controller deleted (and their CnsVSphereVolumeMigration objects).
  std::set<std::string> deleted_in_tree_ ABSL_GUARDED_BY(names_mu_);
  // CNS IDs of in-tree volumes CNS was found to know (CheckInTree), bounded.
  std::set<std::string> verified_in_tree_ ABSL_GUARDED_BY(names_mu_);
  // Our attaches and detaches the VM stream may not show yet, by "<vCenter>/<VM MOID>/<CNS ID>"
  // (dropped once the stream shows them, or after a while): a publish is answered from the
  // stream only when it cannot be behind one of them.
  struct RecentChange {
    bool attached = false;
    std::string disk_uuid;  // attached: the disk's UUID
    absl::Time at;
  };
  std::map<std::string, RecentChange> recent_ ABSL_GUARDED_BY(names_mu_);
  // Volume IDs this controller deleted, with when (kept a few minutes): the provisioner's
  // DeleteVolume sent again for one is success without a vCenter request.
  std::map<std::string, absl::Time> deleted_ ABSL_GUARDED_BY(names_mu_);
};

}  // namespace ccm::csi
