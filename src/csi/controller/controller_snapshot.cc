// CreateSnapshot, DeleteSnapshot, ListSnapshots over CNS snapshots (see controller_service.h and
// csi/core/snapshot.h). vCenter requests: CreateSnapshot 2 CNS calls when it creates (the query
// of the volume's snapshots, which also finds a retried one, and the create) plus the volume's
// query; DeleteSnapshot 1; ListSnapshots 1 query of snapshots and 1 of their volumes per page.
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/logging.h"
#include "common/status_macros.h"
#include "csi/controller/controller_service.h"
#include "csi/controller/fault_type.h"
#include "csi/core/capacity.h"
#include "csi/core/paging.h"
#include "csi/core/snapshot.h"
#include "csi/server/grpc_status.h"
#include "vsphere/cns/wire.h"

namespace ccm::csi {
namespace {

namespace cns = vsphere::cns;

constexpr size_t kRememberedSnapshotNames = 10000;
constexpr int64_t kQuerySnapshotLimit = 128;  // the reference's page of CnsQuerySnapshots

void FillSnapshot(const cns::Snapshot& s, const std::string& volume_id, int64_t size_mib,
                  ::csi::v1::Snapshot* out) {
  out->set_snapshot_id(FormatSnapshotId(volume_id, s.snapshot_id));
  out->set_source_volume_id(volume_id);
  out->set_size_bytes(MibToBytes(size_mib));  // CNS tells no snapshot size: the volume's
  const int64_t nanos = absl::ToUnixNanos(s.create_time);
  out->mutable_creation_time()->set_seconds(nanos / 1000000000);
  out->mutable_creation_time()->set_nanos(static_cast<int32_t>(nanos % 1000000000));
  out->set_ready_to_use(true);  // a CNS snapshot is usable once its task has succeeded
}

SnapshotLimits LimitsOf(const cloud::Config& config) {
  return {config.snapshot.global_max_per_block_volume, config.snapshot.vsan_max_per_block_volume,
          config.snapshot.vvol_max_per_block_volume};
}

}  // namespace

grpc::Status ControllerService::CreateSnapshot(Ctx* ctx,
                                               const ::csi::v1::CreateSnapshotRequest* req,
                                               ::csi::v1::CreateSnapshotResponse* resp) {
  return Serve(ctx, [&] { return DoCreateSnapshot(*req, resp); });
}

grpc::Status ControllerService::DeleteSnapshot(Ctx* ctx,
                                               const ::csi::v1::DeleteSnapshotRequest* req,
                                               ::csi::v1::DeleteSnapshotResponse*) {
  return Serve(ctx, [&] { return DoDeleteSnapshot(*req); });
}

grpc::Status ControllerService::ListSnapshots(Ctx* ctx, const ::csi::v1::ListSnapshotsRequest* req,
                                              ::csi::v1::ListSnapshotsResponse* resp) {
  return Serve(ctx, [&] { return DoListSnapshots(*req, resp); });
}

absl::Status ControllerService::CheckSnapshotName(const std::string& name,
                                                  const std::string& volume_id) {
  absl::MutexLock l(&names_mu_);
  auto it = snapshot_sources_.find(name);
  if (it != snapshot_sources_.end() && it->second.first != volume_id) {
    return absl::AlreadyExistsError(absl::StrCat("snapshot ", name, " exists already, of volume ",
                                                 it->second.first, " (requested of ", volume_id,
                                                 ")"));
  }
  return absl::OkStatus();
}

void ControllerService::RememberSnapshotName(const std::string& name, const std::string& volume_id,
                                             const std::string& snapshot_id) {
  absl::MutexLock l(&names_mu_);
  auto [it, inserted] = snapshot_sources_.insert_or_assign(name, std::pair{volume_id, snapshot_id});
  if (!inserted) return;
  snapshot_names_.push_back(name);
  if (snapshot_names_.size() > kRememberedSnapshotNames) {
    snapshot_sources_.erase(snapshot_names_.front());
    snapshot_names_.pop_front();
  }
}

void ControllerService::ForgetSnapshotName(const std::string& snapshot_id) {
  absl::MutexLock l(&names_mu_);
  for (auto it = snapshot_sources_.begin(); it != snapshot_sources_.end(); ++it) {
    if (it->second.second != snapshot_id) continue;
    std::erase(snapshot_names_, it->first);
    snapshot_sources_.erase(it);
    return;
  }
}

absl::Status ControllerService::DoCreateSnapshot(const ::csi::v1::CreateSnapshotRequest& req,
                                                 ::csi::v1::CreateSnapshotResponse* resp) {
  if (req.name().empty()) return absl::InvalidArgumentError("snapshot name is required");
  const std::string& volume_id = req.source_volume_id();
  if (volume_id.empty()) return absl::InvalidArgumentError("source_volume_id is required");
  if (absl::StrContains(volume_id, ".vmdk")) {
    return absl::UnimplementedError(
        absl::StrCat("cannot snapshot the migrated in-tree volume ", volume_id));
  }
  CCM_ASSIGN_OR_RETURN(VolumeLocks::Guard guard, locks_.TryLock(volume_id));
  absl::StatusOr<Located> loc = FindVolume(volume_id);
  if (absl::IsNotFound(loc.status())) {
    return absl::NotFoundError(absl::StrCat("source volume ", volume_id, " does not exist"));
  }
  if (!loc.ok()) return loc.status();
  if (loc->volume.volume_type == vsphere::cns::kVolumeTypeFile) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot snapshot volume ", volume_id,
                     ": it is a file volume (vSAN file share); CNS snapshots are of block "
                     "volumes only"));
  }
  CCM_ASSIGN_OR_RETURN(bool supported, loc->vc->cns->SnapshotsSupported());
  if (!supported) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot snapshot volume ", volume_id, ": its vCenter ", loc->vc->label,
                     " has no CNS snapshot API (vCenter 7.0U3 and later have it)"));
  }
  const std::string description = SnapshotDescription(req.name(), loc->cns_id);
  CCM_ASSIGN_OR_RETURN(std::vector<cns::Snapshot> existing, loc->vc->cns->SnapshotsOf(loc->cns_id));
  for (const cns::Snapshot& s : existing) {
    if (s.description != description) continue;  // a retry finds the snapshot it made
    CCM_RETURN_IF_ERROR(CheckSnapshotName(req.name(), volume_id));
    FillSnapshot(s, volume_id, loc->volume.capacity_mb, resp->mutable_snapshot());
    RememberSnapshotName(req.name(), volume_id, resp->snapshot().snapshot_id());
    return absl::OkStatus();
  }
  CCM_RETURN_IF_ERROR(CheckSnapshotName(req.name(), volume_id));
  const SnapshotLimit limit =
      SnapshotLimitFor(LimitsOf(cloud_->config()), loc->volume.datastore_url);
  if (static_cast<int64_t>(existing.size()) >= limit.max) {
    return absl::FailedPreconditionError(
        absl::StrCat("the number of snapshots on the source volume ", volume_id,
                     " reaches the configured maximum (", limit.max,
                     ", csi-vsphere.conf [Snapshot] ", limit.key, ")"));
  }
  const cns::Operation op = cns::CreateSnapshotOp(loc->cns_id, description);
  CCM_ASSIGN_OR_RETURN(cns::VolumeOperationResult ran, RunTracked(description, *loc->vc, op));
  CCM_ASSIGN_OR_RETURN(cns::Snapshot made, cns::SnapshotOf(op, ran));
  FillSnapshot(made, volume_id, loc->volume.capacity_mb, resp->mutable_snapshot());
  RememberSnapshotName(req.name(), volume_id, resp->snapshot().snapshot_id());
  LOG_INFO("created snapshot {} ({}) of volume {}", req.name(), resp->snapshot().snapshot_id(),
           volume_id);
  return absl::OkStatus();
}

