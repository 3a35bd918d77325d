#include "csi/node/node_util.h"

#include <filesystem>

#include "absl/strings/str_cat.h"

namespace ccm::csi::node {

VolumeCapability ToCapability(const ::csi::v1::VolumeCapability& cap) {
  VolumeCapability out;
  if (cap.has_block()) {
    out.access_type = AccessType::kBlock;
  } else if (cap.has_mount()) {
    out.access_type = AccessType::kMount;
    out.fs_type = cap.mount().fs_type();
    out.mount_flags.assign(cap.mount().mount_flags().begin(), cap.mount().mount_flags().end());
  }
  out.has_access_mode = cap.has_access_mode();
  out.mode = static_cast<AccessMode>(cap.access_mode().mode());
  return out;
}

absl::Status Require(absl::string_view value, absl::string_view field) {
  if (value.empty()) return absl::InvalidArgumentError(absl::StrCat(field, " is required"));
  return absl::OkStatus();
}

absl::StatusOr<std::string> CanonicalPath(absl::string_view path, absl::string_view field) {
  if (absl::Status s = Require(path, field); !s.ok()) return s;
  std::filesystem::path p{std::string(path)};
  if (!p.is_absolute()) {
    return absl::InvalidArgumentError(absl::StrCat(field, " ", path, " is not an absolute path"));
  }
  std::error_code ec;
  std::filesystem::path c = std::filesystem::weakly_canonical(p, ec);
  if (ec) c = p.lexically_normal();
  std::string s = c.string();
  while (s.size() > 1 && s.back() == '/') s.pop_back();
  return s;
}

absl::Status AsInternal(const absl::Status& s, absl::string_view context) {
  if (s.ok()) return s;
  return absl::InternalError(absl::StrCat(context, ": ", s.message()));
}

}  // namespace ccm::csi::node
