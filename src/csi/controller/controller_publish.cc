// ControllerPublishVolume, ControllerUnpublishVolume, GetCapacity and ControllerExpandVolume.
#include <algorithm>
#include <optional>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/logging.h"
#include "common/status_macros.h"
#include "csi/controller/attachments.h"
#include "csi/controller/controller_service.h"
#include "csi/controller/fault_type.h"
#include "csi/core/capacity.h"
#include "csi/core/file_volume.h"
#include "csi/core/node_id.h"
#include "csi/core/parameters.h"
#include "csi/core/placement.h"
#include "csi/core/publish_context.h"
#include "csi/core/volume_id.h"
#include "csi/server/grpc_status.h"
#include "csi/server/proto_convert.h"

namespace ccm::csi {
absl::StatusOr<vsphere::Moref> ControllerService::FindNodeVm(VCenterEndpoint& vc,
                                                             const std::string& node_id) {
  CCM_ASSIGN_OR_RETURN(vsphere::VmFacts vm, FindNodeVmFacts(vc, node_id));
  return vm.moref;
}

absl::StatusOr<vsphere::VmFacts> ControllerService::FindNodeVmFacts(VCenterEndpoint& vc,
                                                                    const std::string& node_id) {
  CCM_ASSIGN_OR_RETURN(NodeRef node, ParseNodeId(node_id));
  if (node.kind == NodeRef::Kind::kVmUuid) {
    absl::StatusOr<vsphere::VmFacts> vm = vc.vms->FindByUuid(node.value);
    if (!vm.ok()) {
      absl::Status s =
          Annotate(vm.status(), absl::StrCat("node ", node_id, " in vCenter ", vc.label));
      return absl::IsNotFound(s) ? VmNotFound(s) : s;
    }
    return *std::move(vm);
  }
  // A node name (the reference without use-csinode-id): the VM whose guest hostname, else whose
  // name, is the node name. From memory, like a UUID. The cache answers NotFound (not an empty
  // list) when no guest hostname matches: that is the case for the VM-name fallback.
  absl::StatusOr<std::vector<vsphere::VmFacts>> by_hostname = vc.vms->FindByHostname(node.value);
  if (!by_hostname.ok() && !absl::IsNotFound(by_hostname.status())) {
    return Annotate(by_hostname.status(), absl::StrCat("node ", node_id, " in vCenter ", vc.label));
  }
  std::vector<vsphere::VmFacts> vms;
  if (by_hostname.ok()) vms = *std::move(by_hostname);
  if (vms.empty()) {
    CCM_RETURN_IF_ERROR(vc.vms->ForEachVm([&](const vsphere::VmFacts& f) {
      if (absl::EqualsIgnoreCase(f.name, node.value)) vms.push_back(f);
    }));
  }
  if (vms.empty()) {
    return VmNotFound(absl::NotFoundError(absl::StrCat(
        "node ", node_id, ": no VM with that hostname or name in vCenter ", vc.label)));
  }
  if (vms.size() > 1) {
    return absl::FailedPreconditionError(
        absl::StrCat("node ", node_id, ": ", vms.size(), " VMs of vCenter ", vc.label,
                     " have that hostname or name; use VM UUIDs as node IDs (use-csinode-id)"));
  }
  return std::move(vms.front());
}

absl::Status ControllerService::CheckVolumeLimit(const std::string& node_id,
                                                 const vsphere::VmFacts& vm,
                                                 const std::string& cns_id) const {
  NodeVmSource* nodes = cloud_->nodes();
  if (nodes == nullptr) return absl::OkStatus();
  for (const vsphere::VmDisk& d : vm.disks) {
    if (d.volume_id == cns_id) return absl::OkStatus();  // a retried publish
  }
  const std::optional<int64_t> limit = nodes->VolumeLimit(node_id);
  if (!limit || static_cast<int64_t>(vm.disks.size()) < *limit) return absl::OkStatus();
  return absl::ResourceExhaustedError(absl::StrCat(
      "node ", node_id, " (VM ", vm.name, ") already has ", vm.disks.size(),
      " volumes attached, the most its node plugin takes (CSINode allocatable count ", *limit,
      ", NodeGetInfo's max_volumes_per_node: feature state high-pv-node-density or "
      "MAX_VOLUMES_PER_NODE)"));
}

// ---- ControllerPublishVolume ----

grpc::Status ControllerService::ControllerPublishVolume(
    Ctx* ctx, const ::csi::v1::ControllerPublishVolumeRequest* req,
    ::csi::v1::ControllerPublishVolumeResponse* resp) {
  MarkFile(ctx, req->has_volume_capability() &&
                    IsMultiNodeMode(FromProto(req->volume_capability()).mode));
  return Serve(ctx, [&] { return DoPublish(*req, resp); });
}

absl::Status ControllerService::DoPublish(const ::csi::v1::ControllerPublishVolumeRequest& req,
                                          ::csi::v1::ControllerPublishVolumeResponse* resp) {
  if (req.volume_id().empty()) return absl::InvalidArgumentError("volume_id is required");
  if (req.node_id().empty()) return absl::InvalidArgumentError("node_id is required");
  if (!req.has_volume_capability()) {
    return absl::InvalidArgumentError("volume_capability is required");
  }
  const VolumeCapability cap = FromProto(req.volume_capability());
  CCM_RETURN_IF_ERROR(ValidateCapability(cap, cap_options_));
  CCM_ASSIGN_OR_RETURN(VolumeLocks::Guard guard, locks_.TryLock(req.volume_id()));
  if (IsMultiNodeMode(cap.mode)) return PublishFileVolume(req, resp);
  CCM_ASSIGN_OR_RETURN(Located loc, Locate(req.volume_id()));
  absl::StatusOr<std::string> disk;
  CCM_RETURN_IF_ERROR(RetryInTree(req.volume_id(), loc, [&](const Located& l) {
    disk = AttachLocated(req, l);
    return disk.status();
  }));
  CCM_ASSIGN_OR_RETURN(StringMap context, BlockPublishContext(*disk));
  ToProto(context, resp->mutable_publish_context());
  return absl::OkStatus();
}

namespace {
// How long a change of ours is kept against a VM stream that does not show it yet (the stream is
// long caught up by then), and how long our attach answers a publish the stream does not confirm
// yet (a detach by someone else meanwhile is believed from the stream only).
constexpr absl::Duration kChangeKept = absl::Minutes(5);
constexpr absl::Duration kAttachTrusted = absl::Seconds(30);
std::string ChangeKey(const VCenterEndpoint& vc, const vsphere::Moref& vm,
                      const std::string& cns_id) {
  return absl::StrCat(vc.label, "/", vm.value, "/", cns_id);
}
}  // namespace

absl::StatusOr<std::string> ControllerService::AttachLocated(
    const ::csi::v1::ControllerPublishVolumeRequest& req, const Located& loc) {
  if (IsFileVolumeId(loc.cns_id)) {
    return absl::FailedPreconditionError(
        absl::StrCat("volume ", req.volume_id(),
                     " is a file volume (vSAN file share): publish it with a "
                     "multi-node access mode, not ",
                     AccessModeName(FromProto(req.volume_capability()).mode)));
  }
  CCM_RETURN_IF_ERROR(ProtectInTree(req.volume_id(), loc));
  CCM_ASSIGN_OR_RETURN(vsphere::VmFacts facts, FindNodeVmFacts(*loc.vc, req.node_id()));
  CCM_RETURN_IF_ERROR(CheckVolumeLimit(req.node_id(), facts, loc.cns_id));
  const vsphere::Moref vm = facts.moref;
  // A publish sent again (the attacher's retry after its status update conflicted, a resync)
  // of a disk the VM already has: answered from the stream, as CNS would answer it.
  if (std::optional<std::string> uuid = AttachedInStream(*loc.vc, facts, loc.cns_id)) {
    VLOG(2, "volume {} is attached to node {} ({}) already", req.volume_id(), req.node_id(),
         vm.value);
    return *uuid;
  }

  const vsphere::cns::Operation attach = vsphere::cns::AttachOp(loc.cns_id, vm);
  absl::StatusOr<vsphere::cns::VolumeOperationResult> ran =
      RunTracked(absl::StrCat("attach-", req.volume_id(), "-", vm.value), *loc.vc, attach);
  absl::StatusOr<std::string> disk =
      ran.ok() ? vsphere::cns::DiskUuidOf(attach, *ran) : absl::StatusOr<std::string>(ran.status());
  if (absl::IsFailedPrecondition(disk.status())) {
    // ResourceInUse: attached somewhere, perhaps here already (a retried publish).
    absl::StatusOr<std::string> here = loc.vc->cns->AttachedDiskUuid(vm, loc.cns_id);
    if (!here.ok()) return Annotate(here.status(), "check where the volume is attached");
    if (here->empty()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "volume ", req.volume_id(), " is published to another node: ", disk.status().message()));
    }
    disk = *here;
  }
  if (!disk.ok()) {
    return Annotate(disk.status(),
                    absl::StrCat("attach volume ", req.volume_id(), " to node ", req.node_id()));
  }
  NoteChange(*loc.vc, vm, loc.cns_id, /*attached=*/true, *disk);
  VLOG(2, "published volume {} to node {} ({})", req.volume_id(), req.node_id(), vm.value);
  return disk;
}

