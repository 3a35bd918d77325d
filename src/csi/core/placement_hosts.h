#pragma once
// The hosts of the placement view indexed for the shared-datastore rules of placement.h: by
// (vCenter, MOID) and by complete topology segment. Internal to placement.cc and its tests.

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "csi/core/placement.h"
#include "csi/core/types.h"

namespace ccm::csi {

using HostKey = std::pair<std::string, std::string>;  // (vcenter, host MOID)

class HostIndex {
 public:
  explicit HostIndex(const std::vector<HostRecord>& hosts);

  // The distinct complete segments of hosts that match `requested` (SegmentMatches), sorted.
  std::vector<Segments> SegmentsMatching(const Segments& requested) const;
  // Every host of a complete segment, sorted.
  const std::vector<HostKey>& HostsOf(const Segments& complete) const;
  // The complete segments all of whose hosts are in `c`'s vCenter and mount it, sorted.
  std::vector<Segments> FullyMounting(const DatastoreCandidate& c) const;
  // "esx-1 (host-21), esx-2 (host-22)" (at most three, then "and N more hosts"); a host the
  // index does not know is named by its MOID and vCenter.
  std::string DescribeHosts(const std::vector<HostKey>& keys, const std::string& what) const;

 private:
  std::map<HostKey, const HostRecord*> by_key_;
  std::map<Segments, std::vector<HostKey>> by_segment_;
};

// The hosts of `required` that do not mount `c` (a host of another vCenter never does).
std::vector<HostKey> MissingHosts(const DatastoreCandidate& c,
                                  const std::vector<HostKey>& required);

}  // namespace ccm::csi
