#pragma once
// The CSI Controller service for vSphere block volumes (CNS First Class Disks), thin over
// src/csi/core (every decision), the datastore inventory and the CNS client.
//
// Contracts per RPC (CSI spec v1.9 error codes; a vCenter fault keeps its name and message; an
// unreachable vCenter or a cache not loaded yet is Unavailable, never NotFound):
//  - CreateVolume: idempotent on the name through a CNS query by name (and cluster-id): same name
//    and a size within the requested range returns that volume; otherwise AlreadyExists.
//    Placement: ChooseDatastores over the in-memory inventory, each choice tried in order (CNS
//    may still refuse one); a transport error ends the attempt (the volume may exist: the retry
//    finds it by name). volume_context and accessible_topology as the reference returns them.
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
//  - Snapshots, ControllerGetVolume, ControllerModifyVolume: Unimplemented (not announced).
// Concurrency: one operation per volume (VolumeLocks: Aborted for a concurrent one), any number
// on different volumes (gRPC's thread pool).

#include <memory>
#include <string>

#include "csi/controller/controller_backend.h"
#include "csi/controller/volume_locks.h"
#include "csi/core/capabilities.h"
#include "csi/proto/csi.grpc.pb.h"
#include "vsphere/cns/types.h"

namespace ccm::csi {

class ControllerService final : public ::csi::v1::Controller::Service {
 public:
  explicit ControllerService(std::shared_ptr<ControllerBackend> backend);

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

 private:
  // A volume found in CNS, and the vCenter holding it.
  struct Located {
    VCenterEndpoint* vc = nullptr;
    std::string cns_id;
    vsphere::cns::Volume volume;  // filled by FindVolume only
  };
  absl::Status DoCreate(const ::csi::v1::CreateVolumeRequest& req,
                        ::csi::v1::CreateVolumeResponse* resp);
  absl::Status DoDelete(const ::csi::v1::DeleteVolumeRequest& req);
  absl::Status DoPublish(const ::csi::v1::ControllerPublishVolumeRequest& req,
                         ::csi::v1::ControllerPublishVolumeResponse* resp);
  absl::Status DoUnpublish(const ::csi::v1::ControllerUnpublishVolumeRequest& req);
  absl::Status DoValidate(const ::csi::v1::ValidateVolumeCapabilitiesRequest& req,
                          ::csi::v1::ValidateVolumeCapabilitiesResponse* resp);
  absl::Status DoList(const ::csi::v1::ListVolumesRequest& req,
                      ::csi::v1::ListVolumesResponse* resp);
  absl::Status DoCapacity(const ::csi::v1::GetCapacityRequest& req,
                          ::csi::v1::GetCapacityResponse* resp);
  absl::Status DoExpand(const ::csi::v1::ControllerExpandVolumeRequest& req,
                        ::csi::v1::ControllerExpandVolumeResponse* resp);

  VCenterEndpoint* Endpoint(const std::string& label);
  std::vector<std::string> Labels() const;
  std::string VolumeId(const std::string& cns_id, const std::string& label) const;
  // The vCenter of a volume ID without asking CNS when the ID (or a single vCenter) says it;
  // otherwise as FindVolume.
  absl::StatusOr<Located> Locate(const std::string& volume_id);
  // Asks CNS: NotFound when no vCenter has it (DecideVolumeVCenter's rules).
  absl::StatusOr<Located> FindVolume(const std::string& volume_id);
  // The VM of a node ID in `vc`'s VM cache.
  absl::StatusOr<vsphere::Moref> FindNodeVm(VCenterEndpoint& vc, const std::string& node_id);
  // The CNS container cluster this driver files volumes under.
  vsphere::cns::ContainerCluster Cluster(const VCenterEndpoint& vc) const;
  std::vector<std::string> ClusterIds() const;

  std::shared_ptr<ControllerBackend> backend_;
  const CapabilityOptions cap_options_;
  VolumeLocks locks_;
};

}  // namespace ccm::csi
