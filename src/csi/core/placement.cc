#include "csi/core/placement.h"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "csi/core/constants.h"
#include "csi/core/placement_hosts.h"
#include "csi/core/topology.h"

namespace ccm::csi {
namespace {

bool HasRequirement(const TopologyRequirement* r) {
  return r != nullptr && (!r->requisite.empty() || !r->preferred.empty());
}

std::string Describe(const DatastoreCandidate& c) {
  std::string where = absl::StrCat("vCenter ", c.vcenter);
  if (!c.datacenter.empty()) absl::StrAppend(&where, ", datacenter ", c.datacenter);
  if (!c.datastore_cluster.empty())
    absl::StrAppend(&where, ", datastore cluster ", c.datastore_cluster);
  return absl::StrCat("datastore \"", c.name, "\" (", c.url, ", ", where, ")");
}

std::string DescribeSegments(const std::vector<Segments>& segments) {
  return absl::StrCat(
      "[",
      absl::StrJoin(segments, ", ",
                    [](std::string* out, const Segments& s) { out->append(FormatSegments(s)); }),
      "]");
}

// At most `n` reasons, then how many more.
std::string FirstReasons(const std::vector<std::string>& reasons, size_t n = 5) {
  std::vector<std::string> shown(reasons.begin(),
                                 reasons.begin() + static_cast<long>(std::min(n, reasons.size())));
  std::string out = absl::StrJoin(shown, "; ");
  if (reasons.size() > n) absl::StrAppend(&out, "; and ", reasons.size() - n, " more");
  return out;
}

void SortByFreeSpace(const std::vector<DatastoreCandidate>& c, std::vector<size_t>& idx) {
  std::stable_sort(idx.begin(), idx.end(), [&](size_t a, size_t b) {
    if (c[a].free_bytes != c[b].free_bytes) return c[a].free_bytes > c[b].free_bytes;
    if (c[a].vcenter != c[b].vcenter) return c[a].vcenter < c[b].vcenter;
    return c[a].url < c[b].url;
  });
}

bool PreferredIn(const DatastoreCandidate& c, const Segments& segment) {
  for (const auto& [key, value] : segment) {
    if (std::find(c.preferred_for.begin(), c.preferred_for.end(), value) != c.preferred_for.end())
      return true;
  }
  return false;
}

// The candidates `datastoreurl` allows: a datastore by URL, or a datastore cluster's members.
absl::StatusOr<std::vector<size_t>> SelectPool(const std::vector<DatastoreCandidate>& candidates,
                                               const std::string& url) {
  std::vector<size_t> pool;
  for (size_t i = 0; i < candidates.size(); ++i) {
    const DatastoreCandidate& c = candidates[i];
    const bool pod = !c.datastore_cluster.empty() &&
                     (url == c.datastore_cluster || url == c.datastore_cluster_moref);
    if (url.empty() || SameDatastoreUrl(c.url, url) || pod) pool.push_back(i);
  }
  if (!url.empty() && pool.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "datastoreurl \"", url,
        "\" is neither a datastore URL nor a datastore cluster of the configured vCenters and "
        "datacenters"));
  }
  return pool;
}

struct Qualified {
  std::vector<size_t> order;         // qualifying candidates, in placement order
  std::vector<std::string> why_not;  // per candidate that does not qualify, the reason
};

// Without requirements: mounted by the host of every node VM.
Qualified SharedByNodes(const std::vector<DatastoreCandidate>& c, const std::vector<size_t>& pool,
                        const HostIndex& hosts, const std::vector<NodeHost>& nodes) {
  std::vector<HostKey> required;
  for (const NodeHost& n : nodes) required.push_back({n.vcenter, n.host});
  std::sort(required.begin(), required.end());
  required.erase(std::unique(required.begin(), required.end()), required.end());
  Qualified q;
  for (size_t i : pool) {
    std::vector<HostKey> missing = MissingHosts(c[i], required);
    if (missing.empty()) {
      q.order.push_back(i);
    } else {
      q.why_not.push_back(absl::StrCat(Describe(c[i]), " is not mounted on ",
                                       hosts.DescribeHosts(missing, "the host of a node VM")));
    }
  }
  SortByFreeSpace(c, q.order);
  return q;
}

