#include "csi/core/paging.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace ccm::csi {

absl::StatusOr<Page> PageOf(size_t total, absl::string_view starting_token, int32_t max_entries,
                            size_t default_max) {
  if (max_entries < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("max_entries ", max_entries, " must not be negative"));
  }
  absl::StatusOr<uint64_t> parsed = ParseStartingToken(starting_token);
  if (!parsed.ok()) return parsed.status();
  const uint64_t offset = *parsed;
  Page page;
  page.begin = static_cast<size_t>(std::min<uint64_t>(offset, total));
  size_t limit = max_entries > 0 ? static_cast<size_t>(max_entries) : default_max;
  size_t remaining = total - page.begin;
  page.end = page.begin + (limit == 0 ? remaining : std::min(limit, remaining));
  if (page.end < total) page.next_token = absl::StrCat(page.end);
  return page;
}

absl::StatusOr<uint64_t> ParseStartingToken(absl::string_view starting_token) {
  uint64_t offset = 0;
  if (starting_token.empty()) return offset;
  // SimpleAtoi accepts a sign and white space; a token we wrote has neither.
  bool digits_only = std::all_of(starting_token.begin(), starting_token.end(),
                                 [](char c) { return absl::ascii_isdigit(c); });
  if (!digits_only || !absl::SimpleAtoi(starting_token, &offset)) {
    return absl::AbortedError(absl::StrCat("starting_token \"", starting_token,
                                           "\" is not one this driver gave: not a valid integer"));
  }
  return offset;
}

}  // namespace ccm::csi
