#include "cloud/core/uuid.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace ccm::cloud {

bool IsValidUuid(absl::string_view uuid) {
  if (uuid.size() != 36) return false;
  for (size_t i = 0; i < uuid.size(); ++i) {
    const bool dash_position = i == 8 || i == 13 || i == 18 || i == 23;
    if (dash_position ? uuid[i] != '-' : !absl::ascii_isxdigit(uuid[i])) return false;
  }
  return true;
}

absl::StatusOr<std::string> NormalizeUuid(absl::string_view uuid) {
  std::string out = absl::AsciiStrToLower(absl::StripAsciiWhitespace(uuid));
  if (!IsValidUuid(out)) {
    return absl::InvalidArgumentError(
        absl::StrCat("\"", uuid, "\" is not a UUID (expected 8-4-4-4-12 hex digits)"));
  }
  return out;
}

absl::StatusOr<std::string> SwapUuidByteOrder(absl::string_view uuid) {
  absl::StatusOr<std::string> n = NormalizeUuid(uuid);
  if (!n.ok()) return n.status();
  const std::string& u = *n;
  // Reverse the bytes (hex pairs) of the 4-byte, 2-byte and 2-byte groups; keep the rest.
  return absl::StrCat(u.substr(6, 2), u.substr(4, 2), u.substr(2, 2), u.substr(0, 2), "-",
                      u.substr(11, 2), u.substr(9, 2), "-", u.substr(16, 2), u.substr(14, 2),
                      u.substr(18));
}

absl::StatusOr<std::vector<std::string>> UuidBothByteOrders(absl::string_view uuid) {
  absl::StatusOr<std::string> n = NormalizeUuid(uuid);
  if (!n.ok()) return n.status();
  absl::StatusOr<std::string> swapped = SwapUuidByteOrder(*n);
  if (!swapped.ok()) return swapped.status();
  std::vector<std::string> out{*n};
  if (*swapped != *n) out.push_back(*std::move(swapped));
  return out;
}

}  // namespace ccm::cloud