std::optional<std::string> ControllerService::AttachedInStream(const VCenterEndpoint& vc,
                                                               const vsphere::VmFacts& vm,
                                                               const std::string& cns_id) {
  const std::string key = ChangeKey(vc, vm.moref, cns_id);
  auto disk = std::find_if(vm.disks.begin(), vm.disks.end(),
                           [&](const vsphere::VmDisk& d) { return d.volume_id == cns_id; });
  const bool shown = disk != vm.disks.end() && !disk->disk_uuid.empty();
  absl::MutexLock l(&names_mu_);
  auto it = recent_.find(key);
  if (it == recent_.end() || it->second.attached == shown) {
    // No change of ours, or the stream shows it: the stream speaks for itself.
    if (it != recent_.end()) recent_.erase(it);
    if (!shown) return std::nullopt;
    return disk->disk_uuid;
  }
  // The stream is behind our change: believe our attach while the stream may still catch up.
  const RecentChange& change = it->second;
  if (change.attached && absl::Now() - change.at < kAttachTrusted) return change.disk_uuid;
  return std::nullopt;  // our detach not shown yet (or an attach long unconfirmed): CNS is asked
}

void ControllerService::NoteChange(const VCenterEndpoint& vc, const vsphere::Moref& vm,
                                   const std::string& cns_id, bool attached,
                                   const std::string& disk_uuid) {
  const absl::Time now = absl::Now();
  absl::MutexLock l(&names_mu_);
  std::erase_if(recent_, [&](const auto& e) { return now - e.second.at > kChangeKept; });
  recent_[ChangeKey(vc, vm, cns_id)] = {attached, disk_uuid, now};
}

