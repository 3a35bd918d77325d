#include "csi/core/feature_states.h"

#include <set>

#include "absl/strings/str_cat.h"

namespace ccm::csi {
namespace {

// Released in the reference's vanilla flavor: on whatever the ConfigMap says.
const std::set<std::string, std::less<>>& Released() {
  static const auto* released = new std::set<std::string, std::less<>>{
      "online-volume-extend", "block-volume-snapshot",        "csi-windows-support",
      "list-volumes",         "cnsmgr-suspend-create-volume", "csi-transaction-support"};
  return *released;
}

}  // namespace

std::optional<bool> ParseGoBool(absl::string_view s) {
  if (s == "1" || s == "t" || s == "T" || s == "true" || s == "TRUE" || s == "True") return true;
  if (s == "0" || s == "f" || s == "F" || s == "false" || s == "FALSE" || s == "False") {
    return false;
  }
  return std::nullopt;
}

bool FeatureEnabled(const std::map<std::string, std::string>& data, absl::string_view name) {
  if (Released().count(name)) return true;
  auto it = data.find(std::string(name));
  if (it == data.end()) return false;
  return ParseGoBool(it->second).value_or(false);
}

std::vector<std::string> DescribeFeatureChange(const std::map<std::string, std::string>& before,
                                               const std::map<std::string, std::string>& after) {
  std::set<std::string> names;
  for (const auto& [k, v] : before) names.insert(k);
  for (const auto& [k, v] : after) names.insert(k);
  std::vector<std::string> out;
  auto word = [](bool on) { return on ? "on" : "off"; };
  for (const std::string& n : names) {
    const bool was = FeatureEnabled(before, n), is = FeatureEnabled(after, n);
    auto it = after.find(n);
    const bool bad = it != after.end() && !ParseGoBool(it->second).has_value();
    auto old_it = before.find(n);
    const bool value_changed =
        old_it == before.end() || it == after.end() || old_it->second != it->second;
    if (bad && value_changed) {
      out.push_back(absl::StrCat(n, ": \"", it->second, "\" is not a boolean (", word(is), ")"));
    } else if (was != is) {
      out.push_back(absl::StrCat(n, ": ", word(was), " -> ", word(is)));
    }
  }
  return out;
}

std::vector<std::string> FeatureStates::Replace(std::map<std::string, std::string> data) {
  absl::MutexLock l(&mu_);
  std::vector<std::string> changes = DescribeFeatureChange(data_, data);
  data_ = std::move(data);
  return changes;
}

bool FeatureStates::Enabled(absl::string_view name) const {
  absl::MutexLock l(&mu_);
  return FeatureEnabled(data_, name);
}

std::map<std::string, std::string> FeatureStates::Data() const {
  absl::MutexLock l(&mu_);
  return data_;
}

}  // namespace ccm::csi
