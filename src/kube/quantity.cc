#include "kube/quantity.h"

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace ccm::kube {
namespace {

const std::vector<std::pair<absl::string_view, long double>>& Suffixes() {
  static const auto* const s = new std::vector<std::pair<absl::string_view, long double>>{
      {"Ki", 0x1p10L}, {"Mi", 0x1p20L}, {"Gi", 0x1p30L}, {"Ti", 0x1p40L}, {"Pi", 0x1p50L},
      {"Ei", 0x1p60L}, {"n", 1e-9L},    {"u", 1e-6L},    {"m", 1e-3L},    {"k", 1e3L},
      {"M", 1e6L},     {"G", 1e9L},     {"T", 1e12L},    {"P", 1e15L},    {"E", 1e18L}};
  return *s;
}

}  // namespace

absl::StatusOr<long double> ParseQuantity(absl::string_view text) {
  const absl::string_view t = absl::StripAsciiWhitespace(text);
  auto bad = [&] {
    return absl::InvalidArgumentError(absl::StrCat("\"", text, "\" is not a quantity"));
  };
  size_t end = 0;  // the number: sign, digits, one dot
  if (end < t.size() && (t[end] == '+' || t[end] == '-')) ++end;
  bool digits = false, dot = false;
  for (; end < t.size(); ++end) {
    if (absl::ascii_isdigit(static_cast<unsigned char>(t[end]))) {
      digits = true;
    } else if (t[end] == '.' && !dot) {
      dot = true;
    } else {
      break;
    }
  }
  if (!digits) return bad();
  double number = 0;
  if (!absl::SimpleAtod(t.substr(0, end), &number)) return bad();
  const absl::string_view suffix = t.substr(end);
  if (suffix.empty()) return static_cast<long double>(number);
  for (const auto& [s, scale] : Suffixes()) {
    if (suffix == s) return number * scale;
  }
  if (suffix[0] == 'e' || suffix[0] == 'E') {  // a decimal exponent
    int exp = 0;
    if (absl::SimpleAtoi(suffix.substr(1), &exp) && suffix.size() > 1) {
      return number * std::pow(10.0L, exp);
    }
  }
  return bad();
}

}  // namespace ccm::kube
