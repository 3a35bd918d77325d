#include "csi/core/publish_context.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "csi/core/constants.h"

namespace ccm::csi {
namespace {

bool Is32Hex(absl::string_view s) {
  if (s.size() != 32) return false;
  for (char c : s) {
    if (!absl::ascii_isxdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

}  // namespace

std::string FormatDiskUuid(absl::string_view uuid) {
  std::string out;
  out.reserve(uuid.size());
  for (char c : uuid) {
    if (c == ' ' || c == '-') continue;
    out.push_back(absl::ascii_tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

StringMap BlockVolumeContext() {
  return {{std::string(kContextType), std::string(kDiskTypeBlockVolume)}};
}

absl::StatusOr<StringMap> BlockPublishContext(absl::string_view disk_uuid) {
  std::string formatted = FormatDiskUuid(disk_uuid);
  if (!Is32Hex(formatted)) {
    return absl::InvalidArgumentError(
        absl::StrCat("disk UUID \"", disk_uuid, "\" is not a UUID (32 hex digits)"));
  }
  return StringMap{{std::string(kContextType), std::string(kDiskTypeBlockVolume)},
                   {std::string(kPublishDiskUuid), formatted}};
}

absl::StatusOr<std::string> DiskUuidFromPublishContext(const StringMap& publish_context) {
  auto it = publish_context.find(std::string(kPublishDiskUuid));
  if (it == publish_context.end()) {
    return absl::InvalidArgumentError(absl::StrCat("publish context lacks \"", kPublishDiskUuid,
                                                   "\" (was the volume published?)"));
  }
  std::string formatted = FormatDiskUuid(it->second);
  if (!Is32Hex(formatted)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "publish context \"", kPublishDiskUuid, "\" is \"", it->second, "\", not 32 hex digits"));
  }
  return formatted;
}

std::string DiskLinkPath(absl::string_view by_id_dir, absl::string_view formatted_disk_uuid) {
  return absl::StrCat(absl::StripSuffix(by_id_dir, "/"), "/", kDiskLinkPrefix, formatted_disk_uuid);
}

}  // namespace ccm::csi
