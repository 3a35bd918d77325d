// CreateVolume from a snapshot (volume_content_source.snapshot). As the reference decides: the
// snapshot must exist (NotFound), the requested size is the snapshot's (smaller: OutOfRange, as
// the spec asks; larger: InvalidArgument, the reference's "snapshot size mismatch"), a
// datastoreurl parameter must name the snapshot's datastore (InvalidArgument). CNS makes the
// volume on the snapshot's datastore, so with topology requirements that datastore must be
// reachable from a requested segment (ResourceExhausted, the spec's code for "cannot provision
// in that topology"). The storage policy, when named, is the new volume's.
#include "absl/strings/str_cat.h"
#include "common/logging.h"
#include "common/status_macros.h"
#include "csi/controller/controller_service.h"
#include "csi/controller/create_helpers.h"
#include "csi/core/capacity.h"
#include "csi/core/snapshot.h"
#include "csi/core/topology.h"

namespace ccm::csi {

void ControllerService::SetSnapshotSource(const std::string& snapshot_id,
                                          ::csi::v1::CreateVolumeResponse* resp) {
  resp->mutable_volume()->mutable_content_source()->mutable_snapshot()->set_snapshot_id(
      snapshot_id);
}

absl::StatusOr<ControllerService::Located> ControllerService::RestoreSource(
    const CreatePlan& plan, const SnapshotRef& ref) {
  namespace cns = vsphere::cns;
  const std::string what =
      absl::StrCat("create volume ", plan.name, " from snapshot ", plan.source_snapshot_id);
  absl::StatusOr<Located> loc = FindVolume(ref.volume_id);
  if (absl::IsNotFound(loc.status())) {
    return absl::NotFoundError(absl::StrCat(what, ": its volume does not exist"));
  }
  if (!loc.ok()) return Annotate(loc.status(), what);
  cns::SnapshotQueryFilter one{{{loc->cns_id, ref.cns_snapshot_id}}, std::nullopt};
  CCM_ASSIGN_OR_RETURN(bool supported, loc->vc->cns->SnapshotsSupported());
  if (!supported) {
    return absl::NotFoundError(absl::StrCat(what, ": the snapshot does not exist (vCenter ",
                                            loc->vc->label, " has no CNS snapshot API)"));
  }
  absl::StatusOr<cns::SnapshotQueryResult> q = loc->vc->cns->QuerySnapshots(one);
  if (absl::IsUnimplemented(q.status())) {
    return absl::NotFoundError(
        absl::StrCat(what, ": the snapshot does not exist (", q.status().message(), ")"));
  }
  if (!q.ok()) return q.status();
  if (q->entries.empty() || !q->entries.front().fault_name.empty()) {
    return absl::NotFoundError(absl::StrCat(what, ": the snapshot does not exist"));
  }
  const int64_t snapshot_mib = loc->volume.capacity_mb;
  if (plan.size_mib != snapshot_mib) {
    return absl::Status(plan.size_mib < snapshot_mib ? absl::StatusCode::kOutOfRange
                                                     : absl::StatusCode::kInvalidArgument,
                        absl::StrCat(what, ": snapshot size mismatch: requested ", plan.size_mib,
                                     " MiB, the snapshot has ", snapshot_mib, " MiB"));
  }
  const std::string& url = plan.params.datastore_url;
  if (!url.empty() && !SameDatastoreUrl(url, loc->volume.datastore_url)) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": datastoreurl ", url,
                                                   " is not the snapshot's datastore ",
                                                   loc->volume.datastore_url));
  }
  return loc;
}

absl::Status ControllerService::CreateFromSnapshot(const CreatePlan& plan,
                                                   ::csi::v1::CreateVolumeResponse* resp) {
  namespace cns = vsphere::cns;
  CCM_ASSIGN_OR_RETURN(SnapshotRef ref, ParseSnapshotId(plan.source_snapshot_id));
  CCM_ASSIGN_OR_RETURN(Located loc, RestoreSource(plan, ref));
  const std::string what =
      absl::StrCat("create volume ", plan.name, " from snapshot ", plan.source_snapshot_id);
  const int64_t snapshot_mib = loc.volume.capacity_mb;
  CCM_ASSIGN_OR_RETURN(PlacementView::SnapshotPtr view, cloud_->datastores().Snapshot());
  const DatastoreCandidate* ds =
      internal::FindDatastore(*view, loc.vc->label, loc.volume.datastore_url);
  if (ds == nullptr) {
    cloud_->datastores().RequestFullRefresh();
    return absl::UnavailableError(absl::StrCat(what, ": the snapshot's datastore ",
                                               loc.volume.datastore_url,
                                               " is not in the datastore inventory (refreshing)"));
  }
  std::vector<Segments> accessible = AccessibleSegments(*ds, view->hosts);
  if (plan.requirement) {
    const TopologyRequirement& r = *plan.requirement;
    bool reachable = false;
    for (const Segments& acc : accessible) {
      for (const Segments& w : r.requisite.empty() ? r.preferred : r.requisite)
        reachable |= SegmentMatches(w, acc);
    }
    if (!reachable) {
      return absl::ResourceExhaustedError(
          absl::StrCat(what, ": the snapshot's datastore ", ds->name,
                       " is not accessible from the requested topology"));
    }
  }
  cns::CreateSpec spec;
  spec.name = plan.name;
  spec.capacity_mb = snapshot_mib;
  spec.datastores = {vsphere::Moref{"Datastore", ds->moref}};
  spec.source_volume_id = loc.cns_id;
  spec.source_snapshot_id = ref.cns_snapshot_id;
  if (!plan.params.storage_policy_name.empty()) {
    CCM_ASSIGN_OR_RETURN(spec.storage_policy_id,
                         loc.vc->policies->IdOf(plan.params.storage_policy_name));
  }
  spec.metadata.container_cluster = Cluster(*loc.vc);
  spec.metadata.container_cluster_array = {spec.metadata.container_cluster};
  spec.volume_id = TransactionIdFor(*loc.vc, plan.name);
  const cns::Operation op = cns::CreateOp(spec);
  absl::StatusOr<cns::VolumeOperationResult> ran =
      RunTracked(plan.name, *loc.vc, op, plan.record ? &*plan.record : nullptr);
  absl::StatusOr<cns::CreateResult> created =
      ran.ok() ? cns::CreateResultOf(op, *ran) : absl::StatusOr<cns::CreateResult>(ran.status());
  if (absl::IsAlreadyExists(created.status()) && !spec.volume_id.empty()) {
    CCM_RETURN_IF_ERROR(AdoptCreated(plan, *loc.vc, spec.volume_id, resp));
    SetSnapshotSource(plan.source_snapshot_id, resp);
    return absl::OkStatus();
  }
  if (!created.ok()) return created.status();
  cloud_->datastores().NoteChange(ds->vcenter, ds->url, -MibToBytes(snapshot_mib));
  if (ModeOf(cloud_->topology()) == TopologyMode::kNone) accessible.clear();
  CCM_ASSIGN_OR_RETURN(const std::string id, NewVolumeId(created->volume_id, loc.vc->label));
  internal::FillVolume(id, snapshot_mib, accessible, resp);
  SetSnapshotSource(plan.source_snapshot_id, resp);
  LOG_INFO("created volume {} ({}) of {} MiB from snapshot {} on datastore {}", plan.name,
           resp->volume().volume_id(), snapshot_mib, plan.source_snapshot_id, ds->name);
  return absl::OkStatus();
}

}  // namespace ccm::csi
