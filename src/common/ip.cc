#include "common/ip.h"

#include <arpa/inet.h>

#include <cstring>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace ccm {

absl::string_view IpFamilyName(IpFamily f) { return f == IpFamily::kIPv4 ? "ipv4" : "ipv6"; }

std::optional<IpAddress> IpAddress::TryParse(absl::string_view text) {
  std::string s(text);
  if (auto pct = s.find('%'); pct != std::string::npos) s.resize(pct);
  IpAddress a;
  if (inet_pton(AF_INET, s.c_str(), a.bytes_.data()) == 1) {
    a.family_ = IpFamily::kIPv4;
    return a;
  }
  if (inet_pton(AF_INET6, s.c_str(), a.bytes_.data()) == 1) {
    a.family_ = IpFamily::kIPv6;
    return a;
  }
  return std::nullopt;
}

absl::StatusOr<IpAddress> IpAddress::Parse(absl::string_view text) {
  if (auto a = TryParse(text)) return *a;
  return absl::InvalidArgumentError(absl::StrCat("\"", text, "\" is not an IP address"));
}

bool IpAddress::IsUnspecified() const {
  for (int i = 0; i < bit_length() / 8; ++i)
    if (bytes_[i] != 0) return false;
  return true;
}

bool IpAddress::IsLoopback() const {
  if (is_v4()) return bytes_[0] == 127;
  for (int i = 0; i < 15; ++i)
    if (bytes_[i] != 0) return false;
  return bytes_[15] == 1;
}

bool IpAddress::IsLinkLocal() const {
  if (is_v4()) return bytes_[0] == 169 && bytes_[1] == 254;
  return bytes_[0] == 0xfe && (bytes_[1] & 0xc0) == 0x80;
}

bool IpAddress::IsMulticast() const {
  if (is_v4()) return (bytes_[0] & 0xf0) == 0xe0;
  return bytes_[0] == 0xff;
}

std::string IpAddress::ToString() const {
  char buf[INET6_ADDRSTRLEN] = {};
  inet_ntop(is_v4() ? AF_INET : AF_INET6, bytes_.data(), buf, sizeof(buf));
  return buf;
}

absl::StatusOr<IpNet> IpNet::Parse(absl::string_view text) {
  const size_t slash = text.find('/');
  if (slash == absl::string_view::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat("\"", text, "\" is not a CIDR (expected address/prefix, e.g. 10.0.0.0/24)"));
  }
  auto addr = IpAddress::TryParse(text.substr(0, slash));
  int prefix = -1;
  if (!addr || !absl::SimpleAtoi(text.substr(slash + 1), &prefix) || prefix < 0 ||
      prefix > (addr ? addr->bit_length() : 0) || text.substr(slash + 1).empty() ||
      text.substr(slash + 1).front() == '+' || text.substr(slash + 1).front() == '-') {
    return absl::InvalidArgumentError(
        absl::StrCat("\"", text, "\" is not a CIDR (expected address/prefix, e.g. 10.0.0.0/24)"));
  }
  IpNet n;
  n.prefix_ = prefix;
  n.base_ = *addr;
  auto& b = n.base_.bytes_;
  for (int bit = prefix; bit < addr->bit_length(); ++bit) b[bit / 8] &= ~(0x80 >> (bit % 8));
  return n;
}

bool IpNet::Contains(const IpAddress& a) const {
  if (a.family() != family()) return false;
  const auto& x = a.bytes();
  const auto& y = base_.bytes();
  int full = prefix_ / 8;
  if (std::memcmp(x.data(), y.data(), full) != 0) return false;
  int rest = prefix_ % 8;
  if (rest == 0) return true;
  uint8_t mask = static_cast<uint8_t>(0xff << (8 - rest));
  return (x[full] & mask) == (y[full] & mask);
}

IpAddress IpNet::last() const {
  IpAddress a = base_;
  for (int bit = prefix_; bit < base_.bit_length(); ++bit) {
    a.bytes_[bit / 8] |= static_cast<uint8_t>(0x80 >> (bit % 8));
  }
  return a;
}

std::string IpNet::ToString() const { return absl::StrCat(base_.ToString(), "/", prefix_); }

}  // namespace ccm
