// CreateVolume: parse, find the volume of that name, place, create (see controller_service.h).
#include <algorithm>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/logging.h"
#include "common/status_macros.h"
#include "csi/controller/controller_service.h"
#include "csi/controller/create_helpers.h"
#include "csi/controller/fault_type.h"
#include "csi/core/capacity.h"
#include "csi/core/file_volume.h"
#include "csi/core/publish_context.h"
#include "csi/core/snapshot.h"
#include "csi/core/topology.h"
#include "csi/core/volume_id.h"
#include "csi/server/grpc_status.h"
#include "csi/server/proto_convert.h"

namespace ccm::csi {
namespace {

namespace cns = vsphere::cns;

// Transport trouble (the operation may or may not have happened) or another operation in the
// way: another datastore must not be tried (a second volume of the same name could be made).
bool Transient(const absl::Status& s) {
  return s.code() == absl::StatusCode::kUnavailable ||
         s.code() == absl::StatusCode::kDeadlineExceeded || s.code() == absl::StatusCode::kAborted;
}

}  // namespace

namespace internal {

const DatastoreCandidate* FindDatastore(const InventorySnapshot& view, const std::string& vcenter,
                                        const std::string& url) {
  for (const DatastoreCandidate& c : view.datastores) {
    if (c.vcenter == vcenter && SameDatastoreUrl(c.url, url)) return &c;
  }
  return nullptr;
}

void FillVolume(const std::string& volume_id, int64_t capacity_mib,
                const std::vector<Segments>& accessible, ::csi::v1::CreateVolumeResponse* resp,
                bool file) {
  ::csi::v1::Volume* out = resp->mutable_volume();
  out->set_volume_id(volume_id);
  out->set_capacity_bytes(MibToBytes(capacity_mib));
  ToProto(file ? FileVolumeContext() : BlockVolumeContext(), out->mutable_volume_context());
  for (const Segments& s : accessible) ToProto(s, out->add_accessible_topology());
}

}  // namespace internal

using internal::FillVolume;
using internal::FindDatastore;

grpc::Status ControllerService::CreateVolume(Ctx* ctx, const ::csi::v1::CreateVolumeRequest* req,
                                             ::csi::v1::CreateVolumeResponse* resp) {
  MarkFile(ctx, IsFileVolumeRequest(FromProto(req->volume_capabilities())));
  return Serve(ctx, [&] { return DoCreate(*req, resp); });
}

absl::Status ControllerService::DoCreate(const ::csi::v1::CreateVolumeRequest& req,
                                         ::csi::v1::CreateVolumeResponse* resp) {
  CCM_ASSIGN_OR_RETURN(CreatePlan plan, ParseCreate(req));
  CCM_ASSIGN_OR_RETURN(VolumeLocks::Guard guard, locks_.TryLock(plan.name));
  CCM_RETURN_IF_ERROR(FindOrCreate(plan, resp));
  if (plan.params.csi_migration) return AddInTreePath(resp);
  return absl::OkStatus();
}

absl::StatusOr<std::vector<std::string>> ControllerService::PlanCreate(
    const ::csi::v1::CreateVolumeRequest& req) {
  CCM_ASSIGN_OR_RETURN(CreatePlan plan, ParseCreate(req));
  std::vector<std::string> out;
  if (plan.file) {
    CCM_ASSIGN_OR_RETURN(FilePlaced fp, PlaceFile(plan));
    for (size_t i : fp.chosen) out.push_back(fp.placed.view->datastores[i].name);
    return out;
  }
  CCM_ASSIGN_OR_RETURN(Placed placed, Place(plan));
  for (const PlacementChoice& c : placed.choices) {
    out.push_back(placed.view->datastores[c.candidate].name);
  }
  return out;
}

absl::Status ControllerService::FindOrCreate(CreatePlan& plan,
                                             ::csi::v1::CreateVolumeResponse* resp) {
  // A name without a record was never sent (its record is written first): nothing to find.
  bool done = false;
  if (!RecordFirst(plan)) {
    CCM_ASSIGN_OR_RETURN(done, FindExisting(plan, resp));
    if (!done) {
      CCM_ASSIGN_OR_RETURN(done, ResumeCreate(plan, resp));
    }
  }
  if (done) {
    if (!plan.source_snapshot_id.empty()) SetSnapshotSource(plan.source_snapshot_id, resp);
    return absl::OkStatus();
  }
  if (!plan.source_snapshot_id.empty()) return CreateFromSnapshot(plan, resp);
  if (plan.file) return CreateFileVolume(plan, resp);
  CCM_ASSIGN_OR_RETURN(Placed placed, Place(plan));
  return CreateOnChoices(plan, placed, resp);
}

absl::StatusOr<ControllerService::CreatePlan> ControllerService::ParseCreate(
    const ::csi::v1::CreateVolumeRequest& req) const {
  if (req.name().empty()) return absl::InvalidArgumentError("volume name is required");
  const std::vector<VolumeCapability> caps = FromProto(req.volume_capabilities());
  CCM_RETURN_IF_ERROR(ValidateCapabilities(caps, cap_options_));
  CreatePlan plan;
  plan.name = req.name();
  plan.file = IsFileVolumeRequest(caps);
  plan.range = FromProto(req.capacity_range());
  CCM_ASSIGN_OR_RETURN(plan.size_mib, CreateSizeMib(plan.range));
  CCM_ASSIGN_OR_RETURN(plan.params, ParseParameters(FromProto(req.parameters())));
  if (plan.params.csi_migration) CCM_RETURN_IF_ERROR(ResolveMigrationDatastore(plan.params));
  for (const std::string& w : plan.params.warnings) LOG_WARN("CreateVolume {}: {}", plan.name, w);
  if (req.has_volume_content_source()) {
    if (!req.volume_content_source().has_snapshot()) {  // the reference's vanilla driver too
      return absl::InvalidArgumentError(
          "volume_content_source: only a snapshot is supported (volume clones are not: no "
          "CLONE_VOLUME capability)");
    }
    if (plan.file) {  // as the reference: vSAN file shares have no CNS snapshots
      return absl::InvalidArgumentError(
          "a file volume (ReadWriteMany / ReadOnlyMany) cannot be created from a snapshot");
    }
    plan.source_snapshot_id = req.volume_content_source().snapshot().snapshot_id();
    if (plan.source_snapshot_id.empty()) {
      return absl::InvalidArgumentError("volume_content_source.snapshot.snapshot_id is required");
    }
    // An ID this driver never gave names no snapshot: NotFound, the spec's code for a source
    // snapshot that does not exist (csi-sanity's rule; issue 42 item 7).
    if (absl::Status s = ParseSnapshotId(plan.source_snapshot_id).status(); !s.ok()) {
      return absl::NotFoundError(absl::StrCat("source snapshot ", plan.source_snapshot_id,
                                              " does not exist: ", s.message()));
    }
  }
  if (req.has_accessibility_requirements()) {
    TopologyRequirement r = FromProto(req.accessibility_requirements());
    if (!r.requisite.empty() || !r.preferred.empty()) plan.requirement = std::move(r);
  }
  return plan;
}

absl::StatusOr<bool> ControllerService::FindExisting(CreatePlan& plan,
                                                     ::csi::v1::CreateVolumeResponse* resp) {
  for (VCenterEndpoint& vc : cloud_->vcenters()) {
    cns::QueryFilter filter;
    filter.names = {plan.name};
    filter.container_cluster_ids = ClusterIds();
    absl::StatusOr<cns::QueryResult> r = vc.cns->QueryVolume(filter);
    if (absl::IsUnavailable(r.status()) || absl::IsDeadlineExceeded(r.status())) {
      LOG_WARN("CreateVolume {}: vCenter {} cannot be asked for the name: {}", plan.name, vc.label,
               r.status().message());
      plan.unreachable.push_back(vc.label);
      continue;
    }
    if (!r.ok()) return Annotate(r.status(), absl::StrCat("look for volume ", plan.name));
    if (r->volumes.empty()) continue;
    CCM_RETURN_IF_ERROR(Adopt(plan, vc, r->volumes.front(), resp));
    return true;
  }
  if (plan.unreachable.empty()) return false;
  // Could an earlier attempt have made it in a vCenter that does not answer? Its record says.
  absl::StatusOr<std::optional<OperationRecord>> prior = cloud_->operations().Get(plan.name);
  if (!prior.ok()) {
    return absl::UnavailableError(absl::StrCat(
        "look for volume ", plan.name, ": vCenter ", absl::StrJoin(plan.unreachable, ", "),
        " cannot be asked and the operation records cannot be read: ", prior.status().message()));
  }
  if (prior->has_value() && std::find(plan.unreachable.begin(), plan.unreachable.end(),
                                      (*prior)->vcenter) != plan.unreachable.end()) {
    return absl::UnavailableError(absl::StrCat("volume ", plan.name, " was created in vCenter ",
                                               (*prior)->vcenter, ", which cannot be asked now"));
  }
  return false;
}

absl::Status ControllerService::Adopt(const CreatePlan& plan, const VCenterEndpoint& vc,
                                      const cns::Volume& v, ::csi::v1::CreateVolumeResponse* resp) {
  absl::StatusOr<PlacementView::SnapshotPtr> view = cloud_->datastores().Snapshot();
  const DatastoreCandidate* ds =
      view.ok() ? FindDatastore(**view, vc.label, v.datastore_url) : nullptr;
  std::vector<Segments> accessible;
  if (ds != nullptr) accessible = AccessibleSegments(*ds, (*view)->hosts);
  CCM_RETURN_IF_ERROR(CheckExisting(plan, vc, v, ds, accessible));
  const bool file = v.volume_type == cns::kVolumeTypeFile;
  if (ModeOf(cloud_->topology()) == TopologyMode::kNone || file) accessible.clear();
  CCM_ASSIGN_OR_RETURN(const std::string id, NewVolumeId(v.volume_id, vc.label));
  FillVolume(id, v.capacity_mb, accessible, resp, file);
  return absl::OkStatus();
}

absl::Status ControllerService::CheckExisting(const CreatePlan& plan, const VCenterEndpoint& vc,
                                              const cns::Volume& v, const DatastoreCandidate* ds,
                                              const std::vector<Segments>& accessible) const {
  std::vector<std::string> differs;
  if (const bool file = v.volume_type == cns::kVolumeTypeFile; file != plan.file) {
    differs.push_back(file ? "type file volume (requested: a block volume)"
                           : "type block volume (requested: a file volume)");
  }
  if (v.capacity_mb < plan.size_mib ||
      (plan.range.limit_bytes != 0 && MibToBytes(v.capacity_mb) > plan.range.limit_bytes)) {
    differs.push_back(absl::StrCat("capacity ", v.capacity_mb, " MiB (requested: at least ",
                                   plan.range.required_bytes, " bytes, limit ",
                                   plan.range.limit_bytes, " bytes)"));
  }
  if (const std::string& url = plan.params.datastore_url; !url.empty()) {
    const bool same = SameDatastoreUrl(v.datastore_url, url) ||
                      (ds != nullptr && !ds->datastore_cluster.empty() &&
                       (url == ds->datastore_cluster || url == ds->datastore_cluster_moref));
    if (!same)
      differs.push_back(absl::StrCat("datastore ", v.datastore_url, " (requested ", url, ")"));
  }
  if (const std::string& policy = plan.params.storage_policy_name; !policy.empty()) {
    absl::StatusOr<std::string> id = vc.policies->IdOf(policy);
    if (!id.ok() && !absl::IsNotFound(id.status())) return id.status();
    if (!id.ok() || *id != v.storage_policy_id) {
      differs.push_back(absl::StrCat("storage policy ",
                                     v.storage_policy_id.empty() ? "(none)" : v.storage_policy_id,
                                     " (requested \"", policy, "\")"));
    }
  }
  if (plan.requirement && ds != nullptr && !plan.file) {  // unknown datastore: accept
    const TopologyRequirement& r = *plan.requirement;
    const std::vector<Segments>& wanted = r.requisite.empty() ? r.preferred : r.requisite;
    bool reachable = false;
    for (const Segments& acc : accessible) {
      for (const Segments& w : wanted) reachable |= SegmentMatches(w, acc);
    }
    if (!reachable) {
      differs.push_back(
          absl::StrCat("datastore ", ds->name, " not accessible from the requested topology"));
    }
  }
  if (differs.empty()) return absl::OkStatus();
  return absl::AlreadyExistsError(absl::StrCat("volume ", plan.name, " exists with ",
                                               absl::StrJoin(differs, ", "),
                                               ": incompatible with this request"));
}

absl::StatusOr<bool> ControllerService::ResumeCreate(const CreatePlan& plan,
                                                     ::csi::v1::CreateVolumeResponse* resp) {
  absl::StatusOr<std::optional<OperationRecord>> prior = cloud_->operations().Get(plan.name);
  if (!prior.ok() || !prior->has_value()) return false;
  const OperationRecord& r = **prior;
  VCenterEndpoint* vc = Endpoint(r.vcenter);
  if (r.status != kTaskInProgress || r.task_id.empty() || vc == nullptr) return false;
  cns::CreateSpec spec;
  spec.name = plan.name;
  const cns::Operation op = cns::CreateOp(spec);
  CCM_ASSIGN_OR_RETURN(cns::VolumeOperationResult ran, RunTracked(plan.name, *vc, op));
  CCM_ASSIGN_OR_RETURN(cns::CreateResult created, cns::CreateResultOf(op, ran));
  std::vector<Segments> accessible;
  if (absl::StatusOr<PlacementView::SnapshotPtr> view = cloud_->datastores().Snapshot();
      view.ok() && ModeOf(cloud_->topology()) != TopologyMode::kNone && !plan.file) {
    for (const DatastoreCandidate& c : (*view)->datastores) {
      if (c.vcenter == vc->label && c.moref == created.datastore.value)
        accessible = AccessibleSegments(c, (*view)->hosts);
    }
  }
  CCM_ASSIGN_OR_RETURN(const std::string id, NewVolumeId(created.volume_id, vc->label));
  FillVolume(id, plan.size_mib, accessible, resp, plan.file);
  LOG_INFO("created volume {} ({}) by the task {} an earlier attempt started", plan.name,
           resp->volume().volume_id(), r.task_id);
  return true;
}

absl::StatusOr<ControllerService::Placed> ControllerService::Place(const CreatePlan& plan) {
  Placed placed;
  CCM_ASSIGN_OR_RETURN(placed.view, cloud_->datastores().Snapshot());
  if (!plan.unreachable.empty()) {  // leave out the vCenters that did not answer
    auto without = std::make_shared<InventorySnapshot>(*placed.view);
    std::erase_if(without->datastores, [&](const DatastoreCandidate& c) {
      return std::find(plan.unreachable.begin(), plan.unreachable.end(), c.vcenter) !=
             plan.unreachable.end();
    });
    for (const std::string& vc : plan.unreachable) without->unloaded[vc] = "cannot be asked";
    placed.view = std::move(without);
  }
  const InventorySnapshot& view = *placed.view;
  PlacementRequest preq;
  preq.size_mib = plan.size_mib;
  preq.datastore_url = plan.params.datastore_url;
  preq.topology_configured = ModeOf(cloud_->topology()) != TopologyMode::kNone;
  if (plan.requirement) {
    preq.requirement = &*plan.requirement;
  } else {
    CCM_ASSIGN_OR_RETURN(preq.node_hosts, NodeHosts(view));
    preq.unknown_nodes = cloud_->nodes()->unknown();
  }
  std::vector<bool> compatible;
  if (!plan.params.storage_policy_name.empty()) {
    CCM_ASSIGN_OR_RETURN(compatible, PolicyVerdicts(plan.params.storage_policy_name, view, placed));
    preq.compatible = &compatible;
    preq.policy_name = plan.params.storage_policy_name;
  }
  absl::StatusOr<std::vector<PlacementChoice>> choices =
      ChooseDatastores(view.datastores, view.hosts, preq);
  if (!choices.ok()) {
    if (view.unloaded.empty() || absl::IsInvalidArgument(choices.status())) return choices.status();
    // A vCenter not loaded yet may have had a place for it: retry later.
    return absl::UnavailableError(absl::StrCat(
        choices.status().message(),
        " (not known yet: ", absl::StrJoin(view.unloaded, "; ", absl::PairFormatter(": ")), ")"));
  }
  placed.choices = *std::move(choices);
  return placed;
}

absl::StatusOr<std::vector<NodeHost>> ControllerService::NodeHosts(const InventorySnapshot& view) {
  NodeVmSource* nodes = cloud_->nodes();
  if (nodes == nullptr) {
    return absl::FailedPreconditionError(
        "the controller has no Kubernetes API access to know the node VMs: a volume without "
        "topology requirements cannot be placed");
  }
  CCM_ASSIGN_OR_RETURN(std::vector<NodeVmRef> refs, nodes->List());
  std::set<std::pair<std::string, std::string>> known;
  for (const HostRecord& h : view.hosts) known.emplace(h.vcenter, h.moid);
  std::vector<NodeHost> out;
  for (const NodeVmRef& ref : refs) {
    absl::Status unsure;
    bool found = false;
    for (VCenterEndpoint& vc : cloud_->vcenters()) {
      absl::StatusOr<vsphere::VmFacts> vm = vc.vms->FindByUuid(ref.uuid);
      if (!vm.ok()) {
        if (!absl::IsNotFound(vm.status())) unsure = vm.status();
        continue;
      }
      if (!known.contains({vc.label, vm->host.value})) {
        cloud_->datastores().RequestFullRefresh();
        return absl::UnavailableError(
            absl::StrCat("node ", ref.node, ": its VM ", vm->name, " runs on host ", vm->host.value,
                         " of vCenter ", vc.label,
                         ", which the datastore inventory does not know yet (refreshing)"));
      }
      out.push_back({vm->name, vc.label, vm->host.value});
      found = true;
      break;
    }
    if (!found && !unsure.ok()) {
      return absl::UnavailableError(absl::StrCat("node ", ref.node, ": cannot find its VM ",
                                                 ref.uuid, ": ", unsure.message()));
    }
    if (!found)
      VLOG(1, "node {}: no VM with BIOS UUID {} in the configured vCenters", ref.node, ref.uuid);
  }
  return out;
}

absl::StatusOr<std::vector<bool>> ControllerService::PolicyVerdicts(const std::string& policy,
                                                                    const InventorySnapshot& view,
                                                                    Placed& placed) {
  std::vector<bool> out(view.datastores.size(), false);
  std::vector<std::string> missing;
  absl::Status failure;
  for (VCenterEndpoint& vc : cloud_->vcenters()) {
    absl::StatusOr<std::string> id = vc.policies->IdOf(policy);
    if (!id.ok()) {
      (absl::IsNotFound(id.status()) ? missing.push_back(vc.label) : failure.Update(id.status()));
      continue;
    }
    std::vector<std::string> moids;
    for (const DatastoreCandidate& c : view.datastores)
      if (c.vcenter == vc.label) moids.push_back(c.moref);
    absl::StatusOr<std::set<std::string>> ok = vc.policies->Compatible(*id, moids);
    if (!ok.ok()) {
      failure.Update(ok.status());
      continue;
    }
    placed.policy_ids[vc.label] = *id;
    for (size_t i = 0; i < view.datastores.size(); ++i) {
      const DatastoreCandidate& c = view.datastores[i];
      if (c.vcenter == vc.label && ok->contains(c.moref)) out[i] = true;
    }
  }
  if (placed.policy_ids.empty()) {
    if (!failure.ok()) return failure;
    return absl::InvalidArgumentError(
        absl::StrCat("storagepolicyname \"", policy, "\": no such storage policy in vCenter ",
                     absl::StrJoin(missing, ", "), " (names are case-sensitive)"));
  }
  return out;
}

absl::Status ControllerService::CreateOnChoices(const CreatePlan& plan, const Placed& placed,
                                                ::csi::v1::CreateVolumeResponse* resp) {
  std::vector<std::string> refused;
  absl::Status last;
  bool stale = false;  // a datastore of the cache is gone from vCenter
  for (const PlacementChoice& choice : placed.choices) {
    const DatastoreCandidate& ds = placed.view->datastores[choice.candidate];
    VCenterEndpoint* vc = Endpoint(ds.vcenter);
    if (vc == nullptr) continue;
    cns::CreateSpec spec;
    spec.name = plan.name;
    spec.capacity_mb = plan.size_mib;
    spec.datastores = {vsphere::Moref{"Datastore", ds.moref}};
    if (auto it = placed.policy_ids.find(ds.vcenter); it != placed.policy_ids.end())
      spec.storage_policy_id = it->second;
    spec.metadata.container_cluster = Cluster(*vc);
    spec.metadata.container_cluster_array = {spec.metadata.container_cluster};
    spec.volume_id = TransactionIdFor(*vc, plan.name);
    const cns::Operation op = cns::CreateOp(spec);
    absl::StatusOr<cns::VolumeOperationResult> ran =
        RunTracked(plan.name, *vc, op, plan.record ? &*plan.record : nullptr);
    absl::StatusOr<cns::CreateResult> created =
        ran.ok() ? cns::CreateResultOf(op, *ran) : absl::StatusOr<cns::CreateResult>(ran.status());
    if (absl::IsAlreadyExists(created.status()) && !spec.volume_id.empty()) {
      return AdoptCreated(plan, *vc, spec.volume_id, resp);  // sent before: CNS has it
    }
    if (!created.ok()) {
      last = created.status();
      refused.push_back(absl::StrCat(ds.name, " (", ds.url, "): ", last.message()));
      if (Transient(last)) break;
      if (absl::IsNotFound(last)) stale = true;
      LOG_WARN("CreateVolume {}: datastore {} of vCenter {} refused: {}", plan.name, ds.name,
               ds.vcenter, last.message());
      continue;
    }
    cloud_->datastores().NoteChange(ds.vcenter, ds.url, -MibToBytes(plan.size_mib));
    CCM_ASSIGN_OR_RETURN(const std::string id, NewVolumeId(created->volume_id, vc->label));
    FillVolume(id, plan.size_mib, choice.accessible_topology, resp);
    LOG_INFO("created volume {} ({}) of {} MiB on datastore {} of vCenter {}{}", plan.name,
             resp->volume().volume_id(), plan.size_mib, ds.name, ds.vcenter,
             spec.storage_policy_id.empty()
                 ? ""
                 : absl::StrCat(" with storage policy ", plan.params.storage_policy_name));
    return absl::OkStatus();
  }
  if (last.ok()) return absl::ResourceExhaustedError("no datastore to place the volume on");
  absl::StatusCode code = last.code();
  if (stale) {
    // Datastores were removed or re-registered since the last refresh: retryable once the
    // inventory is read again (CreateVolume has no NotFound in the spec).
    cloud_->datastores().RequestFullRefresh();
    if (code == absl::StatusCode::kNotFound) code = absl::StatusCode::kUnavailable;
  }
  absl::Status out(code,
                   absl::StrCat("create volume ", plan.name, ": ", absl::StrJoin(refused, "; ")));
  // The last refusal's fault (its type is the faulttype the metrics report).
  last.ForEachPayload(
      [&](absl::string_view url, const absl::Cord& payload) { out.SetPayload(url, payload); });
  return out;
}

}  // namespace ccm::csi
