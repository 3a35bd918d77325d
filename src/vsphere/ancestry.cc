#include "vsphere/ancestry.h"

#include <set>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "vsphere/property_collector.h"

namespace ccm::vsphere {
namespace {
constexpr int kMaxDepth = 64;  // guards against cycles in a broken inventory
}

AncestryResolver::AncestryResolver(Client& client, absl::Duration ttl, Clock* clock)
    : client_(client), ttl_(ttl), clock_(clock ? clock : &Clock::Real()) {}

void AncestryResolver::Clear() {
  absl::MutexLock l(&mu_);
  cache_.clear();
}

int AncestryResolver::calls() const {
  absl::MutexLock l(&mu_);
  return calls_;
}

absl::Status AncestryResolver::Fill(std::vector<Moref> frontier) {
  for (int depth = 0; depth < kMaxDepth && !frontier.empty(); ++depth) {
    std::vector<Moref> missing;
    {
      absl::MutexLock l(&mu_);
      absl::Time now = clock_->Now();
      std::set<Moref> seen;
      for (const Moref& m : frontier) {
        if (m.empty() || !seen.insert(m).second) continue;
        auto it = cache_.find(m);
        if (it == cache_.end() || now - it->second.fetched > ttl_) missing.push_back(m);
      }
      if (!missing.empty()) ++calls_;
    }
    std::vector<Moref> next;
    if (!missing.empty()) {
      CCM_ASSIGN_OR_RETURN(
          RetrieveObjectsResult r,
          RetrieveObjects(client_, missing, {{"ManagedEntity", {"name", "parent"}}}));
      absl::MutexLock l(&mu_);
      absl::Time now = clock_->Now();
      for (const ObjectContent& o : r.objects) {
        Entry e{o.GetText("name"), o.GetMoref("parent"), now};
        next.push_back(e.parent);
        cache_[o.obj] = std::move(e);
      }
      for (const Moref& m : r.not_found) cache_[m] = Entry{"", {}, now};
    }
    // Cached objects' parents may themselves be stale or missing.
    absl::MutexLock l(&mu_);
    for (const Moref& m : frontier) {
      auto it = cache_.find(m);
      if (it != cache_.end() && !it->second.parent.empty()) next.push_back(it->second.parent);
    }
    frontier = std::move(next);
  }
  return absl::OkStatus();
}

std::vector<InventoryRef> AncestryResolver::ChainLocked(const Moref& start) const {
  std::vector<InventoryRef> out;
  Moref cur = start;
  for (int i = 0; i < kMaxDepth && !cur.empty(); ++i) {
    auto it = cache_.find(cur);
    if (it == cache_.end()) break;
    out.push_back({cur, it->second.name});
    cur = it->second.parent;
  }
  return out;
}

absl::StatusOr<std::map<Moref, std::vector<InventoryRef>>> AncestryResolver::ResolveChains(
    const std::vector<Moref>& objs) {
  CCM_RETURN_IF_ERROR(Fill(objs));
  std::map<Moref, std::vector<InventoryRef>> out;
  absl::MutexLock l(&mu_);
  for (const Moref& m : objs) out[m] = ChainLocked(m);
  return out;
}

VmAncestry AncestryResolver::AncestryLocked(const VmPlacement& p) const {
  VmAncestry a;
  a.vm = {p.vm, p.name};
  a.host_chain = ChainLocked(p.host);
  for (const InventoryRef& e : ChainLocked(p.resource_pool)) {
    if (e.ref.type != "ResourcePool" && e.ref.type != "VirtualApp") break;
    a.resource_pool_chain.push_back(e);
  }
  a.vm_chain.push_back(a.vm);
  for (InventoryRef& e : ChainLocked(p.parent)) a.vm_chain.push_back(std::move(e));
  for (const InventoryRef& e : a.vm_chain) {
    if (e.ref.type == "Datacenter") {
      a.datacenter = e;
      break;
    }
  }
  return a;
}

absl::StatusOr<std::vector<VmAncestry>> AncestryResolver::ResolvePlacements(
    const std::vector<VmPlacement>& vms) {
  std::vector<Moref> start;
  for (const VmPlacement& p : vms) {
    for (const Moref* m : {&p.parent, &p.resource_pool, &p.host}) {
      if (!m->empty()) start.push_back(*m);
    }
  }
  absl::Status s = Fill(start);
  if (!s.ok()) return Annotate(s, "resolve VM ancestry");
  std::vector<VmAncestry> out;
  out.reserve(vms.size());
  absl::MutexLock l(&mu_);
  for (const VmPlacement& p : vms) out.push_back(AncestryLocked(p));
  return out;
}

absl::StatusOr<std::vector<VmAncestry>> AncestryResolver::ResolveVms(
    const std::vector<Moref>& vms) {
  {
    absl::MutexLock l(&mu_);
    ++calls_;
  }
  // VMs are always fetched fresh: they move between hosts and pools.
  absl::StatusOr<RetrieveObjectsResult> r = RetrieveObjects(
      client_, vms, {{"VirtualMachine", {"name", "parent", "resourcePool", "runtime.host"}}});
  if (!r.ok()) return Annotate(r.status(), "resolve VM ancestry");
  std::map<Moref, VmPlacement> by_ref;
  for (const ObjectContent& o : r->objects) {
    by_ref[o.obj] = {o.obj, o.GetText("name"), o.GetMoref("runtime.host"),
                     o.GetMoref("resourcePool"), o.GetMoref("parent")};
  }
  std::vector<VmPlacement> found;  // input order
  for (const Moref& vm : vms) {
    if (auto it = by_ref.find(vm); it != by_ref.end()) found.push_back(it->second);
  }
  return ResolvePlacements(found);
}

}  // namespace ccm::vsphere
