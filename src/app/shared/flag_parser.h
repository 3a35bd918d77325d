#pragma once
// Go-style command-line flags, as the Kubernetes binaries (pflag) take them: `--name=value`,
// `--name value`, `-name`, booleans without a value, `--` ends the flags. Both binaries use it
// (vsphere-cloud-controller-manager and vsphere-csi-driver), so they behave alike:
// - flags the Go binary has and we do not implement are accepted with a warning ("ignored");
// - unknown flags are warnings, never a crash (a following bare word is taken as their value);
// - a bad value is an error naming the flag and the expected form.

#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"

namespace ccm::app {

class FlagParser {
 public:
  using Setter = std::function<absl::Status(const std::string& value)>;

  void Bool(const std::string& name, bool* dst) { bools_[name] = dst; }
  void String(const std::string& name, std::string* dst);
  // A duration such as 15s, 5m0s or 1h; negative values are refused.
  void Duration(const std::string& name, absl::Duration* dst);
  void Int(const std::string& name, int* dst, int min);
  void Value(const std::string& name, Setter set) { values_[name] = std::move(set); }
  // Accepted with a "has no effect here" warning.
  void Ignore(const std::set<std::string>& names) { ignored_.insert(names.begin(), names.end()); }

  // args[0] is the program name. `-h` is `--help`. Warnings are appended to `warnings`.
  absl::Status Parse(const std::vector<std::string>& args, std::vector<std::string>* warnings);

 private:
  std::map<std::string, bool*> bools_;
  std::map<std::string, Setter> values_;
  std::set<std::string> ignored_;
};

// "invalid value "<value>" for flag --<flag>: expected <want>".
absl::Status BadFlag(const std::string& flag, const std::string& value, const std::string& want);

}  // namespace ccm::app
