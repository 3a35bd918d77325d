#pragma once
// Node.spec.providerID for vSphere: "vsphere://<BIOS uuid>", lower case. The same string the Go
// cloud provider writes, so nodes initialised by either provider are recognised by the other.

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ccm::cloud {

inline constexpr absl::string_view kProviderIdPrefix = "vsphere://";

// "vsphere://" + the trimmed, lower-cased UUID. An empty or malformed UUID is InvalidArgument:
// never "vsphere://" (an empty provider ID can never be matched back to a VM).
absl::StatusOr<std::string> FormatProviderId(absl::string_view vm_uuid);

// The normalised UUID from a provider ID. Accepts what the reference accepts (it strips the
// prefix when present): "vsphere://<uuid>" (prefix in any case, surrounding space ignored) and a
// bare "<uuid>". InvalidArgument for empty input, another provider's scheme ("aws://..."), or a
// value that is not a UUID.
absl::StatusOr<std::string> ParseProviderId(absl::string_view provider_id);

}  // namespace ccm::cloud