absl::Status ControllerService::DoDeleteSnapshot(const ::csi::v1::DeleteSnapshotRequest& req) {
  if (req.snapshot_id().empty()) return absl::InvalidArgumentError("snapshot_id is required");
  absl::StatusOr<SnapshotRef> ref = ParseSnapshotId(req.snapshot_id());
  if (!ref.ok()) {
    // No snapshot has such an ID: gone, the spec's success (the reference says InvalidArgument).
    LOG_INFO("DeleteSnapshot {}: {}; nothing to delete", req.snapshot_id(), ref.status().message());
    return absl::OkStatus();
  }
  CCM_ASSIGN_OR_RETURN(VolumeLocks::Guard guard, locks_.TryLock(ref->volume_id));
  absl::StatusOr<Located> loc = Locate(ref->volume_id);
  if (absl::IsNotFound(loc.status()) || absl::IsInvalidArgument(loc.status())) {
    return absl::OkStatus();
  }
  if (!loc.ok()) return loc.status();
  if (absl::StatusOr<bool> supported = loc->vc->cns->SnapshotsSupported();
      supported.ok() && !*supported) {
    LOG_INFO("DeleteSnapshot {}: vCenter {} has no CNS snapshot API; nothing to delete",
             req.snapshot_id(), loc->vc->label);
    return absl::OkStatus();
  }
  absl::Status s = RunTracked(absl::StrCat("deletesnapshot-", req.snapshot_id()), *loc->vc,
                              cns::DeleteSnapshotOp(loc->cns_id, ref->cns_snapshot_id))
                       .status();
  if (!s.ok() && !absl::IsNotFound(s)) {  // NotFound: the snapshot or its volume is gone
    return Annotate(s, absl::StrCat("delete snapshot ", req.snapshot_id()));
  }
  ForgetSnapshotName(req.snapshot_id());
  LOG_INFO("deleted snapshot {}", req.snapshot_id());
  return absl::OkStatus();
}

