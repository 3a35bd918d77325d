#include "csi/core/node_id.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "csi/core/constants.h"
#include "csi/core/uuid.h"

namespace ccm::csi {
namespace {

constexpr absl::string_view kProviderIdPrefix = "vsphere://";

}  // namespace

absl::StatusOr<NodeRef> ParseNodeId(absl::string_view node_id) {
  if (node_id.empty()) return absl::InvalidArgumentError("node ID is empty");
  if (IsUuid(node_id)) return NodeRef{NodeRef::Kind::kVmUuid, LowerUuid(node_id)};
  return NodeRef{NodeRef::Kind::kNodeName, std::string(node_id)};
}

absl::StatusOr<std::string> VmUuidFromProviderId(absl::string_view provider_id) {
  absl::string_view id = absl::StripAsciiWhitespace(provider_id);
  if (!absl::StartsWithIgnoreCase(id, kProviderIdPrefix) ||
      !IsUuid(id.substr(kProviderIdPrefix.size()))) {
    return absl::InvalidArgumentError(
        absl::StrCat("provider ID \"", provider_id, "\" is not vsphere://<VM UUID>"));
  }
  return LowerUuid(id.substr(kProviderIdPrefix.size()));
}

absl::StatusOr<std::string> VmUuidFromProductSerial(absl::string_view product_serial) {
  absl::string_view serial = absl::StripAsciiWhitespace(product_serial);
  if (!absl::StartsWith(serial, kProductSerialPrefix)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "product serial \"", product_serial, "\" does not start with ", kProductSerialPrefix));
  }
  std::string hex;
  for (char c : serial.substr(kProductSerialPrefix.size())) {
    if (c == ' ' || c == '-') continue;
    if (!absl::ascii_isxdigit(static_cast<unsigned char>(c))) {
      return absl::InvalidArgumentError(
          absl::StrCat("product serial \"", product_serial, "\" holds a non-hex character"));
    }
    hex.push_back(absl::ascii_tolower(static_cast<unsigned char>(c)));
  }
  if (hex.size() != 32) {
    return absl::InvalidArgumentError(
        absl::StrCat("product serial \"", product_serial, "\" does not hold 32 hex digits"));
  }
  return absl::StrCat(hex.substr(0, 8), "-", hex.substr(8, 4), "-", hex.substr(12, 4), "-",
                      hex.substr(16, 4), "-", hex.substr(20));
}

}  // namespace ccm::csi
