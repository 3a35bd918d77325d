#include "csi/core/placement_hosts.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "csi/core/topology.h"

namespace ccm::csi {

HostIndex::HostIndex(const std::vector<HostRecord>& hosts) {
  for (const HostRecord& h : hosts) {
    HostKey key{h.vcenter, h.moid};
    by_key_[key] = &h;
    if (h.segment) by_segment_[*h.segment].push_back(std::move(key));
  }
  for (auto& [segment, keys] : by_segment_) std::sort(keys.begin(), keys.end());
}

std::vector<Segments> HostIndex::SegmentsMatching(const Segments& requested) const {
  std::vector<Segments> out;
  for (const auto& [segment, keys] : by_segment_) {
    if (SegmentMatches(requested, segment)) out.push_back(segment);
  }
  return out;
}

const std::vector<HostKey>& HostIndex::HostsOf(const Segments& complete) const {
  static const std::vector<HostKey>* const kNone = new std::vector<HostKey>();
  auto it = by_segment_.find(complete);
  return it == by_segment_.end() ? *kNone : it->second;
}

std::vector<Segments> HostIndex::FullyMounting(const DatastoreCandidate& c) const {
  std::vector<Segments> out;
  for (const auto& [segment, keys] : by_segment_) {
    if (MissingHosts(c, keys).empty()) out.push_back(segment);
  }
  return out;
}

std::string HostIndex::DescribeHosts(const std::vector<HostKey>& keys,
                                     const std::string& what) const {
  constexpr size_t kShown = 3;
  std::vector<std::string> names;
  for (size_t i = 0; i < keys.size() && i < kShown; ++i) {
    auto it = by_key_.find(keys[i]);
    if (it != by_key_.end() && !it->second->name.empty()) {
      names.push_back(absl::StrCat(it->second->name, " (", keys[i].second, ")"));
    } else {
      names.push_back(absl::StrCat(what, " ", keys[i].second, " of vCenter ", keys[i].first));
    }
  }
  std::string out = absl::StrJoin(names, ", ");
  if (keys.size() > kShown) absl::StrAppend(&out, " and ", keys.size() - kShown, " more hosts");
  return out;
}

std::vector<HostKey> MissingHosts(const DatastoreCandidate& c,
                                  const std::vector<HostKey>& required) {
  std::vector<HostKey> missing;
  for (const HostKey& k : required) {
    if (k.first != c.vcenter || !std::binary_search(c.hosts.begin(), c.hosts.end(), k.second)) {
      missing.push_back(k);
    }
  }
  return missing;
}

}  // namespace ccm::csi
