#pragma once
// diagnose, CSI volumes: the driver's StorageClasses, its Pending PersistentVolumeClaims and its
// VolumeAttachments. The I/O side reads them and asks the Controller service's own CreateVolume
// decisions (ControllerService::PlanCreate: parameters, storage policy, placement) about each
// StorageClass and Pending claim; this file turns those facts into lines. Pure.

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "diagnose/report.h"

namespace ccm::diagnose {

// A StorageClass's allowedTopologies: per term, the (key, values) of its matchLabelExpressions.
using TopologyTerm = std::vector<std::pair<std::string, std::vector<std::string>>>;

// "key=value" for every allowedTopologies value no Node carries ("key" alone when no Node has
// the key at all). A term's values are alternatives: a value counts when some Node has it.
std::vector<std::string> TopologyNoNodeHas(
    const std::vector<TopologyTerm>& allowed,
    const std::vector<std::vector<std::pair<std::string, std::string>>>& node_labels);

// What CreateVolume would decide now (ControllerService::PlanCreate).
struct CreateVerdict {
  absl::Status status;
  std::vector<std::string> datastores;  // where it would try, in order
};

struct StorageClassFacts {
  std::string name;
  std::vector<std::string> unknown_topology;  // TopologyNoNodeHas
  std::optional<CreateVerdict> verdict;       // nullopt: the controller's view was not loaded
};

struct PvcFacts {
  std::string name;  // "<namespace>/<name>"
  std::string storage_class;
  absl::Duration age;
  bool waiting_for_consumer = false;  // WaitForFirstConsumer and no node selected yet
  std::optional<CreateVerdict> verdict;
  std::string last_failure;  // the newest ProvisioningFailed Event's message
};

struct AttachmentFacts {
  std::string name, node, pv;
  bool attached = false;
  bool node_exists = true;
  std::string attach_error, detach_error;      // status.attachError/detachError.message
  absl::Duration age;                          // since it was created
  std::optional<absl::Duration> deleting_for;  // since its deletionTimestamp
};

// A VolumeAttachment not attached (or not detached) after this long is stuck, and a claim
// CreateVolume would place still Pending is forgotten: the sidecars retry every few seconds, a
// healthy attach or create takes seconds.
inline constexpr absl::Duration kStuckAfter = absl::Minutes(2);

void JudgeStorageClasses(const std::vector<StorageClassFacts>& classes, Report& report);
void JudgePvcs(const std::vector<PvcFacts>& claims, Report& report);
void JudgeAttachments(const std::vector<AttachmentFacts>& attachments, Report& report);

}  // namespace ccm::diagnose
