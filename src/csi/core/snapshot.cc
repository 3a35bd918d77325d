#include "csi/core/snapshot.h"

#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace ccm::csi {

std::string FormatSnapshotId(absl::string_view volume_id, absl::string_view cns_snapshot_id) {
  return absl::StrCat(volume_id, "+", cns_snapshot_id);
}

absl::StatusOr<SnapshotRef> ParseSnapshotId(absl::string_view snapshot_id) {
  std::vector<std::string> parts = absl::StrSplit(snapshot_id, '+');
  if (parts.size() != 2 || parts[0].empty() || parts[1].empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("snapshot ID \"", snapshot_id,
                     "\" is not of this driver's form <volume ID>+<CNS snapshot ID>"));
  }
  return SnapshotRef{parts[0], parts[1]};
}

std::string SnapshotDescription(absl::string_view name, absl::string_view cns_volume_id) {
  return absl::StrCat(name, "-", cns_volume_id);
}

SnapshotLimit SnapshotLimitFor(const SnapshotLimits& limits, absl::string_view datastore_url) {
  const std::string url = absl::AsciiStrToLower(datastore_url);
  if (limits.vsan > 0 && absl::StrContains(url, "vsan")) {
    return {limits.vsan, "granular-max-snapshots-per-block-volume-vsan"};
  }
  if (limits.vvol > 0 && absl::StrContains(url, "vvol")) {
    return {limits.vvol, "granular-max-snapshots-per-block-volume-vvol"};
  }
  return {limits.global, "global-max-snapshots-per-block-volume"};
}

}  // namespace ccm::csi
