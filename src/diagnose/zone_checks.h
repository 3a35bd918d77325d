#pragma once
// diagnose, zones: the tag categories the config names ([Labels] zone, region,
// topology-categories) exist in the vCenter, and which datacenters, clusters and hosts carry a tag
// of each. Which Nodes would get no zone is the node check's (node_checks.h, from the CPI's own
// resolution) and the CSI driver's host view's. Pure.

#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "diagnose/report.h"

namespace ccm::diagnose {

struct TaggedEntity {
  std::string kind;  // "datacenter", "cluster", "host"
  std::string name;
  std::vector<std::pair<std::string, std::string>> tags;  // (category name, tag name)
};

struct ZoneFacts {
  std::vector<std::string> wanted;  // the configured categories
  absl::Status listed;              // listing the vCenter's categories
  std::vector<std::string> existing;
  absl::Status attached;  // reading the entities' tags
  std::vector<TaggedEntity> entities;
};

void JudgeZones(const std::string& vcenter, const ZoneFacts& facts, Report& report);

}  // namespace ccm::diagnose
