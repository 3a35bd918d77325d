#include "csi/controller/node_vm_topology.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace ccm::csi {

NodeVmTopologyFromVCenter::NodeVmTopologyFromVCenter(std::vector<NodeVmVCenter> vcenters,
                                                     PlacementView* view)
    : vcenters_(std::move(vcenters)), view_(view) {
  for (const NodeVmVCenter& vc : vcenters_) {
    listeners_.push_back(vc.vms->AddListener(
        [this](const std::string&, vsphere::VmChangeKind) { vm_changes_.fetch_add(1); }));
  }
}

NodeVmTopologyFromVCenter::~NodeVmTopologyFromVCenter() {
  for (size_t i = 0; i < vcenters_.size(); ++i) vcenters_[i].vms->RemoveListener(listeners_[i]);
}

uint64_t NodeVmTopologyFromVCenter::generation() const {
  uint64_t g = vm_changes_.load();
  if (view_ != nullptr) {
    absl::StatusOr<PlacementView::SnapshotPtr> s = view_->Snapshot();
    if (s.ok()) g += (*s)->generation << 32;
  }
  return g;
}

NodeVmTopology NodeVmTopologyFromVCenter::Lookup(const std::string& vm_uuid) const {
  NodeVmTopology out;
  std::vector<std::string> unavailable, searched;
  for (const NodeVmVCenter& vc : vcenters_) {
    absl::StatusOr<vsphere::VmFacts> vm = vc.vms->FindByUuid(vm_uuid);
    searched.push_back(vc.label);
    if (absl::IsNotFound(vm.status())) continue;
    if (!vm.ok()) {
      unavailable.push_back(absl::StrCat(vc.label, ": ", vm.status().message()));
      continue;
    }
    out.vm = absl::StrCat(vm->moref.value, " (", vm->name, ") on ", vm->host.value, " in vCenter ",
                          vc.label);
    if (view_ == nullptr) return out;
    absl::StatusOr<PlacementView::SnapshotPtr> snap = view_->Snapshot();
    if (!snap.ok()) {
      out.state = absl::UnavailableError(absl::StrCat("hosts: ", snap.status().message()));
      return out;
    }
    for (const HostRecord& h : (*snap)->hosts) {
      if (h.vcenter != vc.label || h.moid != vm->host.value) continue;
      out.vm = absl::StrCat(vm->moref.value, " (", vm->name, ") on ", h.moid, " (", h.name,
                            ") in vCenter ", vc.label);
      if (h.segment) {
        out.segment = *h.segment;
      } else {
        out.state =
            absl::FailedPreconditionError(h.problem.empty() ? "no topology tags" : h.problem);
      }
      return out;
    }
    view_->RequestFullRefresh();  // a host the view does not have yet
    out.state = absl::UnavailableError(
        absl::StrCat("host ", vm->host.value, " of ", out.vm, " is not in the inventory yet"));
    return out;
  }
  if (!unavailable.empty()) {
    out.state = absl::UnavailableError(absl::StrJoin(unavailable, "; "));
  } else {
    out.state = absl::NotFoundError(absl::StrCat("no VM with BIOS UUID ", vm_uuid, " in vCenter ",
                                                 absl::StrJoin(searched, ", ")));
  }
  return out;
}

}  // namespace ccm::csi
