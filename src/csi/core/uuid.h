#pragma once
// The 8-4-4-4-12 hex form CNS volume IDs and VM BIOS UUIDs use. (cloud/core/uuid.h has the same
// check; this target links no cloud library, so it keeps its own two lines.)

#include <string>

#include "absl/strings/string_view.h"

namespace ccm::csi {

// True for 8-4-4-4-12 hex digits, any case, nothing around.
bool IsUuid(absl::string_view s);

// Lower case of a UUID (the caller has checked IsUuid).
std::string LowerUuid(absl::string_view s);

}  // namespace ccm::csi
