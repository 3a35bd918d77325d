#include "csi/core/file_placement.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace ccm::csi {
namespace {

bool Contains(const std::vector<std::string>& list, const std::string& v) {
  return std::find(list.begin(), list.end(), v) != list.end();
}

// Why a vSAN datastore cannot hold a file share from its clusters' side ("" when it can).
std::string ClusterProblem(const DatastoreCandidate& d,
                           const std::vector<FileServiceCluster>& clusters,
                           const FileShareTargets& targets) {
  std::vector<std::string> off, untargeted;
  for (const FileServiceCluster& c : clusters) {
    if (!Contains(c.datastores, d.moref)) continue;
    const std::string name = absl::StrCat(c.name, " (", c.moid, ")");
    if (!c.file_service) {
      off.push_back(name);
    } else if (!targets.clusters.empty() && !Contains(targets.clusters, c.name) &&
               !Contains(targets.clusters, c.moid)) {
      untargeted.push_back(name);
    } else {
      return "";
    }
  }
  if (!untargeted.empty()) {
    return absl::StrCat("its cluster ", absl::StrJoin(untargeted, ", "),
                        " is not in targetvSANFileShareClusters");
  }
  if (!off.empty()) {
    return absl::StrCat("vSAN file service is not enabled on its cluster ",
                        absl::StrJoin(off, ", "));
  }
  return "it belongs to no vSAN cluster with file services";
}

bool Reachable(const DatastoreCandidate& d, const std::vector<HostRecord>& hosts,
               const TopologyRequirement& r) {
  const std::vector<Segments>& wanted = r.requisite.empty() ? r.preferred : r.requisite;
  for (const Segments& acc : AccessibleSegments(d, hosts)) {
    for (const Segments& w : wanted) {
      if (SegmentMatches(w, acc)) return true;
    }
  }
  return false;
}

// Why datastore i cannot take the share ("" when it can).
std::string Problem(size_t i, const std::vector<DatastoreCandidate>& datastores,
                    const std::vector<HostRecord>& hosts,
                    const std::map<std::string, std::vector<FileServiceCluster>>& clusters,
                    const std::map<std::string, FileShareTargets>& targets,
                    const FilePlacementRequest& req) {
  const DatastoreCandidate& d = datastores[i];
  auto known = clusters.find(d.vcenter);
  if (known == clusters.end()) return "its vCenter's file services could not be read";
  const FileShareTargets none;
  auto t = targets.find(d.vcenter);
  const FileShareTargets& target = t == targets.end() ? none : t->second;
  if (std::string p = ClusterProblem(d, known->second, target); !p.empty()) return p;
  if (!target.datastore_urls.empty() &&
      std::none_of(target.datastore_urls.begin(), target.datastore_urls.end(),
                   [&](const std::string& u) { return SameDatastoreUrl(u, d.url); })) {
    return "not in targetvSANFileShareDatastoreURLs";
  }
  if (!req.datastore_url.empty() && !SameDatastoreUrl(req.datastore_url, d.url)) {
    return absl::StrCat("not the datastoreurl ", req.datastore_url);
  }
  if (!d.no_privilege.empty()) return d.no_privilege;
  if (req.requirement != nullptr && !Reachable(d, hosts, *req.requirement)) {
    return "not accessible from the requested topology";
  }
  if (req.compatible != nullptr && !(*req.compatible)[i]) {
    return absl::StrCat("not compatible with storage policy \"", req.policy_name, "\"");
  }
  return "";
}

}  // namespace

absl::StatusOr<std::vector<size_t>> ChooseFileShareDatastores(
    const std::vector<DatastoreCandidate>& datastores, const std::vector<HostRecord>& hosts,
    const std::map<std::string, std::vector<FileServiceCluster>>& clusters,
    const std::map<std::string, FileShareTargets>& targets, const FilePlacementRequest& req) {
  std::vector<size_t> out;
  std::vector<std::string> why, other;
  for (size_t i = 0; i < datastores.size(); ++i) {
    const DatastoreCandidate& d = datastores[i];
    if (d.type != "vsan") {
      other.push_back(absl::StrCat(d.name, " (", d.type.empty() ? "unknown type" : d.type, ")"));
      continue;
    }
    std::string p = Problem(i, datastores, hosts, clusters, targets, req);
    if (p.empty()) {
      out.push_back(i);
    } else {
      why.push_back(absl::StrCat(d.name, " (", d.url, "): ", p));
    }
  }
  if (!out.empty()) return out;
  if (why.empty()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "no vSAN datastore to create the file volume on: file volumes are vSAN file shares, "
        "and the datastores known are ",
        other.empty() ? "none" : absl::StrJoin(other, ", ")));
  }
  return absl::FailedPreconditionError(absl::StrCat(
      "no vSAN datastore can hold the file volume: ", absl::StrJoin(why, "; "),
      ". File volumes need vSAN File Service enabled on the vSAN cluster (vSphere Client: "
      "cluster > Configure > vSAN > Services > File Service)"));
}

}  // namespace ccm::csi