// An in-tree volume's disk must outlive a node VM deleted with the disk attached, as it did
// under the in-tree plugin: keepAfterDeleteVm, set once (the reference's
// ProtectVolumeFromVMDeletion) and recorded in its CnsVSphereVolumeMigration.
absl::Status ControllerService::ProtectInTree(const std::string& handle, const Located& loc) {
  if (!IsInTreeVolumePath(handle)) return absl::OkStatus();
  VolumeMigrations* migrations = cloud_->migrations();
  absl::StatusOr<InTreeVolume> known = migrations->Find(handle);
  if (!known.ok()) return known.status();
  if (known->protected_from_vm_delete) return absl::OkStatus();
  const std::string what = absl::StrCat("protect in-tree volume ", handle, " from VM deletion");
  absl::StatusOr<vsphere::cns::DiskBacking> disk = loc.vc->cns->VolumeInfo(loc.cns_id);
  if (!disk.ok()) return Annotate(disk.status(), what);
  if (!disk->keep_after_delete_vm) {
    absl::Status s = loc.vc->cns->KeepAfterVmDeletion(loc.cns_id, disk->datastore);
    if (!s.ok()) return Annotate(s, what);
    LOG_INFO("in-tree volume {} ({}): keepAfterDeleteVm set", handle, loc.cns_id);
  }
  return Annotate(migrations->MarkProtected(known->volume_id), what);
}

// ---- ControllerUnpublishVolume ----

grpc::Status ControllerService::ControllerUnpublishVolume(
    Ctx* ctx, const ::csi::v1::ControllerUnpublishVolumeRequest* req,
    ::csi::v1::ControllerUnpublishVolumeResponse*) {
  MarkFile(ctx, IsFileVolumeId(req->volume_id()));
  return Serve(ctx, [&] { return DoUnpublish(*req); });
}