absl::Status ControllerService::CheckNoSnapshots(const Located& loc, const std::string& volume_id,
                                                 absl::string_view action) {
  // A vCenter without the snapshot API (before 7.0U3) has no snapshots to check: deletes and
  // expansions go on there without asking (issue 42 item 6).
  if (absl::StatusOr<bool> supported = loc.vc->cns->SnapshotsSupported();
      supported.ok() && !*supported) {
    return absl::OkStatus();
  }
  absl::StatusOr<std::vector<cns::Snapshot>> snaps = loc.vc->cns->SnapshotsOf(loc.cns_id);
  if (absl::IsNotFound(snaps.status())) return absl::OkStatus();       // the volume is gone
  if (absl::IsUnimplemented(snaps.status())) return absl::OkStatus();  // no snapshot API after all
  if (!snaps.ok()) return Annotate(snaps.status(), absl::StrCat(action, " volume ", volume_id));
  if (snaps->empty()) return absl::OkStatus();
  std::vector<std::string> ids;
  for (const cns::Snapshot& s : *snaps) ids.push_back(FormatSnapshotId(volume_id, s.snapshot_id));
  return absl::FailedPreconditionError(absl::StrCat("volume ", volume_id, " has ", snaps->size(),
                                                    " snapshot(s), ", absl::StrJoin(ids, ", "),
                                                    ": delete them before you ", action, " it"));
}

absl::Status ControllerService::DoListSnapshots(const ::csi::v1::ListSnapshotsRequest& req,
                                                ::csi::v1::ListSnapshotsResponse* resp) {
  if (req.max_entries() < 0) return absl::InvalidArgumentError("max_entries must not be negative");
  // The token is the offset of the next entry (the reference's CNS cursor offset); over
  // several vCenters, in their configured order.
  CCM_RETURN_IF_ERROR(ParseStartingToken(req.starting_token()).status());
  std::string volume_id = req.source_volume_id();
  std::string snapshot_id;
  if (!req.snapshot_id().empty()) {
    absl::StatusOr<SnapshotRef> ref = ParseSnapshotId(req.snapshot_id());
    if (!ref.ok()) return absl::OkStatus();  // no such snapshot: an empty list
    if (!volume_id.empty() && volume_id != ref->volume_id) return absl::OkStatus();
    volume_id = ref->volume_id;
    snapshot_id = ref->cns_snapshot_id;
  }
  if (volume_id.empty()) return ListAllSnapshots(req, resp);
  absl::StatusOr<Located> loc = FindVolume(volume_id);
  if (absl::IsNotFound(loc.status()) || absl::IsInvalidArgument(loc.status())) {
    return absl::OkStatus();
  }
  if (!loc.ok()) return loc.status();
  CCM_ASSIGN_OR_RETURN(bool supported, loc->vc->cns->SnapshotsSupported());
  if (!supported) return absl::OkStatus();  // no snapshot API there: no snapshots
  return ListVolumeSnapshots(*loc, volume_id, snapshot_id, req, resp);
}

