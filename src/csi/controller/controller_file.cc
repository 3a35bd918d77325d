// File volumes (vSAN file shares): CreateVolume for the multi-node access modes and
// ControllerPublishVolume's NFSv4.1 access point (see controller_service.h and
// csi/core/file_volume.h, csi/core/file_placement.h for the rules).
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/logging.h"
#include "common/status_macros.h"
#include "csi/controller/controller_service.h"
#include "csi/controller/create_helpers.h"
#include "csi/core/constants.h"
#include "csi/core/file_volume.h"
#include "csi/core/volume_id.h"
#include "csi/server/proto_convert.h"

namespace ccm::csi {
namespace {

namespace cns = vsphere::cns;

std::vector<cns::NetPermission> Permissions(const cloud::Config& config) {
  std::vector<NetRule> rules;
  for (const cloud::NetPermissionConfig& p : config.net_permissions) {
    rules.push_back({p.ips, p.permissions, p.root_squash});
  }
  std::vector<cns::NetPermission> out;
  for (const ShareAccess& a : ShareAccessFrom(rules)) {
    out.push_back({a.ips, a.permissions, a.allow_root});
  }
  return out;
}

}  // namespace

absl::StatusOr<std::map<std::string, std::vector<FileServiceCluster>>>
ControllerService::FileServiceClusters(const CreatePlan& plan) {
  std::map<std::string, std::vector<FileServiceCluster>> out;
  std::vector<std::string> failed;
  for (VCenterEndpoint& vc : cloud_->vcenters()) {
    if (vc.file_services == nullptr || std::find(plan.unreachable.begin(), plan.unreachable.end(),
                                                 vc.label) != plan.unreachable.end()) {
      continue;
    }
    absl::StatusOr<std::vector<FileServiceCluster>> c = vc.file_services->Clusters();
    if (!c.ok()) {
      failed.push_back(absl::StrCat(vc.label, ": ", c.status().message()));
      continue;
    }
    out[vc.label] = *std::move(c);
  }
  if (out.empty() && !failed.empty()) {
    return absl::UnavailableError(
        absl::StrCat("read the vSAN file services: ", absl::StrJoin(failed, "; ")));
  }
  for (const std::string& f : failed) LOG_WARN("CreateVolume {}: {}", plan.name, f);
  return out;
}

absl::StatusOr<ControllerService::FilePlaced> ControllerService::PlaceFile(const CreatePlan& plan) {
  FilePlaced out;
  CCM_ASSIGN_OR_RETURN(out.placed.view, cloud_->datastores().Snapshot());
  const InventorySnapshot& view = *out.placed.view;
  CCM_ASSIGN_OR_RETURN(auto clusters, FileServiceClusters(plan));
  std::map<std::string, FileShareTargets> targets;
  for (const VCenterEndpoint& vc : cloud_->vcenters()) targets[vc.label] = vc.file_share_targets;
  FilePlacementRequest req;
  req.datastore_url = plan.params.datastore_url;
  if (plan.requirement) req.requirement = &*plan.requirement;
  std::vector<bool> compatible;
  if (!plan.params.storage_policy_name.empty()) {
    CCM_ASSIGN_OR_RETURN(compatible,
                         PolicyVerdicts(plan.params.storage_policy_name, view, out.placed));
    req.compatible = &compatible;
    req.policy_name = plan.params.storage_policy_name;
  }
  absl::StatusOr<std::vector<size_t>> chosen =
      ChooseFileShareDatastores(view.datastores, view.hosts, clusters, targets, req);
  if (!chosen.ok()) {
    if (view.unloaded.empty()) return chosen.status();
    return absl::UnavailableError(absl::StrCat(
        chosen.status().message(),
        " (not known yet: ", absl::StrJoin(view.unloaded, "; ", absl::PairFormatter(": ")), ")"));
  }
  // The first vCenter with candidates; CNS picks among its datastores, as the reference lets it.
  out.vcenter = view.datastores[chosen->front()].vcenter;
  for (size_t i : *chosen) {
    if (view.datastores[i].vcenter == out.vcenter) out.chosen.push_back(i);
  }
  return out;
}

absl::Status ControllerService::CreateFileVolume(const CreatePlan& plan,
                                                 ::csi::v1::CreateVolumeResponse* resp) {
  CCM_ASSIGN_OR_RETURN(FilePlaced fp, PlaceFile(plan));
  const InventorySnapshot& view = *fp.placed.view;
  const std::string& label = fp.vcenter;
  VCenterEndpoint* vc = Endpoint(label);
  if (vc == nullptr) return absl::InternalError(absl::StrCat("no vCenter ", label));
  cns::CreateSpec spec;
  spec.name = plan.name;
  spec.volume_type = cns::kVolumeTypeFile;
  spec.capacity_mb = plan.size_mib;
  spec.permissions = Permissions(cloud_->config());
  std::vector<std::string> names;
  for (size_t i : fp.chosen) {
    spec.datastores.push_back({"Datastore", view.datastores[i].moref});
    names.push_back(view.datastores[i].name);
  }
  if (auto it = fp.placed.policy_ids.find(label); it != fp.placed.policy_ids.end())
    spec.storage_policy_id = it->second;
  spec.metadata.container_cluster = Cluster(*vc);
  spec.metadata.container_cluster_array = {spec.metadata.container_cluster};
  const cns::Operation op = cns::CreateOp(spec);
  absl::StatusOr<cns::VolumeOperationResult> ran =
      RunTracked(plan.name, *vc, op, plan.record ? &*plan.record : nullptr);
  if (!ran.ok()) {
    return Annotate(ran.status(), absl::StrCat("create file volume ", plan.name, " on ",
                                               absl::StrJoin(names, ", ")));
  }
  CCM_ASSIGN_OR_RETURN(cns::CreateResult created, cns::CreateResultOf(op, *ran));
  CCM_ASSIGN_OR_RETURN(const std::string id, NewVolumeId(created.volume_id, vc->label));
  internal::FillVolume(id, plan.size_mib, {}, resp, /*file=*/true);
  LOG_INFO("created file volume {} ({}) of {} MiB on datastore {} of vCenter {}", plan.name, id,
           plan.size_mib, created.datastore.value, label);
  return absl::OkStatus();
}

absl::Status ControllerService::PublishFileVolume(
    const ::csi::v1::ControllerPublishVolumeRequest& req,
    ::csi::v1::ControllerPublishVolumeResponse* resp) {
  CCM_ASSIGN_OR_RETURN(Located loc, FindVolume(req.volume_id()));
  if (loc.volume.volume_type != cns::kVolumeTypeFile) {
    return absl::FailedPreconditionError(absl::StrCat(
        "volume ", req.volume_id(),
        " is a block volume: it attaches to one node and is published with a single-node "
        "access mode, not ",
        AccessModeName(FromProto(req.volume_capability()).mode)));
  }
  absl::StatusOr<StringMap> context = FilePublishContext(loc.volume.access_points);
  if (!context.ok()) {
    return Annotate(context.status(), absl::StrCat("publish file volume ", req.volume_id()));
  }
  ToProto(*context, resp->mutable_publish_context());
  VLOG(2, "published file volume {} to node {} ({})", req.volume_id(), req.node_id(),
       context->at(std::string(kPublishNfsv4AccessPoint)));
  return absl::OkStatus();
}

}  // namespace ccm::csi
