#pragma once
// ListVolumes paging. The token is the decimal offset of the next entry, as the reference writes it
// (strconv.Itoa of the next index), over a listing the caller keeps in a stable order (sorted by
// volume ID). Differences from the reference, both for the spec:
//  - a token that is not a non-negative decimal is Aborted ("Invalid starting_token"), not
//    InvalidArgument;
//  - a token past the end (volumes were deleted between pages) is an empty last page, not an error.
// An offset token can skip or repeat an entry when the listing changes between pages; the spec
// allows that (the CO re-lists), and a key-based token would not fit the 128-byte limit with our
// qualified volume IDs.

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ccm::csi {

struct Page {
  size_t begin = 0;        // first entry of the page
  size_t end = 0;          // one past the last
  std::string next_token;  // empty on the last page
};

// `max_entries`: 0 = no limit from the CO (then `default_max`, 0 = everything); negative is
// InvalidArgument.
absl::StatusOr<Page> PageOf(size_t total, absl::string_view starting_token, int32_t max_entries,
                            size_t default_max = 0);

}  // namespace ccm::csi
