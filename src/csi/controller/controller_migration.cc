// CreateVolume for a migrated in-tree StorageClass (parameters translated by CSI migration,
// csimigration: "true"), as the reference's vanilla controller; and the in-tree volumes whose
// CNS volume CNS lost (CheckInTree, RetryInTree).
#include "absl/strings/str_cat.h"
#include "common/logging.h"
#include "common/status_macros.h"
#include "csi/controller/controller_service.h"
#include "csi/core/volume_id.h"

namespace ccm::csi {

// `datastore-migrationparam` (the in-tree `datastore`, a name) becomes the datastore's URL; none:
// csi-vsphere.conf's migration-datastore-url, if set. One vCenter only, as the reference.
absl::Status ControllerService::ResolveMigrationDatastore(VolumeParameters& params) const {
  std::vector<VCenterEndpoint>& vcs = cloud_->vcenters();
  if (vcs.size() != 1) {
    return absl::InvalidArgumentError(
        "csimigration: volumes of migrated in-tree StorageClasses need exactly one vCenter (CSI "
        "migration is not supported with several)");
  }
  if (cloud_->migrations() == nullptr) {
    return absl::FailedPreconditionError(
        "csimigration: the controller has no Kubernetes API for the CnsVSphereVolumeMigration "
        "objects of in-tree volumes");
  }
  if (params.migration_datastore.empty()) {
    for (const cloud::VirtualCenterConfig& c : cloud_->config().vcenters) {
      if (c.label == vcs.front().label && params.datastore_url.empty()) {
        params.datastore_url = c.migration_datastore_url;
      }
    }
    return absl::OkStatus();
  }
  CCM_ASSIGN_OR_RETURN(PlacementView::SnapshotPtr view, cloud_->datastores().Snapshot());
  for (const DatastoreCandidate& d : view->datastores) {
    if (d.vcenter == vcs.front().label && d.name == params.migration_datastore) {
      params.datastore_url = d.url;
      return absl::OkStatus();
    }
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "datastore-migrationparam: vCenter ", vcs.front().label, " has no datastore named \"",
      params.migration_datastore, "\" (the in-tree StorageClass's `datastore`)"));
}

// The in-tree PV the external-provisioner makes from this volume names its VMDK: the volume's
// file path goes in volume_context "initialvolumefilepath", and the mapping is saved for the
// RPCs that will get that path as the volume handle. A disk made through CNS keeps
// keepAfterDeleteVm already: it is saved as protected.
absl::Status ControllerService::AddInTreePath(::csi::v1::CreateVolumeResponse* resp) {
  const std::string& id = resp->volume().volume_id();
  const std::string what = absl::StrCat("CreateVolume ", id, " for an in-tree StorageClass");
  VCenterEndpoint& vc = cloud_->vcenters().front();
  absl::StatusOr<vsphere::cns::DiskBacking> disk = vc.cns->VolumeInfo(id);
  if (!disk.ok()) return Annotate(disk.status(), what);
  CCM_RETURN_IF_ERROR(Annotate(cloud_->migrations()->Save({disk->file_path, id, true}), what));
  (*resp->mutable_volume()->mutable_volume_context())["initialvolumefilepath"] = disk->file_path;
  LOG_INFO("volume {} of a migrated in-tree StorageClass: {}", id, disk->file_path);
  return absl::OkStatus();
}

// A migrated volume's CnsVSphereVolumeMigration names a CNS volume that CNS may have lost since
// (CNS restored or reset, the volume unregistered by an admin) while the VMDK stays: CNS is asked
// once per process (and again after an operation found the volume gone), and a lost one is
// registered again (registrar.h: the record updated, one Event). One QueryVolume per in-tree
// volume per controller process.
absl::StatusOr<std::string> ControllerService::CheckInTree(const std::string& handle,
                                                           VCenterEndpoint& vc,
                                                           const std::string& id) {
  InTreeRegistrar* registrar = cloud_->registrar();
  if (registrar == nullptr) return id;
  {
    absl::MutexLock l(&names_mu_);
    if (verified_in_tree_.contains(id)) return id;
  }
  vsphere::cns::QueryFilter filter;
  filter.volume_ids = {id};
  absl::StatusOr<vsphere::cns::QueryResult> r = vc.cns->QueryVolume(filter);
  if (!r.ok()) {
    return Annotate(r.status(),
                    absl::StrCat("in-tree volume ", handle, ": ask CNS for volume ", id));
  }
  std::string known = id;
  if (r->volumes.empty()) {
    CCM_ASSIGN_OR_RETURN(known, registrar->Reregister(handle, id));
  }
  absl::MutexLock l(&names_mu_);
  if (verified_in_tree_.size() >= 10000) verified_in_tree_.clear();  // bounded; rarely reached
  verified_in_tree_.insert(known);
  return known;
}

absl::Status ControllerService::RetryInTree(const std::string& handle, Located& loc,
                                            const std::function<absl::Status(const Located&)>& op) {
  absl::Status s = op(loc);
  if (!absl::IsNotFound(s) || !IsInTreeVolumePath(handle) || cloud_->registrar() == nullptr) {
    return s;
  }
  {
    absl::MutexLock l(&names_mu_);
    if (verified_in_tree_.erase(loc.cns_id) == 0) return s;
  }
  absl::StatusOr<Located> again = Locate(handle);
  if (!again.ok()) return again.status();     // the disk gone too: NotFound naming the path
  if (again->cns_id == loc.cns_id) return s;  // CNS has the volume: the NotFound stands
  LOG_INFO("in-tree volume {}: trying again with CNS volume {}", handle, again->cns_id);
  loc = *again;
  return op(loc);
}

}  // namespace ccm::csi
