// ListVolumes: one snapshot per listing (see controller_service.h).
#include <malloc.h>

#include <algorithm>
#include <map>

#include "absl/strings/str_cat.h"
#include "common/logging.h"
#include "common/status_macros.h"
#include "csi/controller/attachments.h"
#include "csi/controller/controller_service.h"
#include "csi/controller/fault_type.h"
#include "csi/core/capacity.h"
#include "csi/core/paging.h"
#include "csi/core/volume_id.h"
#include "csi/server/grpc_status.h"

namespace ccm::csi {
namespace {

namespace cns = vsphere::cns;

// How long the pages of a listing are served from its snapshot; a listing older than this is
// read again (its remaining pages then come from the new one).
constexpr absl::Duration kListingTtl = absl::Minutes(5);
constexpr int kListingQueryPage = 1000;

}  // namespace

grpc::Status ControllerService::ListVolumes(Ctx* ctx, const ::csi::v1::ListVolumesRequest* req,
                                            ::csi::v1::ListVolumesResponse* resp) {
  return Serve(ctx, [&] { return DoList(*req, resp); });
}

absl::Status ControllerService::DoList(const ::csi::v1::ListVolumesRequest& req,
                                       ::csi::v1::ListVolumesResponse* resp) {
  CCM_ASSIGN_OR_RETURN(uint64_t offset, ParseStartingToken(req.starting_token()));
  if (req.max_entries() < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("max_entries ", req.max_entries(), " must not be negative"));
  }
  Listing listing;
  {
    absl::MutexLock l(&listing_mu_);
    if (offset > 0 && listing_ != nullptr && absl::Now() - listing_at_ < kListingTtl) {
      listing = listing_;
    }
  }
  if (listing == nullptr) {
    CCM_ASSIGN_OR_RETURN(listing, ReadListing());
    absl::MutexLock l(&listing_mu_);
    listing_ = listing;
    listing_at_ = absl::Now();
  }
  const size_t default_page = std::max(1, cloud_->config().global.query_limit);
  CCM_ASSIGN_OR_RETURN(
      Page p, PageOf(listing->size(), req.starting_token(), req.max_entries(), default_page));
  for (size_t i = p.begin; i < p.end; ++i) {
    const ListedVolume& v = (*listing)[i];
    auto* e = resp->add_entries();
    e->mutable_volume()->set_volume_id(v.id);
    e->mutable_volume()->set_capacity_bytes(MibToBytes(v.capacity_mb));
    auto* status = e->mutable_status();  // present even when published nowhere
    for (const std::string& node : v.published) status->add_published_node_ids(node);
  }
  resp->set_next_token(p.next_token);
  if (p.next_token.empty()) ReleaseListing(listing);
  return absl::OkStatus();
}

// The last page was served: the snapshot goes (a CO asking for it again gets a new one) and the
// memory it took goes back to the system.
void ControllerService::ReleaseListing(Listing& served) {
  {
    absl::MutexLock l(&listing_mu_);
    if (listing_ == served) listing_.reset();
  }
  const bool big = served->size() >= 1000;
  served.reset();
  if (big) malloc_trim(0);
}