absl::Status ControllerService::DoUnpublish(
    const ::csi::v1::ControllerUnpublishVolumeRequest& req) {
  if (req.volume_id().empty()) return absl::InvalidArgumentError("volume_id is required");
  CCM_ASSIGN_OR_RETURN(VolumeLocks::Guard guard, locks_.TryLock(req.volume_id()));
  absl::StatusOr<Located> loc = Locate(req.volume_id());
  if (absl::IsNotFound(loc.status())) return absl::OkStatus();  // no volume: nothing attached
  if (!loc.ok()) return loc.status();
  if (IsFileVolumeId(loc->cns_id)) return absl::OkStatus();  // a file share: nothing attached

  std::vector<vsphere::Moref> vms;
  if (req.node_id().empty()) {
    // The spec: no node ID means "from every node it is published to".
    CCM_ASSIGN_OR_RETURN(AttachmentMap m, loc->vc->vms->Attachments());
    for (const AttachedVm& a : m[loc->cns_id]) vms.push_back(a.vm);
  } else {
    absl::StatusOr<vsphere::Moref> vm = FindNodeVm(*loc->vc, req.node_id());
    if (absl::IsNotFound(vm.status())) return absl::OkStatus();  // no node: nothing attached
    if (!vm.ok()) return vm.status();
    vms.push_back(*vm);
  }
  for (const vsphere::Moref& vm : vms) {
    absl::Status s = RetryInTree(req.volume_id(), *loc, [&](const Located& l) {
      absl::Status detached = RunTracked(absl::StrCat("detach-", req.volume_id(), "-", vm.value),
                                         *l.vc, vsphere::cns::DetachOp(l.cns_id, vm))
                                  .status();
      // Whatever the outcome: the stream is not believed for this disk until it shows it gone.
      NoteChange(*l.vc, vm, l.cns_id, /*attached=*/false, "");
      return detached;
    });
    if (s.ok() || absl::IsNotFound(s)) continue;
    if (s.code() == absl::StatusCode::kUnavailable ||
        s.code() == absl::StatusCode::kDeadlineExceeded) {
      return Annotate(s, absl::StrCat("detach volume ", req.volume_id()));
    }
    // CNS refuses to detach a disk that is not attached: success if the VM does not hold it.
    absl::StatusOr<std::string> here = loc->vc->cns->AttachedDiskUuid(vm, loc->cns_id);
    if (absl::IsNotFound(here.status()) || (here.ok() && here->empty())) continue;
    return Annotate(s, absl::StrCat("detach volume ", req.volume_id(), " from ", vm.value));
  }
  VLOG(2, "unpublished volume {} from node {}", req.volume_id(), req.node_id());
  return absl::OkStatus();
}

// ---- GetCapacity ----

grpc::Status ControllerService::GetCapacity(Ctx* ctx, const ::csi::v1::GetCapacityRequest* req,
                                            ::csi::v1::GetCapacityResponse* resp) {
  return Serve(ctx, [&] { return DoCapacity(*req, resp); });
}

absl::Status ControllerService::DoCapacity(const ::csi::v1::GetCapacityRequest& req,
                                           ::csi::v1::GetCapacityResponse* resp) {
  CCM_ASSIGN_OR_RETURN(VolumeParameters params, ParseParameters(FromProto(req.parameters())));
  CCM_ASSIGN_OR_RETURN(PlacementView::SnapshotPtr view, cloud_->datastores().Snapshot());
  // Capabilities this driver cannot serve have no capacity at all (the spec's way to say so).
  if (!req.volume_capabilities().empty() &&
      !ValidateCapabilities(FromProto(req.volume_capabilities()), cap_options_).ok()) {
    resp->set_available_capacity(0);
    return absl::OkStatus();
  }
  Placed placed;
  std::vector<bool> compatible;
  if (!params.storage_policy_name.empty()) {
    CCM_ASSIGN_OR_RETURN(compatible, PolicyVerdicts(params.storage_policy_name, *view, placed));
  }
  // File volumes live on vSAN datastores only (which of them have file services is read when
  // one is created, not per capacity query: the free space of every vSAN one is reported).
  const bool file = IsFileVolumeRequest(FromProto(req.volume_capabilities()));
  std::vector<DatastoreCandidate> candidates;
  for (size_t i = 0; i < view->datastores.size(); ++i) {
    const DatastoreCandidate& c = view->datastores[i];
    if (file && c.type != "vsan") continue;
    const std::string& url = params.datastore_url;
    const bool named = url.empty() || SameDatastoreUrl(c.url, url) ||
                       (!c.datastore_cluster.empty() &&
                        (url == c.datastore_cluster || url == c.datastore_cluster_moref));
    if (named && (compatible.empty() || compatible[i])) candidates.push_back(c);
  }
  Segments segment;
  if (req.has_accessible_topology()) segment = FromProto(req.accessible_topology());
  SegmentCapacity cap = CapacityForSegment(candidates, view->hosts, segment);
  resp->set_available_capacity(cap.available_bytes);
  resp->mutable_maximum_volume_size()->set_value(cap.maximum_volume_bytes);
  return absl::OkStatus();
}

