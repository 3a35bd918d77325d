#pragma once
// VM BIOS UUIDs. vSphere reports `summary.config.uuid` in "VMware" byte order; kubelet reports
// `status.nodeInfo.systemUUID` as read from SMBIOS, which on many guests has the first three
// groups byte-swapped (little-endian fields, per the SMBIOS spec):
//   SMBIOS 56492e42-22ad-3911-6d72-59cc8f26bc90  <->  VMware 422e4956-ad22-1139-6d72-59cc8f26bc90
// Which order a guest reports depends on its OS and VM hardware version, so look-ups try both.

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ccm::cloud {

// True for the canonical 8-4-4-4-12 hex form (any case, no surrounding space).
bool IsValidUuid(absl::string_view uuid);

// Trims surrounding white space and lower-cases; InvalidArgument unless the result is a valid
// 8-4-4-4-12 UUID.
absl::StatusOr<std::string> NormalizeUuid(absl::string_view uuid);

// Swaps the byte order of the first three groups (the conversion is its own inverse). The input
// is normalised first; InvalidArgument when it is not a UUID.
absl::StatusOr<std::string> SwapUuidByteOrder(absl::string_view uuid);

// The normalised UUID followed by its byte-swapped form (deduplicated: a UUID whose first three
// groups are palindromic yields one entry). InvalidArgument when it is not a UUID.
absl::StatusOr<std::vector<std::string>> UuidBothByteOrders(absl::string_view uuid);

}  // namespace ccm::cloud
