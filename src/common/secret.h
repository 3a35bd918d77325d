#pragma once
// A string that never prints: credentials are held in Secret so that logging, errors and debug
// output of config structs cannot leak them by accident. Read the value only where it is sent.

#include <ostream>
#include <string>

#include "absl/strings/string_view.h"

namespace ccm {

class Secret {
 public:
  Secret() = default;
  explicit Secret(std::string v) : value_(std::move(v)) {}
  const std::string& reveal() const { return value_; }
  bool empty() const { return value_.empty(); }
  bool operator==(const Secret& o) const { return value_ == o.value_; }
  static constexpr absl::string_view kRedacted = "<redacted>";

 private:
  std::string value_;
};

inline std::ostream& operator<<(std::ostream& os, const Secret& s) {
  return os << (s.empty() ? absl::string_view("<empty>") : Secret::kRedacted);
}

}  // namespace ccm
