#pragma once
// IP addresses and CIDR networks as parsed values (parse once at config load, compare many times).

#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ccm {

enum class IpFamily { kIPv4, kIPv6 };
absl::string_view IpFamilyName(IpFamily f);  // "ipv4" / "ipv6"

class IpAddress {
 public:
  // Accepts dotted IPv4 and RFC 4291 IPv6 text (with an optional %zone, dropped).
  // IPv4-mapped IPv6 (::ffff:a.b.c.d) is kept as IPv6, as Go's net.ParseIP+To4 would not be.
  static absl::StatusOr<IpAddress> Parse(absl::string_view text);
  static std::optional<IpAddress> TryParse(absl::string_view text);

  IpFamily family() const { return family_; }
  bool is_v4() const { return family_ == IpFamily::kIPv4; }
  const std::array<uint8_t, 16>& bytes() const { return bytes_; }  // v4 uses the first 4
  int bit_length() const { return is_v4() ? 32 : 128; }

  bool IsUnspecified() const;
  bool IsLoopback() const;
  bool IsLinkLocal() const;  // unicast 169.254/16, fe80::/10
  bool IsMulticast() const;

  std::string ToString() const;  // canonical (RFC 5952 for IPv6)
  bool operator==(const IpAddress& o) const = default;

 private:
  friend class IpNet;
  IpFamily family_ = IpFamily::kIPv4;
  std::array<uint8_t, 16> bytes_{};
};

class IpNet {
 public:
  // "10.0.0.0/8", "fd00::/64". The host part is masked off (like Go's net.ParseCIDR).
  static absl::StatusOr<IpNet> Parse(absl::string_view text);
  bool Contains(const IpAddress& a) const;
  const IpAddress& first() const { return base_; }
  IpAddress last() const;  // every host bit set
  IpFamily family() const { return base_.family(); }
  int prefix() const { return prefix_; }
  std::string ToString() const;
  bool operator==(const IpNet& o) const = default;

 private:
  IpAddress base_;
  int prefix_ = 0;
};

}  // namespace ccm
