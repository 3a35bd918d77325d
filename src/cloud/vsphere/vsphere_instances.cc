#include "cloud/vsphere/vsphere_instances.h"

#include "absl/strings/str_cat.h"
#include "cloud/core/addresses.h"
#include "cloud/core/guestinfo_metadata.h"
#include "cloud/core/instance_type.h"
#include "cloud/core/provider_id.h"
#include "cloud/core/zones.h"
#include "common/logging.h"
#include "common/status_macros.h"

namespace ccm::cloud {
namespace {

VmRef ToRef(const VCenter& vc, const vsphere::VmFacts& f) {
  return VmRef{vc.label(), f.datacenter_name, f.moref.value, f.bios_uuid, f.name};
}

// Converts a cache answer: NotFound = this vCenter has none (an empty answer), other errors are
// kept so that "could not ask" never turns into "gone".
absl::Status AppendMatches(const VCenter& vc, absl::StatusOr<std::vector<vsphere::VmFacts>> found,
                           std::vector<VmRef>* out) {
  if (!found.ok()) {
    if (absl::IsNotFound(found.status())) return absl::OkStatus();
    return Annotate(found.status(), absl::StrCat("vCenter ", vc.label()));
  }
  for (const auto& f : *found) out->push_back(ToRef(vc, f));
  return absl::OkStatus();
}

}  // namespace

VSphereInstances::VSphereInstances(const Config& config, std::vector<VCenter*> vcenters)
    : config_(config), vcenters_(std::move(vcenters)) {}

VCenter* VSphereInstances::Find(const std::string& label) {
  for (VCenter* vc : vcenters_)
    if (vc->label() == label) return vc;
  return nullptr;
}

VmLookups VSphereInstances::Lookups() {
  // Each look-up asks every vCenter. A match found is a fact even if another vCenter could not be
  // asked; an empty answer counts only when every vCenter answered.
  auto across = [this](auto ask) -> VmLookup {
    return [this, ask](absl::string_view key) -> absl::StatusOr<std::vector<VmRef>> {
      std::vector<VmRef> out;
      absl::Status first_error;
      for (VCenter* vc : vcenters_) {
        absl::Status s = AppendMatches(*vc, ask(*vc, std::string(key)), &out);
        if (!s.ok() && first_error.ok()) first_error = s;
      }
      if (out.empty() && !first_error.ok()) return first_error;
      return out;
    };
  };
  VmLookups l;
  l.by_uuid = across(
      [](VCenter& vc, const std::string& k) -> absl::StatusOr<std::vector<vsphere::VmFacts>> {
        auto f = vc.inventory().FindByUuid(k);
        if (!f.ok()) return f.status();
        return std::vector<vsphere::VmFacts>{*f};
      });
  l.by_hostname =
      across([](VCenter& vc, const std::string& k) { return vc.inventory().FindByHostname(k); });
  l.by_ip = across([](VCenter& vc, const std::string& k) { return vc.inventory().FindByIp(k); });
  return l;
}

absl::StatusOr<VmMatch> VSphereInstances::Match(const NodeIdentity& node) {
  return MatchNodeToVm(node, Lookups());
}

absl::StatusOr<vsphere::VmFacts> VSphereInstances::Facts(const VmMatch& m) {
  VCenter* vc = Find(m.vm.vcenter);
  if (vc == nullptr) return absl::InternalError(absl::StrCat("unknown vCenter ", m.vm.vcenter));
  auto f = vc->inventory().FindByMoid(m.vm.moid);
  // Gone between the match and now: the next call sees it as NotFound through the match.
  if (!f.ok()) return Annotate(f.status(), absl::StrCat("VM ", DebugString(m.vm)));
  return f;
}

absl::Status VSphereInstances::Ready() const {
  std::string not_synced;
  for (VCenter* vc : vcenters_) {
    vsphere::InventoryCacheStats st = vc->inventory().stats();
    if (st.synced) continue;
    absl::StrAppend(&not_synced, not_synced.empty() ? "" : "; ", "vCenter ", vc->label(),
                    ": inventory not synced",
                    st.last_error.ok() ? "" : absl::StrCat(": ", st.last_error.message()));
  }
  if (not_synced.empty()) return absl::OkStatus();
  return absl::UnavailableError(not_synced);
}

absl::StatusOr<bool> VSphereInstances::InstanceExists(const NodeIdentity& node) {
  auto m = Match(node);
  if (m.ok()) return true;
  if (absl::IsNotFound(m.status())) return false;
  return m.status();
}

absl::StatusOr<bool> VSphereInstances::InstanceShutdown(const NodeIdentity& node) {
  CCM_ASSIGN_OR_RETURN(VmMatch m, Match(node));
  CCM_ASSIGN_OR_RETURN(vsphere::VmFacts f, Facts(m));
  return !f.powered_on();
}

absl::StatusOr<InstanceMetadata> VSphereInstances::GetInstanceMetadata(const NodeIdentity& node) {
  CCM_ASSIGN_OR_RETURN(VmMatch m, Match(node));
  CCM_ASSIGN_OR_RETURN(vsphere::VmFacts f, Facts(m));
  VCenter* vc = Find(m.vm.vcenter);
  const std::string what = absl::StrCat("node ", node.name, " (VM ", DebugString(m.vm), ")");

  InstanceMetadata md;
  CCM_ASSIGN_OR_RETURN(md.provider_id, FormatProviderId(f.bios_uuid));
  const std::string& guest_id = f.config_guest_id.empty() ? f.guest_guest_id : f.config_guest_id;
  md.instance_type = FormatInstanceType(f.num_cpu, f.memory_mb, guest_id);

  NodeAddressInput in;
  in.node_name = node.name;
  in.guest_hostname = f.guest_hostname;
  in.ip_families = vc->config().ip_families;
  in.provided_node_ip = node.provided_node_ip;
  for (const auto& nic : f.nics)
    in.nics.push_back({nic.network, nic.device_config_id, nic.ip_addresses});
  if (!f.metadata.empty()) {
    auto statics = ParseGuestinfoStaticAddresses(f.metadata, f.metadata_encoding);
    if (statics.ok()) {
      in.static_addresses = *statics;
    } else {
      VLOG(2, "{}: guestinfo.metadata ignored: {}", what, statics.status().message());
    }
  }
  auto addrs = SelectNodeAddresses(in, config_.nodes);
  if (!addrs.ok()) return Annotate(addrs.status(), what);
  md.node_addresses = *std::move(addrs);

  if (config_.labels.ZonesEnabled()) {
    auto zr = vc->topology().ZoneRegionFor(f, config_.labels.zone, config_.labels.region);
    if (absl::IsNotFound(zr.status())) {
      // The VM vanished while resolving: report it as a failure to ask, the match decides "gone".
      return absl::UnavailableError(zr.status().message());
    }
    if (!zr.ok()) return Annotate(zr.status(), what);
    if (zr->has_value()) {
      md.zone = (*zr)->zone;
      md.region = (*zr)->region;
    }
  }
  return md;
}

}  // namespace ccm::cloud
