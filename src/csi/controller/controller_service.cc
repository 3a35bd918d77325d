#include "csi/controller/controller_service.h"

#include <algorithm>
#include <map>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/logging.h"
#include "common/status_macros.h"
#include "csi/controller/attachments.h"
#include "csi/controller/proto_convert.h"
#include "csi/core/capacity.h"
#include "csi/core/constants.h"
#include "csi/core/paging.h"
#include "csi/core/parameters.h"
#include "csi/core/placement.h"
#include "csi/core/publish_context.h"
#include "csi/core/volume_id.h"
#include "csi/server/grpc_status.h"

namespace ccm::csi {
namespace {

namespace cns = vsphere::cns;
using Cap = ::csi::v1::ControllerServiceCapability::RPC;

// Transport trouble: the operation may or may not have happened, so another datastore must not
// be tried (a second volume of the same name could be made).
bool Transient(const absl::Status& s) {
  return s.code() == absl::StatusCode::kUnavailable ||
         s.code() == absl::StatusCode::kDeadlineExceeded;
}

absl::Status WithContext(const absl::Status& s, absl::string_view what) {
  return absl::Status(s.code(), absl::StrCat(what, ": ", s.message()));
}

// Compatible with the request: at least the (rounded) size asked for, within the limit.
bool SizeCompatible(int64_t existing_mib, int64_t wanted_mib, const CapacityRange& range) {
  if (existing_mib < wanted_mib) return false;
  return range.limit_bytes == 0 || MibToBytes(existing_mib) <= range.limit_bytes;
}

}  // namespace

ControllerService::ControllerService(std::shared_ptr<ControllerBackend> backend)
    : backend_(std::move(backend)) {}

VCenterEndpoint* ControllerService::Endpoint(const std::string& label) {
  for (VCenterEndpoint& vc : backend_->vcenters()) {
    if (absl::EqualsIgnoreCase(vc.label, label)) return &vc;
  }
  return nullptr;
}

std::vector<std::string> ControllerService::Labels() const {
  std::vector<std::string> out;
  for (const VCenterEndpoint& vc : backend_->vcenters()) out.push_back(vc.label);
  return out;
}

std::string ControllerService::VolumeId(const std::string& cns_id, const std::string& label) const {
  absl::StatusOr<std::string> id = FormatVolumeId(cns_id, label, backend_->vcenters().size());
  return id.ok() ? *id : cns_id;
}

cns::ContainerCluster ControllerService::Cluster(const VCenterEndpoint& vc) const {
  cns::ContainerCluster c;
  c.cluster_id = backend_->config().global.cluster_id;
  c.vsphere_user = vc.user;
  c.cluster_flavor = "VANILLA";
  c.cluster_distribution = backend_->config().global.cluster_distribution;
  return c;
}

std::vector<std::string> ControllerService::ClusterIds() const {
  const std::string& id = backend_->config().global.cluster_id;
  if (id.empty()) return {};
  return {id};
}

absl::StatusOr<ControllerService::Located> ControllerService::Locate(const std::string& volume_id) {
  CCM_ASSIGN_OR_RETURN(VolumeRef ref, ParseVolumeId(volume_id));
  CCM_ASSIGN_OR_RETURN(std::vector<std::string> ask, VCentersToAsk(ref, Labels()));
  if (ask.size() == 1) return Located{Endpoint(ask.front()), ref.cns_id, {}};
  return FindVolume(volume_id);
}

absl::StatusOr<ControllerService::Located> ControllerService::FindVolume(
    const std::string& volume_id) {
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

// ---- CreateVolume ----

grpc::Status ControllerService::CreateVolume(Ctx*, const ::csi::v1::CreateVolumeRequest* req,
                                             ::csi::v1::CreateVolumeResponse* resp) {
  return ToGrpcStatus(DoCreate(*req, resp));
}

absl::Status ControllerService::DoCreate(const ::csi::v1::CreateVolumeRequest& req,
                                         ::csi::v1::CreateVolumeResponse* resp) {
  if (req.name().empty()) return absl::InvalidArgumentError("volume name is required");
  CCM_RETURN_IF_ERROR(ValidateCapabilities(FromProto(req.volume_capabilities()), cap_options_));
  const CapacityRange range = FromProto(req.capacity_range());
  CCM_ASSIGN_OR_RETURN(int64_t size_mib, CreateSizeMib(range));
  CCM_ASSIGN_OR_RETURN(VolumeParameters params, ParseParameters(FromProto(req.parameters())));
  for (const std::string& w : params.warnings) LOG_WARN("CreateVolume {}: {}", req.name(), w);
  if (req.has_volume_content_source()) {
    return absl::InvalidArgumentError(
        "volume_content_source is not supported: this driver creates empty volumes only "
        "(no CLONE_VOLUME or snapshot capability)");
  }
  if (!params.storage_policy_name.empty()) {
    return absl::UnimplementedError(
        absl::StrCat("storagepolicyname \"", params.storage_policy_name,
                     "\": storage policy look-up (SPBM) is not implemented by this driver yet; use "
                     "datastoreurl or the datastores' default policy"));
  }
  CCM_ASSIGN_OR_RETURN(VolumeLocks::Guard guard, locks_.TryLock(req.name()));

  // Idempotency: the name is the key, CNS remembers it.
  for (VCenterEndpoint& vc : backend_->vcenters()) {
    cns::QueryFilter filter;
    filter.names = {req.name()};
    filter.container_cluster_ids = ClusterIds();
    absl::StatusOr<cns::QueryResult> r = vc.cns->QueryVolume(filter);
    if (!r.ok()) return WithContext(r.status(), absl::StrCat("look for volume ", req.name()));
    if (r->volumes.empty()) continue;
    const cns::Volume& v = r->volumes.front();
    if (!SizeCompatible(v.capacity_mb, size_mib, range)) {
      return absl::AlreadyExistsError(
          absl::StrCat("volume ", req.name(), " exists with ", v.capacity_mb,
                       " MiB, incompatible with the ", "requested capacity range (required ",
                       range.required_bytes, " bytes, limit ", range.limit_bytes, " bytes)"));
    }
    ::csi::v1::Volume* out = resp->mutable_volume();
    out->set_volume_id(VolumeId(v.volume_id, vc.label));
    out->set_capacity_bytes(MibToBytes(v.capacity_mb));
    ToProto(BlockVolumeContext(), out->mutable_volume_context());
    if (auto all = backend_->datastores().Candidates(); all.ok()) {
      for (const DatastoreCandidate& c : **all) {
        if (c.vcenter != vc.label || c.url != v.datastore_url) continue;
        for (const Segments& s : c.accessible) ToProto(s, out->add_accessible_topology());
        break;
      }
    }
    return absl::OkStatus();
  }

  CCM_ASSIGN_OR_RETURN(DatastoreInventory::CandidateList candidates,
                       backend_->datastores().Candidates());
  TopologyRequirement requirement;
  PlacementRequest preq;
  preq.size_mib = size_mib;
  preq.datastore_url = params.datastore_url;
  preq.topology_configured = ModeOf(backend_->topology()) != TopologyMode::kNone;
  if (req.has_accessibility_requirements()) {
    requirement = FromProto(req.accessibility_requirements());
    preq.requirement = &requirement;
  }
  CCM_ASSIGN_OR_RETURN(std::vector<PlacementChoice> choices, ChooseDatastores(*candidates, preq));

  std::vector<std::string> refused;
  absl::Status last;
  bool stale = false;  // a datastore of the cache is gone from vCenter
  for (const PlacementChoice& choice : choices) {
    const DatastoreCandidate& ds = (*candidates)[choice.candidate];
    VCenterEndpoint* vc = Endpoint(ds.vcenter);
    if (vc == nullptr) continue;
    cns::CreateSpec spec;
    spec.name = req.name();
    spec.capacity_mb = size_mib;
    spec.datastores = {vsphere::Moref{"Datastore", ds.moref}};
    spec.metadata.container_cluster = Cluster(*vc);
    spec.metadata.container_cluster_array = {spec.metadata.container_cluster};
    absl::StatusOr<cns::CreateResult> created = vc->cns->CreateVolume(spec);
    if (!created.ok()) {
      last = created.status();
      refused.push_back(absl::StrCat(ds.name, " (", ds.url, "): ", last.message()));
      if (Transient(last)) break;
      if (absl::IsNotFound(last)) stale = true;
      LOG_WARN("CreateVolume {}: datastore {} of vCenter {} refused: {}", req.name(), ds.name,
               ds.vcenter, last.message());
      continue;
    }
    backend_->datastores().NoteChange(ds.vcenter, ds.url, -MibToBytes(size_mib));
    ::csi::v1::Volume* out = resp->mutable_volume();
    out->set_volume_id(VolumeId(created->volume_id, vc->label));
    out->set_capacity_bytes(MibToBytes(size_mib));
    ToProto(BlockVolumeContext(), out->mutable_volume_context());
    for (const Segments& s : choice.accessible_topology) {
      ToProto(s, out->add_accessible_topology());
    }
    LOG_INFO("created volume {} ({}) of {} MiB on datastore {} of vCenter {}", req.name(),
             out->volume_id(), size_mib, ds.name, ds.vcenter);
    return absl::OkStatus();
  }
  if (last.ok()) return absl::ResourceExhaustedError("no datastore to place the volume on");
  absl::StatusCode code = last.code();
  if (stale) {
    // Datastores were removed or re-registered since the last refresh: retryable once the
    // inventory is read again (CreateVolume has no NotFound in the spec).
    backend_->datastores().RequestFullRefresh();
    if (code == absl::StatusCode::kNotFound) code = absl::StatusCode::kUnavailable;
  }
  return absl::Status(
      code, absl::StrCat("create volume ", req.name(), ": ", absl::StrJoin(refused, "; ")));
}

// ---- DeleteVolume ----

grpc::Status ControllerService::DeleteVolume(Ctx*, const ::csi::v1::DeleteVolumeRequest* req,
                                             ::csi::v1::DeleteVolumeResponse*) {
  return ToGrpcStatus(DoDelete(*req));
}

absl::Status ControllerService::DoDelete(const ::csi::v1::DeleteVolumeRequest& req) {
  if (req.volume_id().empty()) return absl::InvalidArgumentError("volume_id is required");
  CCM_ASSIGN_OR_RETURN(VolumeLocks::Guard guard, locks_.TryLock(req.volume_id()));
  absl::StatusOr<Located> loc = Locate(req.volume_id());
  if (absl::IsNotFound(loc.status())) return absl::OkStatus();
  if (!loc.ok()) return loc.status();
  absl::Status s = loc->vc->cns->DeleteVolume(loc->cns_id, /*delete_disk=*/true);
  if (absl::IsNotFound(s)) return absl::OkStatus();  // gone already: the spec's success
  if (absl::IsFailedPrecondition(s)) {
    return absl::FailedPreconditionError(
        absl::StrCat("volume ", req.volume_id(),
                     " is still attached to a node (unpublish it first): ", s.message()));
  }
  if (!s.ok()) return WithContext(s, absl::StrCat("delete volume ", req.volume_id()));
  backend_->datastores().NoteChange(loc->vc->label, "", 0);  // space freed: read it soon
  LOG_INFO("deleted volume {}", req.volume_id());
  return absl::OkStatus();
}

// ---- ValidateVolumeCapabilities ----

grpc::Status ControllerService::ValidateVolumeCapabilities(
    Ctx*, const ::csi::v1::ValidateVolumeCapabilitiesRequest* req,
    ::csi::v1::ValidateVolumeCapabilitiesResponse* resp) {
  return ToGrpcStatus(DoValidate(*req, resp));
}

absl::Status ControllerService::DoValidate(const ::csi::v1::ValidateVolumeCapabilitiesRequest& req,
                                           ::csi::v1::ValidateVolumeCapabilitiesResponse* resp) {
  if (req.volume_id().empty()) return absl::InvalidArgumentError("volume_id is required");
  if (req.volume_capabilities().empty()) {
    return absl::InvalidArgumentError("volume_capabilities is required");
  }
  CCM_RETURN_IF_ERROR(FindVolume(req.volume_id()).status());
  Confirmation c = ConfirmCapabilities(FromProto(req.volume_capabilities()), cap_options_);
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

// ---- ListVolumes ----

grpc::Status ControllerService::ListVolumes(Ctx*, const ::csi::v1::ListVolumesRequest* req,
                                            ::csi::v1::ListVolumesResponse* resp) {
  return ToGrpcStatus(DoList(*req, resp));
}

absl::Status ControllerService::DoList(const ::csi::v1::ListVolumesRequest& req,
                                       ::csi::v1::ListVolumesResponse* resp) {
  struct Entry {
    std::string id;
    VCenterEndpoint* vc;
    const cns::Volume* volume;
  };
  std::vector<cns::Volume> volumes;
  std::vector<std::pair<VCenterEndpoint*, size_t>> owner;  // per volume
  const int64_t page = std::max(1, backend_->config().global.query_limit);
  for (VCenterEndpoint& vc : backend_->vcenters()) {
    cns::QueryFilter filter;
    filter.container_cluster_ids = ClusterIds();
    filter.cursor = cns::Cursor{0, page, 0};
    while (true) {
      absl::StatusOr<cns::QueryResult> r = vc.cns->QueryVolume(filter);
      if (!r.ok()) return WithContext(r.status(), absl::StrCat("list volumes of ", vc.label));
      for (cns::Volume& v : r->volumes) {
        owner.emplace_back(&vc, volumes.size());
        volumes.push_back(std::move(v));
      }
      if (r->volumes.empty() || r->cursor.offset >= r->cursor.total_records) break;
      filter.cursor->offset = r->cursor.offset;
    }
  }
  std::vector<Entry> entries;
  for (const auto& [vc, i] : owner) {
    entries.push_back({VolumeId(volumes[i].volume_id, vc->label), vc, &volumes[i]});
  }
  std::sort(entries.begin(), entries.end(),
            [](const Entry& a, const Entry& b) { return a.id < b.id; });
  CCM_ASSIGN_OR_RETURN(Page p, PageOf(entries.size(), req.starting_token(), req.max_entries()));

  // Published nodes: one scan of the VMs' disks per vCenter on this page.
  std::map<VCenterEndpoint*, AttachmentMap> attachments;
  for (size_t i = p.begin; i < p.end; ++i) {
    if (attachments.contains(entries[i].vc)) continue;
    absl::StatusOr<AttachmentMap> m = ListAttachments(*entries[i].vc->client);
    if (!m.ok()) return WithContext(m.status(), "find the nodes volumes are published to");
    attachments[entries[i].vc] = *std::move(m);
  }
  for (size_t i = p.begin; i < p.end; ++i) {
    auto* e = resp->add_entries();
    e->mutable_volume()->set_volume_id(entries[i].id);
    e->mutable_volume()->set_capacity_bytes(MibToBytes(entries[i].volume->capacity_mb));
    const AttachmentMap& m = attachments[entries[i].vc];
    if (auto it = m.find(entries[i].volume->volume_id); it != m.end()) {
      for (const AttachedVm& vm : it->second)
        e->mutable_status()->add_published_node_ids(vm.bios_uuid);
    }
    e->mutable_status();  // present even when published nowhere
  }
  resp->set_next_token(p.next_token);
  return absl::OkStatus();
}

// ---- ControllerGetCapabilities ----

grpc::Status ControllerService::ControllerGetCapabilities(
    Ctx*, const ::csi::v1::ControllerGetCapabilitiesRequest*,
    ::csi::v1::ControllerGetCapabilitiesResponse* resp) {
  // The reference's vanilla set (CREATE_DELETE_VOLUME, PUBLISH_UNPUBLISH_VOLUME, EXPAND_VOLUME,
  // LIST_VOLUMES and LIST_VOLUMES_PUBLISHED_NODES with its list-volumes feature state on, as in
  // its manifests) plus GET_CAPACITY, which we serve from the datastore inventory (used only
  // when the external-provisioner runs with --enable-capacity). No snapshots here.
  for (Cap::Type t : {Cap::CREATE_DELETE_VOLUME, Cap::PUBLISH_UNPUBLISH_VOLUME, Cap::LIST_VOLUMES,
                      Cap::LIST_VOLUMES_PUBLISHED_NODES, Cap::EXPAND_VOLUME, Cap::GET_CAPACITY}) {
    resp->add_capabilities()->mutable_rpc()->set_type(t);
  }
  return grpc::Status::OK;
}

}  // namespace ccm::csi