// With requirements: per requested segment, the candidates every host of a matching complete
// segment mounts; preferred datastores of the segment first.
Qualified SharedBySegments(const std::vector<DatastoreCandidate>& c,
                           const std::vector<size_t>& pool, const HostIndex& hosts,
                           const TopologyRequirement& r) {
  std::vector<Segments> groups = r.preferred;
  for (const Segments& s : r.requisite) {
    if (std::find(groups.begin(), groups.end(), s) == groups.end()) groups.push_back(s);
  }
  Qualified q;
  std::set<size_t> seen;
  std::map<size_t, std::string> why;
  for (const Segments& requested : groups) {
    std::vector<Segments> complete = hosts.SegmentsMatching(requested);
    if (complete.empty()) {
      q.why_not.push_back(absl::StrCat("no ESXi host has the topology ", FormatSegments(requested),
                                       " (tags on hosts, clusters or datacenters)"));
    }
    for (const Segments& segment : complete) {
      const std::vector<HostKey>& members = hosts.HostsOf(segment);
      std::vector<size_t> preferred, rest;
      for (size_t i : pool) {
        if (seen.count(i)) continue;
        std::vector<HostKey> missing = MissingHosts(c[i], members);
        if (!missing.empty()) {
          why.emplace(i, absl::StrCat(Describe(c[i]), " is not mounted on ",
                                      hosts.DescribeHosts(missing, "a host"), " of ",
                                      FormatSegments(segment)));
          continue;
        }
        (PreferredIn(c[i], segment) ? preferred : rest).push_back(i);
      }
      SortByFreeSpace(c, preferred);
      SortByFreeSpace(c, rest);
      for (const std::vector<size_t>* part : {&preferred, &rest}) {
        for (size_t i : *part) {
          seen.insert(i);
          q.order.push_back(i);
        }
      }
    }
  }
  for (const auto& [i, reason] : why) {
    if (!seen.count(i)) q.why_not.push_back(reason);
  }
  return q;
}

absl::Status NotShared(const std::vector<DatastoreCandidate>& c, const PlacementRequest& request,
                       const Qualified& q, bool constrained) {
  const std::string reasons = FirstReasons(q.why_not);
  if (!request.datastore_url.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat("datastoreurl \"", request.datastore_url, "\" cannot be used: ", reasons));
  }
  if (c.empty()) return absl::ResourceExhaustedError("no datastore is available");
  if (constrained) {
    const TopologyRequirement& r = *request.requirement;
    return absl::ResourceExhaustedError(absl::StrCat(
        "no datastore is mounted by every host of the requested topology ",
        DescribeSegments(r.requisite.empty() ? r.preferred : r.requisite), ": ", reasons));
  }
  return absl::ResourceExhaustedError(
      absl::StrCat("no datastore is mounted by the hosts of every node VM (a volume without "
                   "topology requirements must be usable on any node): ",
                   reasons));
}

// Keeps the policy-compatible candidates; the error names the policy and what was shared.
absl::Status ApplyPolicy(const std::vector<DatastoreCandidate>& c, const PlacementRequest& request,
                         std::vector<size_t>& order) {
  if (request.compatible == nullptr) return absl::OkStatus();
  std::vector<size_t> kept;
  std::vector<std::string> refused;
  for (size_t i : order) {
    if ((*request.compatible)[i]) {
      kept.push_back(i);
    } else {
      refused.push_back(Describe(c[i]));
    }
  }
  if (kept.empty()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "no datastore that the nodes share is compatible with storage policy \"",
        request.policy_name, "\"; shared but not compatible: ", FirstReasons(refused)));
  }
  order = std::move(kept);
  return absl::OkStatus();
}

}  // namespace

bool SameDatastoreUrl(const std::string& a, const std::string& b) {
  return absl::StripSuffix(a, "/") == absl::StripSuffix(b, "/");
}

std::vector<Segments> AccessibleSegments(const DatastoreCandidate& c,
                                         const std::vector<HostRecord>& hosts) {
  return HostIndex(hosts).FullyMounting(c);
}

namespace {

// Datastores no volume may be created on, taken out of the pool; every error names them.
struct LeftOut {
  std::vector<std::string> unprivileged;  // "<datastore>: <why>"
  std::vector<std::string> suspended;     // "<datastore>"
  bool empty() const { return unprivileged.empty() && suspended.empty(); }
  // `s` naming them (OK stays OK).
  absl::Status Noted(absl::Status s) const {
    if (s.ok() || empty()) return s;
    std::string msg(s.message());
    if (!suspended.empty())
      absl::StrAppend(&msg, "; ", kSuspendedForNewVolumes, FirstReasons(suspended));
    if (!unprivileged.empty())
      absl::StrAppend(&msg, kSkippedForPrivileges, FirstReasons(unprivileged));
    return absl::Status(s.code(), msg);
  }
};

LeftOut LeaveOut(const std::vector<DatastoreCandidate>& candidates, std::vector<size_t>& pool) {
  LeftOut left;
  std::erase_if(pool, [&](size_t i) {
    const DatastoreCandidate& c = candidates[i];
    if (c.suspended) {
      left.suspended.push_back(Describe(c));
    } else if (!c.no_privilege.empty()) {
      left.unprivileged.push_back(absl::StrCat(Describe(c), ": ", c.no_privilege));
    } else {
      return false;
    }
    return true;
  });
  return left;
}

// Every datastore of the pool was left out: FailedPrecondition naming them and why.
absl::Status NoneLeft(const LeftOut& left, const std::string& url) {
  const std::string what = url.empty() ? "datastore" : absl::StrCat("datastore of \"", url, "\"");
  if (left.suspended.empty()) {
    return absl::FailedPreconditionError(absl::StrCat(
        kNoPrivilegeOnAny, what, " (Datastore.FileManagement and System.Read are needed): ",
        FirstReasons(left.unprivileged)));
  }
  return left.Noted(absl::FailedPreconditionError(absl::StrCat("no ", what, kNoneTakesNewVolumes)));
}

}  // namespace

