#include "cloud/core/provider_id.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "cloud/core/uuid.h"
#include "common/status_macros.h"

namespace ccm::cloud {

absl::StatusOr<std::string> FormatProviderId(absl::string_view vm_uuid) {
  if (absl::StripAsciiWhitespace(vm_uuid).empty()) {
    return absl::InvalidArgumentError("cannot format a provider ID: the VM's BIOS UUID is empty");
  }
  absl::StatusOr<std::string> uuid = NormalizeUuid(vm_uuid);
  if (!uuid.ok()) return Annotate(uuid.status(), "cannot format a provider ID");
  return absl::StrCat(kProviderIdPrefix, *uuid);
}

absl::StatusOr<std::string> ParseProviderId(absl::string_view provider_id) {
  absl::string_view id = absl::StripAsciiWhitespace(provider_id);
  if (id.empty()) return absl::InvalidArgumentError("provider ID is empty");
  if (absl::StartsWithIgnoreCase(id, kProviderIdPrefix)) {
    id.remove_prefix(kProviderIdPrefix.size());
  } else if (absl::StrContains(id, "://")) {
    return absl::InvalidArgumentError(absl::StrCat("provider ID \"", provider_id,
                                                   "\" is not a vSphere provider ID (expected ",
                                                   kProviderIdPrefix, "<uuid>)"));
  }
  absl::StatusOr<std::string> uuid = NormalizeUuid(id);
  if (!uuid.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "provider ID \"", provider_id, "\" does not hold a VM UUID: ", uuid.status().message()));
  }
  return uuid;
}

}  // namespace ccm::cloud