absl::StatusOr<ControllerService::Listing> ControllerService::ReadListing() {
  auto out = std::make_shared<std::vector<ListedVolume>>();
  // In-tree volumes under CSI migration are known to Kubernetes by their VMDK path: listed by
  // it, the external-attacher matches them with their VolumeAttachments (listed by their CNS ID,
  // it marks each detached and publishes it again at every reconciliation).
  std::map<std::string, std::string> paths;
  if (VolumeMigrations* m = cloud_->migrations(); m != nullptr) {
    absl::StatusOr<std::map<std::string, std::string>> p = m->PathsByVolumeId();
    if (!p.ok()) return Annotate(p.status(), "list volumes");
    paths = *std::move(p);
  }
  // CNS pages of at most kListingQueryPage: an answer's XML is parsed whole, and 10,000 volumes
  // with their metadata would be tens of MB at once.
  const int64_t page = std::clamp(cloud_->config().global.query_limit, 1, kListingQueryPage);
  for (VCenterEndpoint& vc : cloud_->vcenters()) {
    cns::QueryFilter filter;
    filter.container_cluster_ids = ClusterIds();
    filter.cursor = cns::Cursor{0, page, 0};
    std::vector<std::pair<std::string, int64_t>> volumes;  // id, capacity: all a listing keeps
    while (true) {
      absl::StatusOr<cns::QueryResult> r = vc.cns->QueryVolume(filter);
      if (!r.ok()) return Annotate(r.status(), absl::StrCat("list volumes of ", vc.label));
      for (cns::Volume& v : r->volumes) volumes.emplace_back(std::move(v.volume_id), v.capacity_mb);
      if (r->volumes.empty() || r->cursor.offset >= r->cursor.total_records) break;
      filter.cursor->offset = r->cursor.offset;
    }
    // Published nodes: one scan of the VMs' disks per vCenter per listing.
    absl::StatusOr<AttachmentMap> attached = vc.vms->Attachments();
    if (!attached.ok()) {
      return Annotate(attached.status(), "find the nodes volumes are published to");
    }
    for (const auto& [id, capacity_mb] : volumes) {
      auto path = paths.find(id);
      ListedVolume lv{path != paths.end() ? path->second : VolumeId(id, vc.label), capacity_mb, {}};
      if (auto it = attached->find(id); it != attached->end()) {
        for (const AttachedVm& vm : it->second) lv.published.push_back(vm.bios_uuid);
      }
      out->push_back(std::move(lv));
    }
  }
  CCM_RETURN_IF_ERROR(AddFilePublications(*out));
  std::sort(out->begin(), out->end(),
            [](const ListedVolume& a, const ListedVolume& b) { return a.id < b.id; });
  CCM_RETURN_IF_ERROR(CheckListingThreshold(out->size()));
  VLOG(1, "ListVolumes: read {} volumes", out->size());
  return Listing(std::move(out));
}

// A file volume is published where its VolumeAttachments say (vCenter has no record of it): the
// external-attacher's reconciliation then finds every attached one listed on its node.
absl::Status ControllerService::AddFilePublications(std::vector<ListedVolume>& listing) {
  if (std::none_of(listing.begin(), listing.end(),
                   [](const ListedVolume& v) { return IsFileVolumeId(v.id); })) {
    return absl::OkStatus();
  }
  CCM_ASSIGN_OR_RETURN(auto by_handle, cloud_->FilePublications());
  if (by_handle.empty()) return absl::OkStatus();
  NodeVmSource* nodes = cloud_->nodes();
  if (nodes == nullptr) return absl::OkStatus();
  CCM_ASSIGN_OR_RETURN(std::vector<NodeVmRef> refs, nodes->List());
  std::map<std::string, std::string> uuid_of;
  for (const NodeVmRef& r : refs) uuid_of[r.node] = r.uuid;
  for (ListedVolume& v : listing) {
    auto it = by_handle.find(v.id);
    if (it == by_handle.end()) continue;
    for (const std::string& node : it->second) {
      if (auto u = uuid_of.find(node); u != uuid_of.end()) v.published.push_back(u->second);
    }
  }
  return absl::OkStatus();
}

absl::Status ControllerService::CheckListingThreshold(size_t cns_volumes) const {
  PvCounter* pvs = cloud_->pvs();
  if (pvs == nullptr) return absl::OkStatus();
  absl::StatusOr<size_t> in_kubernetes = pvs->Count();
  if (!in_kubernetes.ok()) return in_kubernetes.status();
  const int threshold = cloud_->config().global.list_volume_threshold;
  if (*in_kubernetes > cns_volumes &&
      *in_kubernetes - cns_volumes > static_cast<size_t>(threshold)) {
    // As the reference: the external-attacher would act on a listing this far off (detach).
    return absl::FailedPreconditionError(absl::StrCat(
        "ListVolumes: ", *in_kubernetes, " PersistentVolumes of csi.vsphere.vmware.com but ",
        cns_volumes, " CNS volumes of cluster ", cloud_->config().global.cluster_id,
        ": more than list-volume-threshold (", threshold,
        ") apart, Kubernetes and CNS are out of sync (is the cluster-id right?)"));
  }
  return absl::OkStatus();
}

}  // namespace ccm::csi
