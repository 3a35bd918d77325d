#pragma once
// ListVolumes paging. The token is the decimal offset of the next entry, as the reference writes it
// (strconv.Itoa of the next index), over a listing the caller keeps whole for the pages that
// follow (the controller keeps one snapshot per listing, so pages neither skip nor repeat). A
// token that is not a non-negative decimal is InvalidArgument, as the reference answers it (the
// spec says Aborted); a token past the end is an empty last page.

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

// The offset a starting_token names (0 for none); Aborted for anything else (the CSI spec's code
// for a starting_token the plugin did not give, ListVolumes' and ListSnapshots' alike).
absl::StatusOr<uint64_t> ParseStartingToken(absl::string_view starting_token);

}  // namespace ccm::csi
