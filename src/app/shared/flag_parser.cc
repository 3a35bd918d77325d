#include "app/shared/flag_parser.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace ccm::app {
namespace {

absl::Status ParseBool(const std::string& flag, const std::string& v, bool* dst) {
  std::string l = absl::AsciiStrToLower(v);
  if (l == "true" || l == "1" || l == "t") {
    *dst = true;
  } else if (l == "false" || l == "0" || l == "f") {
    *dst = false;
  } else {
    return BadFlag(flag, v, "true or false");
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status BadFlag(const std::string& flag, const std::string& value, const std::string& want) {
  return absl::InvalidArgumentError(
      absl::StrCat("invalid value \"", value, "\" for flag --", flag, ": expected ", want));
}

void FlagParser::String(const std::string& name, std::string* dst) {
  values_[name] = [dst](const std::string& v) {
    *dst = v;
    return absl::OkStatus();
  };
}

void FlagParser::Duration(const std::string& name, absl::Duration* dst) {
  values_[name] = [name, dst](const std::string& v) {
    absl::Duration d;
    if (!absl::ParseDuration(v, &d) || d < absl::ZeroDuration()) {
      return BadFlag(name, v, "a duration such as 15s, 5m0s or 1h");
    }
    *dst = d;
    return absl::OkStatus();
  };
}

void FlagParser::Int(const std::string& name, int* dst, int min) {
  values_[name] = [name, dst, min](const std::string& v) {
    int n;
    if (!absl::SimpleAtoi(v, &n) || n < min)
      return BadFlag(name, v, absl::StrCat("an integer >= ", min));
    *dst = n;
    return absl::OkStatus();
  };
}

absl::Status FlagParser::Parse(const std::vector<std::string>& args,
                               std::vector<std::string>* warnings) {
  for (size_t i = 1; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--") break;
    if (!absl::StartsWith(a, "-") || a == "-") {
      warnings->push_back(absl::StrCat("unexpected argument \"", a, "\" ignored"));
      continue;
    }
    std::string body(absl::StripPrefix(absl::StripPrefix(a, "-"), "-"));
    std::string name = body, value;
    bool has_value = false;
    if (auto eq = body.find('='); eq != std::string::npos) {
      name = body.substr(0, eq);
      value = body.substr(eq + 1);
      has_value = true;
    }
    if (name == "h") name = "help";
    if (auto b = bools_.find(name); b != bools_.end()) {
      if (!has_value) {
        *b->second = true;
        continue;
      }
      if (absl::Status s = ParseBool(name, value, b->second); !s.ok()) return s;
      continue;
    }
    auto f = values_.find(name);
    const bool ignored = ignored_.count(name) > 0;
    if (f == values_.end() && !ignored) {
      warnings->push_back(absl::StrCat("unknown flag --", name, " ignored"));
      if (!has_value && i + 1 < args.size() && !absl::StartsWith(args[i + 1], "-")) ++i;
      continue;
    }
    if (ignored) {
      // Most ignored flags are booleans: a following flag is not their value.
      if (!has_value && i + 1 < args.size() && !absl::StartsWith(args[i + 1], "-")) ++i;
      warnings->push_back(
          absl::StrCat("flag --", name, " is accepted for compatibility but has no effect here"));
      continue;
    }
    if (!has_value) {
      if (i + 1 >= args.size()) {
        return absl::InvalidArgumentError(absl::StrCat("flag needs an argument: --", name));
      }
      value = args[++i];
    }
    if (absl::Status s = f->second(value); !s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace ccm::app