// ---- ControllerExpandVolume ----

// Before vSphere 7.0U2 vCenter cannot grow a disk attached to a VM: refused up front, naming the
// version and the VM, as the reference does (an offline expansion, detached, works).
absl::Status ControllerService::CheckOnlineExtend(const Located& loc, const std::string& volume) {
  CCM_ASSIGN_OR_RETURN(std::string api, loc.vc->cns->ApiVersion());
  if (vsphere::cns::HasOnlineExtend(api)) return absl::OkStatus();
  // Asked of vCenter, not of memory: a disk attached a moment ago counts.
  CCM_ASSIGN_OR_RETURN(AttachmentMap attached, loc.vc->vms->Attachments());
  auto it = attached.find(loc.cns_id);
  if (it == attached.end() || it->second.empty()) return absl::OkStatus();
  const AttachedVm& holder = it->second.front();
  return absl::FailedPreconditionError(absl::StrCat(
      "expand volume ", volume, ": it is attached to node ", holder.bios_uuid, " (VM ",
      holder.vm.value, "), and vCenter ", loc.vc->label, " (API ", api,
      ") cannot grow an attached volume: online expansion needs vSphere 7.0 Update 2 or later. "
      "Detach it (stop its Pods) and expand it again"));
}

grpc::Status ControllerService::ControllerExpandVolume(
    Ctx* ctx, const ::csi::v1::ControllerExpandVolumeRequest* req,
    ::csi::v1::ControllerExpandVolumeResponse* resp) {
  MarkFile(ctx, IsFileVolumeId(req->volume_id()));
  return Serve(ctx, [&] { return DoExpand(*req, resp); });
}

absl::Status ControllerService::DoExpand(const ::csi::v1::ControllerExpandVolumeRequest& req,
                                         ::csi::v1::ControllerExpandVolumeResponse* resp) {
  if (req.volume_id().empty()) return absl::InvalidArgumentError("volume_id is required");
  AccessType access = AccessType::kUnset;
  if (req.has_volume_capability()) {
    VolumeCapability cap = FromProto(req.volume_capability());
    CCM_RETURN_IF_ERROR(ValidateCapability(cap, cap_options_));
    access = cap.access_type;
  }
  CapacityRange range;
  if (req.has_capacity_range()) range = FromProto(req.capacity_range());
  // Checked before the look-up: a request without a range is wrong whatever the volume.
  CCM_RETURN_IF_ERROR(PlanExpand(req.has_capacity_range() ? &range : nullptr, 0, access).status());
  CCM_ASSIGN_OR_RETURN(VolumeLocks::Guard guard, locks_.TryLock(req.volume_id()));
  CCM_ASSIGN_OR_RETURN(Located loc, FindVolume(req.volume_id()));
  CCM_ASSIGN_OR_RETURN(ExpandPlan plan, PlanExpand(&range, loc.volume.capacity_mb, access));
  const bool file = loc.volume.volume_type == vsphere::cns::kVolumeTypeFile;
  // A file share's quota grows on the file server: nothing to resize on the nodes.
  if (file) plan.node_expansion_required = false;
  if (plan.needs_extend) {
    if (!file) CCM_RETURN_IF_ERROR(CheckNoSnapshots(loc, req.volume_id(), "expand"));
    if (!file) CCM_RETURN_IF_ERROR(CheckOnlineExtend(loc, req.volume_id()));
    absl::Status s = RunTracked(absl::StrCat("expand-", req.volume_id()), *loc.vc,
                                vsphere::cns::ExtendOp(loc.cns_id, plan.target_mib))
                         .status();
    if (!s.ok()) {
      return Annotate(
          s, absl::StrCat("extend volume ", req.volume_id(), " to ", plan.target_mib, " MiB"));
    }
    if (!file) {  // a share is thin: its quota takes no space
      cloud_->datastores().NoteChange(loc.vc->label, loc.volume.datastore_url,
                                      -MibToBytes(plan.target_mib - loc.volume.capacity_mb));
    }
    LOG_INFO("expanded volume {} from {} to {} MiB", req.volume_id(), loc.volume.capacity_mb,
             plan.target_mib);
  }
  resp->set_capacity_bytes(MibToBytes(plan.target_mib));
  resp->set_node_expansion_required(plan.node_expansion_required);
  return absl::OkStatus();
}

}  // namespace ccm::csi
