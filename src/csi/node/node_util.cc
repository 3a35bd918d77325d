#include "csi/node/node_util.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace ccm::csi::node {

absl::Status Require(absl::string_view value, absl::string_view field) {
  if (value.empty()) return absl::InvalidArgumentError(absl::StrCat(field, " is required"));
  return absl::OkStatus();
}

absl::Status AsInternal(const absl::Status& s, absl::string_view context) {
  if (s.ok()) return s;
  return absl::InternalError(absl::StrCat(context, ": ", s.message()));
}

bool IsNfsMount(const MountInfo& m) { return absl::StartsWith(m.fs_type, "nfs"); }

}  // namespace ccm::csi::node
