#include "csi/core/uuid.h"

#include "absl/strings/ascii.h"

namespace ccm::csi {

bool IsUuid(absl::string_view s) {
  if (s.size() != 36) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    bool dash = i == 8 || i == 13 || i == 18 || i == 23;
    if (dash ? s[i] != '-' : !absl::ascii_isxdigit(static_cast<unsigned char>(s[i]))) return false;
  }
  return true;
}

std::string LowerUuid(absl::string_view s) { return absl::AsciiStrToLower(s); }

}  // namespace ccm::csi
