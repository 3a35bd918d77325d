#include "csi/core/placement.h"

#include <algorithm>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "csi/core/constants.h"
#include "csi/core/topology.h"

namespace ccm::csi {
namespace {

// "ds:///vmfs/volumes/x/" and "ds:///vmfs/volumes/x" name the same datastore.
absl::string_view NormalUrl(absl::string_view url) { return absl::StripSuffix(url, "/"); }

bool Reachable(const DatastoreCandidate& c, const Segments& requested) {
  for (const Segments& s : c.accessible) {
    if (SegmentMatches(requested, s)) return true;
  }
  return false;
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

void SortByFreeSpace(const std::vector<DatastoreCandidate>& c, std::vector<size_t>& idx) {
  std::sort(idx.begin(), idx.end(), [&](size_t a, size_t b) {
    if (c[a].free_bytes != c[b].free_bytes) return c[a].free_bytes > c[b].free_bytes;
    if (c[a].vcenter != c[b].vcenter) return c[a].vcenter < c[b].vcenter;
    if (c[a].url != c[b].url) return c[a].url < c[b].url;
    return a < b;
  });
}

bool HasRequirement(const TopologyRequirement* r) {
  return r != nullptr && (!r->requisite.empty() || !r->preferred.empty());
}

// Candidates from `pool` in the requirement's order (see the header).
std::vector<size_t> OrderByRequirement(const std::vector<DatastoreCandidate>& c,
                                       const std::vector<size_t>& pool,
                                       const TopologyRequirement& r) {
  std::vector<Segments> groups = r.preferred;
  for (const Segments& s : r.requisite) {
    if (std::find(groups.begin(), groups.end(), s) == groups.end()) groups.push_back(s);
  }
  std::vector<size_t> ordered;
  std::set<size_t> seen;
  for (const Segments& segment : groups) {
    std::vector<size_t> members;
    for (size_t i : pool) {
      if (!seen.count(i) && Reachable(c[i], segment)) members.push_back(i);
    }
    SortByFreeSpace(c, members);
    for (size_t i : members) {
      seen.insert(i);
      ordered.push_back(i);
    }
  }
  if (r.requisite.empty()) {
    std::vector<size_t> rest;
    for (size_t i : pool) {
      if (!seen.count(i)) rest.push_back(i);
    }
    SortByFreeSpace(c, rest);
    ordered.insert(ordered.end(), rest.begin(), rest.end());
  }
  return ordered;
}

std::vector<Segments> DistinctSorted(std::vector<Segments> segments) {
  std::sort(segments.begin(), segments.end());
  segments.erase(std::unique(segments.begin(), segments.end()), segments.end());
  return segments;
}

}  // namespace

absl::StatusOr<std::vector<PlacementChoice>> ChooseDatastores(
    const std::vector<DatastoreCandidate>& candidates, const PlacementRequest& request) {
  const bool constrained = HasRequirement(request.requirement);
  if (constrained && !request.topology_configured) {
    return absl::InvalidArgumentError(
        "the request has accessibility requirements, but no topology is configured ([Labels] "
        "topology-categories, or zone and region, in csi-vsphere.conf)");
  }

  std::vector<size_t> pool;
  for (size_t i = 0; i < candidates.size(); ++i) {
    if (request.datastore_url.empty() ||
        NormalUrl(candidates[i].url) == NormalUrl(request.datastore_url)) {
      pool.push_back(i);
    }
  }
  if (!request.datastore_url.empty() && pool.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("datastoreurl \"", request.datastore_url,
                     "\" is not a datastore of the configured vCenters and datacenters"));
  }

  std::vector<size_t> ordered;
  if (constrained) {
    ordered = OrderByRequirement(candidates, pool, *request.requirement);
    if (ordered.empty()) {
      std::string wanted =
          DescribeSegments(request.requirement->requisite.empty() ? request.requirement->preferred
                                                                  : request.requirement->requisite);
      if (!request.datastore_url.empty()) {
        return absl::InvalidArgumentError(absl::StrCat("datastoreurl \"", request.datastore_url,
                                                       "\" is not accessible from the requested "
                                                       "topology ",
                                                       wanted));
      }
      return absl::ResourceExhaustedError(
          absl::StrCat("no datastore is accessible from the requested topology ", wanted));
    }
  } else {
    for (size_t i : pool) {
      bool everywhere = true;
      for (const Segments& s : request.cluster_segments)
        everywhere = everywhere && Reachable(candidates[i], s);
      if (everywhere) ordered.push_back(i);
    }
    if (ordered.empty()) {
      std::string nodes = DescribeSegments(request.cluster_segments);
      if (!request.datastore_url.empty()) {
        return absl::InvalidArgumentError(absl::StrCat("datastoreurl \"", request.datastore_url,
                                                       "\" is not accessible from every node's "
                                                       "topology ",
                                                       nodes));
      }
      return absl::ResourceExhaustedError(
          candidates.empty()
              ? std::string("no datastore is available")
              : absl::StrCat("no datastore is accessible from every node's topology ", nodes,
                             " (a volume without topology requirements "
                             "must be usable on any node)"));
    }
    SortByFreeSpace(candidates, ordered);
  }

  const int64_t need = request.size_mib * kMiB;
  std::vector<PlacementChoice> out;
  for (size_t i : ordered) {
    if (candidates[i].free_bytes < need) continue;
    PlacementChoice choice;
    choice.candidate = i;
    if (request.topology_configured) {
      choice.accessible_topology = DistinctSorted(candidates[i].accessible);
    }
    out.push_back(std::move(choice));
  }
  if (out.empty()) {
    // `ordered` is sorted by free space within each group; find the largest overall.
    size_t best = ordered.front();
    for (size_t i : ordered) {
      if (candidates[i].free_bytes > candidates[best].free_bytes) best = i;
    }
    return absl::ResourceExhaustedError(absl::StrCat(
        "no eligible datastore has ", request.size_mib, " MiB free; the most free space is ",
        candidates[best].free_bytes / kMiB, " MiB on ", Describe(candidates[best])));
  }
  return out;
}

SegmentCapacity CapacityForSegment(const std::vector<DatastoreCandidate>& candidates,
                                   const Segments& segment) {
  SegmentCapacity out;
  std::set<std::pair<std::string, std::string>> counted;  // (vcenter, url)
  for (const DatastoreCandidate& c : candidates) {
    if (!segment.empty() && !Reachable(c, segment)) continue;
    if (!counted.emplace(c.vcenter, std::string(NormalUrl(c.url))).second) continue;
    out.available_bytes += c.free_bytes;
    out.maximum_volume_bytes = std::max(out.maximum_volume_bytes, c.free_bytes);
  }
  return out;
}

}  // namespace ccm::csi
