#pragma once
// Static addresses from a VM's cloud-init metadata (extraConfig `guestinfo.metadata`, encoded per
// `guestinfo.metadata.encoding`). Address selection sorts these first (REFERENCE.md Addresses 3).
//
// Accepted: encodings "" (plain), "base64"/"b64", "gzip+base64"/"gz+b64"; the document as YAML or
// JSON; its `network` key either a map or an encoded string with `network.encoding`; network
// config version 1 (`config: [{subnets: [{type: static|static6, address: ...}]}]`) and version 2
// (`ethernets|bonds|bridges|vlans: {<id>: {addresses: [...]}}`). Addresses may carry a /prefix
// (any prefix, even an impossible one: only the address matters) and v2's `{addr: {lifetime}}`
// map form. Malformed input is an error, never a crash; the caller decides whether to ignore it.

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/ip.h"

namespace ccm::cloud {

inline constexpr absl::string_view kGuestinfoMetadataKey = "guestinfo.metadata";
inline constexpr absl::string_view kGuestinfoMetadataEncodingKey = "guestinfo.metadata.encoding";

// Decodes one guestinfo value. Output is capped (1 MiB) so a hostile gzip cannot exhaust memory.
absl::StatusOr<std::string> DecodeGuestinfoValue(absl::string_view value,
                                                 absl::string_view encoding);

// The static addresses of the metadata, in document order, without duplicates. Metadata without a
// `network` key, or a network config without static addresses (DHCP), yields an empty list.
absl::StatusOr<std::vector<IpAddress>> ParseGuestinfoStaticAddresses(
    absl::string_view metadata_value, absl::string_view encoding);

}  // namespace ccm::cloud