absl::Status ControllerService::ListVolumeSnapshots(const Located& loc,
                                                    const std::string& volume_id,
                                                    const std::string& snapshot_id,
                                                    const ::csi::v1::ListSnapshotsRequest& req,
                                                    ::csi::v1::ListSnapshotsResponse* resp) {
  CCM_ASSIGN_OR_RETURN(uint64_t offset, ParseStartingToken(req.starting_token()));
  const int64_t limit = req.max_entries() > 0 ? req.max_entries() : kQuerySnapshotLimit;
  cns::SnapshotQueryFilter filter{{{loc.cns_id, snapshot_id}},
                                  cns::Cursor{static_cast<int64_t>(offset), limit, 0}};
  CCM_ASSIGN_OR_RETURN(cns::SnapshotQueryResult page, loc.vc->cns->QuerySnapshots(filter));
  for (const cns::SnapshotQueryEntry& e : page.entries) {
    if (!e.fault_name.empty()) {
      absl::Status fault = cns::FaultStatus(e.fault_name, e.fault_message);
      if (absl::IsNotFound(fault)) continue;  // no such snapshot (or volume): nothing to list
      return Annotate(fault, absl::StrCat("list snapshots of volume ", volume_id));
    }
    FillSnapshot(e.snapshot, volume_id, loc.volume.capacity_mb,
                 resp->add_entries()->mutable_snapshot());
  }
  if (page.cursor.offset > static_cast<int64_t>(offset) &&
      page.cursor.offset < page.cursor.total_records) {
    resp->set_next_token(absl::StrCat(page.cursor.offset));
  }
  return absl::OkStatus();
}

absl::Status ControllerService::ListAllSnapshots(const ::csi::v1::ListSnapshotsRequest& req,
                                                 ::csi::v1::ListSnapshotsResponse* resp) {
  CCM_ASSIGN_OR_RETURN(uint64_t token, ParseStartingToken(req.starting_token()));
  int64_t skip = static_cast<int64_t>(token);  // entries of earlier vCenters still to pass
  int64_t want = req.max_entries() > 0 ? req.max_entries() : kQuerySnapshotLimit;
  int64_t next = skip;  // the offset after the last entry read
  bool more = false;
  for (VCenterEndpoint& vc : cloud_->vcenters()) {
    if (want == 0) {
      more = true;  // this vCenter may have some: the next page asks
      break;
    }
    CCM_ASSIGN_OR_RETURN(bool supported, vc.cns->SnapshotsSupported());
    if (!supported) continue;  // no snapshot API there: no snapshots
    cns::SnapshotQueryFilter all{{}, cns::Cursor{skip, want, 0}};
    CCM_ASSIGN_OR_RETURN(cns::SnapshotQueryResult page, vc.cns->QuerySnapshots(all));
    if (skip >= page.cursor.total_records) {
      skip -= page.cursor.total_records;
      continue;
    }
    // Only this cluster's volumes, with their sizes: one query for the page's volumes.
    std::set<std::string> ids;
    for (const cns::SnapshotQueryEntry& e : page.entries) ids.insert(e.snapshot.volume_id);
    cns::QueryFilter volumes;
    volumes.volume_ids.assign(ids.begin(), ids.end());
    volumes.container_cluster_ids = ClusterIds();
    volumes.cursor = cns::Cursor{0, static_cast<int64_t>(ids.size()), 0};
    std::map<std::string, int64_t> ours;
    if (!ids.empty()) {
      CCM_ASSIGN_OR_RETURN(cns::QueryResult q, vc.cns->QueryVolume(volumes));
      for (const cns::Volume& v : q.volumes) ours[v.volume_id] = v.capacity_mb;
    }
    for (const cns::SnapshotQueryEntry& e : page.entries) {
      auto it = ours.find(e.snapshot.volume_id);
      if (!e.fault_name.empty() || it == ours.end()) continue;
      FillSnapshot(e.snapshot, VolumeId(e.snapshot.volume_id, vc.label), it->second,
                   resp->add_entries()->mutable_snapshot());
    }
    const int64_t read = static_cast<int64_t>(page.entries.size());
    next += read;
    want -= read;
    more = skip + read < page.cursor.total_records;
    skip = 0;
  }
  if (more) resp->set_next_token(absl::StrCat(next));
  return absl::OkStatus();
}

}  // namespace ccm::csi
