#include "csi/controller/controller_service.h"

#include <algorithm>
#include <map>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/logging.h"
#include "common/status_macros.h"
#include "csi/controller/attachments.h"
#include "csi/controller/fault_type.h"
#include "csi/core/capacity.h"
#include "csi/core/constants.h"
#include "csi/core/file_volume.h"
#include "csi/core/paging.h"
#include "csi/core/parameters.h"
#include "csi/core/placement.h"
#include "csi/core/publish_context.h"
#include "csi/core/volume_id.h"
#include "csi/server/grpc_status.h"
#include "csi/server/proto_convert.h"

namespace ccm::csi {
namespace {

namespace cns = vsphere::cns;
using Cap = ::csi::v1::ControllerServiceCapability::RPC;

}  // namespace

ControllerService::ControllerService(std::shared_ptr<ControllerCloud> cloud)
    : cloud_(std::move(cloud)) {}

VCenterEndpoint* ControllerService::Endpoint(const std::string& label) {
  for (VCenterEndpoint& vc : cloud_->vcenters()) {
    if (absl::EqualsIgnoreCase(vc.label, label)) return &vc;
  }
  return nullptr;
}

std::vector<std::string> ControllerService::Labels() const {
  std::vector<std::string> out;
  for (const VCenterEndpoint& vc : cloud_->vcenters()) out.push_back(vc.label);
  return out;
}

std::string ControllerService::VolumeId(const std::string& cns_id, const std::string& label) const {
  absl::StatusOr<std::string> id = FormatVolumeId(cns_id, label, cloud_->vcenters().size());
  return id.ok() ? *id : cns_id;
}

absl::StatusOr<std::string> ControllerService::NewVolumeId(const std::string& cns_id,
                                                           const std::string& label) {
  if (VolumeInfos* infos = cloud_->volume_infos(); infos != nullptr) {
    CCM_RETURN_IF_ERROR(infos->Record(cns_id, label));
  }
  return VolumeId(cns_id, label);
}

cns::ContainerCluster ControllerService::Cluster(const VCenterEndpoint& vc) const {
  cns::ContainerCluster c;
  c.cluster_id = cloud_->config().global.cluster_id;
  c.vsphere_user = vc.user;
  c.cluster_flavor = "VANILLA";
  c.cluster_distribution = cloud_->config().global.cluster_distribution;
  return c;
}

std::vector<std::string> ControllerService::ClusterIds() const {
  const std::string& id = cloud_->config().global.cluster_id;
  if (id.empty()) return {};
  return {id};
}

absl::StatusOr<std::string> ControllerService::ResolveHandle(const std::string& volume_id) {
  if (!IsInTreeVolumePath(volume_id)) return volume_id;
  VolumeMigrations* migrations = cloud_->migrations();
  if (migrations == nullptr) {
    return absl::FailedPreconditionError(absl::StrCat(
        "in-tree volume ", volume_id,
        ": the controller has no Kubernetes API to read the CnsVSphereVolumeMigration objects"));
  }
  absl::StatusOr<std::string> id = migrations->VolumeIdOf(volume_id);
  if (absl::IsNotFound(id.status())) {
    // Never NotFound: DeleteVolume would report success while the disk stays.
    return absl::FailedPreconditionError(absl::StrCat(
        "in-tree volume ", volume_id,
        " is not registered with CNS yet (no CnsVSphereVolumeMigration names it); the metadata "
        "syncer registers the volumes of migrated PersistentVolumes: retry once it has"));
  }
  return id;
}

absl::StatusOr<ControllerService::Located> ControllerService::Locate(const std::string& handle) {
  CCM_ASSIGN_OR_RETURN(const std::string volume_id, ResolveHandle(handle));
  CCM_ASSIGN_OR_RETURN(VolumeRef ref, ParseVolumeId(volume_id));
  CCM_ASSIGN_OR_RETURN(std::vector<std::string> ask, VCentersToAsk(ref, Labels()));
  if (ask.size() == 1) {
    VCenterEndpoint* vc = Endpoint(ask.front());
    if (IsInTreeVolumePath(handle)) {
      CCM_ASSIGN_OR_RETURN(ref.cns_id, CheckInTree(handle, *vc, ref.cns_id));
    }
    return Located{vc, ref.cns_id, {}};
  }
  // A bare ID with several vCenters: its CnsVolumeInfo names the vCenter; without one (a volume
  // made before the record existed) every vCenter is asked.
  if (VolumeInfos* infos = cloud_->volume_infos(); infos != nullptr) {
    absl::StatusOr<std::string> vc = infos->VCenterOf(ref.cns_id);
    if (vc.ok()) {
      if (VCenterEndpoint* e = Endpoint(*vc); e != nullptr) return Located{e, ref.cns_id, {}};
      return absl::FailedPreconditionError(
          absl::StrCat("volume ", volume_id, ": its CnsVolumeInfo names vCenter ", *vc,
                       ", which csi-vsphere.conf does not configure (configured: ",
                       absl::StrJoin(Labels(), ", "), ")"));
    }
    // No record, or the records not read yet: ask them all (the answer is the same).
  }
  return FindVolume(volume_id);
}

absl::StatusOr<ControllerService::Located> ControllerService::FindVolume(
    const std::string& handle) {
  std::string volume_id;
  if (IsInTreeVolumePath(handle) && cloud_->registrar() != nullptr) {
    // One vCenter: Locate checks the in-tree volume (registered again if CNS lost it).
    CCM_ASSIGN_OR_RETURN(Located checked, Locate(handle));
    volume_id = checked.cns_id;
  } else {
    CCM_ASSIGN_OR_RETURN(volume_id, ResolveHandle(handle));
  }
  CCM_ASSIGN_OR_RETURN(VolumeRef ref, ParseVolumeId(volume_id));
  CCM_ASSIGN_OR_RETURN(std::vector<std::string> ask, VCentersToAsk(ref, Labels()));
  std::vector<VCenterAnswer> answers;
  std::map<std::string, cns::Volume> found;
  for (const std::string& label : ask) {
    cns::QueryFilter filter;
    filter.volume_ids = {ref.cns_id};
    absl::StatusOr<cns::QueryResult> r = Endpoint(label)->cns->QueryVolume(filter);
    VCenterAnswer a{label, r.status(), false};
    if (r.ok() && !r->volumes.empty()) {
      a.found = true;
      found[label] = r->volumes.front();
    }
    answers.push_back(std::move(a));
  }
  CCM_ASSIGN_OR_RETURN(std::string label, DecideVolumeVCenter(volume_id, answers));
  return Located{Endpoint(label), ref.cns_id, found[label]};
}

// ---- DeleteVolume ----

grpc::Status ControllerService::DeleteVolume(Ctx* ctx, const ::csi::v1::DeleteVolumeRequest* req,
                                             ::csi::v1::DeleteVolumeResponse*) {
  MarkFile(ctx, IsFileVolumeId(req->volume_id()));
  return Serve(ctx, [&] { return DoDelete(*req); });
}

namespace {
constexpr absl::Duration kDeletedKept = absl::Minutes(10);
}  // namespace

absl::Status ControllerService::DoDelete(const ::csi::v1::DeleteVolumeRequest& req) {
  if (req.volume_id().empty()) return absl::InvalidArgumentError("volume_id is required");
  CCM_ASSIGN_OR_RETURN(VolumeLocks::Guard guard, locks_.TryLock(req.volume_id()));
  {
    absl::MutexLock l(&names_mu_);
    // Deleted by this controller (an in-tree one's object gone with it): a DeleteVolume sent
    // again (the provisioner does, once its PV update conflicted) succeeds at once.
    if (deleted_in_tree_.contains(req.volume_id())) return absl::OkStatus();
    auto it = deleted_.find(req.volume_id());
    if (it != deleted_.end() && absl::Now() - it->second < kDeletedKept) return absl::OkStatus();
  }
  absl::Status done = DeleteLocated(req);
  if (done.ok()) {
    const absl::Time now = absl::Now();
    absl::MutexLock l(&names_mu_);
    std::erase_if(deleted_, [&](const auto& e) { return now - e.second >= kDeletedKept; });
    deleted_[req.volume_id()] = now;
  }
  return done;
}

absl::Status ControllerService::DeleteLocated(const ::csi::v1::DeleteVolumeRequest& req) {
  absl::StatusOr<Located> loc = Locate(req.volume_id());
  if (absl::IsNotFound(loc.status())) return ForgetInTree(req.volume_id());
  if (!loc.ok()) return loc.status();
  if (!IsFileVolumeId(loc->cns_id)) {  // a file share has no snapshots
    CCM_RETURN_IF_ERROR(CheckNoSnapshots(*loc, req.volume_id(), "delete"));
  }
  absl::Status s = RetryInTree(req.volume_id(), *loc, [&](const Located& l) {
    return RunTracked(absl::StrCat("delete-", req.volume_id()), *l.vc,
                      cns::DeleteOp(l.cns_id, /*delete_disk=*/true))
        .status();
  });
  if (absl::IsNotFound(s)) {  // gone: the spec's success
    ForgetVolumeInfo(loc->cns_id);
    return ForgetInTree(req.volume_id());
  }
  if (absl::IsFailedPrecondition(s)) {
    return absl::FailedPreconditionError(
        absl::StrCat("volume ", req.volume_id(),
                     " is still attached to a node (unpublish it first): ", s.message()));
  }
  if (!s.ok()) return Annotate(s, absl::StrCat("delete volume ", req.volume_id()));
  cloud_->datastores().NoteChange(loc->vc->label, "", 0);  // space freed: read it soon
  LOG_INFO("deleted volume {}", req.volume_id());
  ForgetVolumeInfo(loc->cns_id);
  return ForgetInTree(req.volume_id());
}

void ControllerService::ForgetVolumeInfo(const std::string& cns_id) {
  VolumeInfos* infos = cloud_->volume_infos();
  if (infos == nullptr) return;
  // The volume is gone either way; a record left behind names a vCenter for an ID CNS will not
  // give again, and is harmless.
  if (absl::Status s = infos->Forget(cns_id); !s.ok()) LOG_WARN("{}", s.message());
}

absl::Status ControllerService::ForgetInTree(const std::string& handle) {
  if (!IsInTreeVolumePath(handle) || cloud_->migrations() == nullptr) return absl::OkStatus();
  absl::StatusOr<std::string> id = cloud_->migrations()->VolumeIdOf(handle);
  if (!id.ok()) return absl::OkStatus();  // nothing names it (any more)
  absl::Status s = cloud_->migrations()->Forget(*id);
  if (!s.ok()) {
    return Annotate(s, absl::StrCat("delete volume ", handle, ": the CnsVSphereVolumeMigration ",
                                    *id, " stays"));
  }
  LOG_INFO("in-tree volume {} ({}): CnsVSphereVolumeMigration deleted", handle, *id);
  absl::MutexLock l(&names_mu_);
  if (deleted_in_tree_.size() >= 10000) deleted_in_tree_.clear();  // bounded; rarely reached
  deleted_in_tree_.insert(handle);
  return absl::OkStatus();
}

// ---- ValidateVolumeCapabilities ----

grpc::Status ControllerService::ValidateVolumeCapabilities(
    Ctx* ctx, const ::csi::v1::ValidateVolumeCapabilitiesRequest* req,
    ::csi::v1::ValidateVolumeCapabilitiesResponse* resp) {
  return Serve(ctx, [&] { return DoValidate(*req, resp); });
}

absl::Status ControllerService::DoValidate(const ::csi::v1::ValidateVolumeCapabilitiesRequest& req,
                                           ::csi::v1::ValidateVolumeCapabilitiesResponse* resp) {
  if (req.volume_id().empty()) return absl::InvalidArgumentError("volume_id is required");
  if (req.volume_capabilities().empty()) {
    return absl::InvalidArgumentError("volume_capabilities is required");
  }
  CCM_ASSIGN_OR_RETURN(Located loc, FindVolume(req.volume_id()));
  const std::vector<VolumeCapability> caps = FromProto(req.volume_capabilities());
  Confirmation c = ConfirmCapabilities(caps, cap_options_);
  const bool file = loc.volume.volume_type == cns::kVolumeTypeFile;
  if (c.confirmed && file != IsFileVolumeRequest(caps)) {
    c = {false, file ? "the volume is a file volume (vSAN file share): it serves the multi-node "
                       "access modes only"
                     : "the volume is a block volume: it attaches to one node at a time and "
                       "serves no multi-node access mode"};
  }
  if (c.confirmed) {
    absl::StatusOr<VolumeParameters> p = ParseParameters(FromProto(req.parameters()));
    if (!p.ok()) c = {false, std::string(p.status().message())};
  }
  if (!c.confirmed) {
    resp->set_message(c.message);
    return absl::OkStatus();
  }
  auto* confirmed = resp->mutable_confirmed();
  *confirmed->mutable_volume_context() = req.volume_context();
  *confirmed->mutable_volume_capabilities() = req.volume_capabilities();
  *confirmed->mutable_parameters() = req.parameters();
  return absl::OkStatus();
}

// ---- ControllerGetCapabilities ----

grpc::Status ControllerService::ControllerGetCapabilities(
    Ctx*, const ::csi::v1::ControllerGetCapabilitiesRequest*,
    ::csi::v1::ControllerGetCapabilitiesResponse* resp) {
  // The reference's vanilla set (CREATE_DELETE_VOLUME, PUBLISH_UNPUBLISH_VOLUME, EXPAND_VOLUME,
  // LIST_VOLUMES and LIST_VOLUMES_PUBLISHED_NODES with its list-volumes feature state on, as in
  // its manifests) plus GET_CAPACITY, which we serve from the datastore inventory (used only
  // when the external-provisioner runs with --enable-capacity), and the reference's snapshot
  // capabilities (its block-volume-snapshot feature state on, as in its manifests).
  // The snapshot capabilities are left out when no configured vCenter has CNS's snapshot API
  // (all before 7.0U3, as their API versions say; one not yet asked counts as having it).
  std::vector<Cap::Type> caps = {Cap::CREATE_DELETE_VOLUME, Cap::PUBLISH_UNPUBLISH_VOLUME,
                                 Cap::LIST_VOLUMES,         Cap::LIST_VOLUMES_PUBLISHED_NODES,
                                 Cap::EXPAND_VOLUME,        Cap::GET_CAPACITY};
  if (AnyVcenterMayHaveSnapshots()) {
    caps.push_back(Cap::CREATE_DELETE_SNAPSHOT);
    caps.push_back(Cap::LIST_SNAPSHOTS);
  }
  for (Cap::Type t : caps) resp->add_capabilities()->mutable_rpc()->set_type(t);
  return grpc::Status::OK;
}

bool ControllerService::AnyVcenterMayHaveSnapshots() {
  for (VCenterEndpoint& vc : cloud_->vcenters()) {
    absl::StatusOr<bool> supported = vc.cns->SnapshotsSupported();
    if (!supported.ok() || *supported) return true;
  }
  return cloud_->vcenters().empty();
}

}  // namespace ccm::csi