absl::StatusOr<std::vector<PlacementChoice>> ChooseDatastores(
    const std::vector<DatastoreCandidate>& candidates, const std::vector<HostRecord>& hosts,
    const PlacementRequest& request) {
  const bool constrained = HasRequirement(request.requirement);
  if (constrained && !request.topology_configured) {
    return absl::InvalidArgumentError(
        "the request has accessibility requirements, but no topology is configured ([Labels] "
        "topology-categories, or zone and region, in csi-vsphere.conf)");
  }
  std::vector<size_t> pool;
  {
    absl::StatusOr<std::vector<size_t>> p = SelectPool(candidates, request.datastore_url);
    if (!p.ok()) return p.status();
    pool = *std::move(p);
  }
  const LeftOut left = LeaveOut(candidates, pool);
  if (pool.empty() && !left.empty()) return NoneLeft(left, request.datastore_url);
  auto noted = [&left](absl::Status s) { return left.Noted(std::move(s)); };
  const HostIndex index(hosts);
  if (!constrained && request.node_hosts.empty()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "no node VM is known (no CSINode with a node ID of ", kDriverName,
        " and no Node whose providerID names a VM of the configured vCenters",
        request.unknown_nodes.empty() ? ""
                                      : absl::StrCat("; Nodes known by neither: ",
                                                     absl::StrJoin(request.unknown_nodes, ", ")),
        "): a volume without topology requirements goes to a datastore every node VM's host "
        "mounts"));
  }
  Qualified q = constrained ? SharedBySegments(candidates, pool, index, *request.requirement)
                            : SharedByNodes(candidates, pool, index, request.node_hosts);
  if (q.order.empty()) return noted(NotShared(candidates, request, q, constrained));
  if (absl::Status s = ApplyPolicy(candidates, request, q.order); !s.ok()) return noted(s);

  const int64_t need = request.size_mib * kMiB;
  std::vector<PlacementChoice> out;
  for (size_t i : q.order) {
    if (candidates[i].free_bytes < need) continue;
    PlacementChoice choice;
    choice.candidate = i;
    if (request.topology_configured)
      choice.accessible_topology = index.FullyMounting(candidates[i]);
    out.push_back(std::move(choice));
  }
  if (out.empty()) {
    size_t best = q.order.front();
    for (size_t i : q.order) {
      if (candidates[i].free_bytes > candidates[best].free_bytes) best = i;
    }
    return noted(absl::ResourceExhaustedError(absl::StrCat(
        "no eligible datastore has ", request.size_mib, " MiB free; the most free space is ",
        candidates[best].free_bytes / kMiB, " MiB on ", Describe(candidates[best]))));
  }
  return out;
}

SegmentCapacity CapacityForSegment(const std::vector<DatastoreCandidate>& candidates,
                                   const std::vector<HostRecord>& hosts, const Segments& segment) {
  const HostIndex index(hosts);
  SegmentCapacity out;
  std::set<std::pair<std::string, std::string>> counted;  // (vcenter, url)
  for (const DatastoreCandidate& c : candidates) {
    if (!c.no_privilege.empty() || c.suspended) continue;  // no volume can be made there
    if (!segment.empty()) {
      bool reachable = false;
      for (const Segments& s : index.FullyMounting(c)) reachable |= SegmentMatches(segment, s);
      if (!reachable) continue;
    }
    if (!counted.emplace(c.vcenter, std::string(absl::StripSuffix(c.url, "/"))).second) continue;
    out.available_bytes += c.free_bytes;
    out.maximum_volume_bytes = std::max(out.maximum_volume_bytes, c.free_bytes);
  }
  return out;
}

}  // namespace ccm::csi
