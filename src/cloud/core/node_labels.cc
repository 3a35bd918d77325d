#include "cloud/core/node_labels.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace ccm::cloud {
namespace {

bool IsAlnum(char c) { return absl::ascii_isalnum(static_cast<unsigned char>(c)); }

// A label name (and value): <= 63, [-A-Za-z0-9_.], alphanumeric at both ends. Empty is invalid.
bool IsLabelName(absl::string_view s) {
  if (s.empty() || s.size() > 63 || !IsAlnum(s.front()) || !IsAlnum(s.back())) return false;
  for (char c : s)
    if (!IsAlnum(c) && c != '-' && c != '_' && c != '.') return false;
  return true;
}

// DNS-1123 subdomain: <= 253, dot-separated lower-case labels of [a-z0-9-], alnum at both ends.
bool IsDns1123Subdomain(absl::string_view s) {
  if (s.empty() || s.size() > 253) return false;
  for (absl::string_view part : absl::StrSplit(s, '.')) {
    if (part.empty() || part.size() > 63) return false;
    for (char c : part)
      if (!(absl::ascii_islower(static_cast<unsigned char>(c)) ||
            absl::ascii_isdigit(static_cast<unsigned char>(c)) || c == '-'))
        return false;
    if (part.front() == '-' || part.back() == '-') return false;
  }
  return true;
}

bool InDomain(absl::string_view ns, absl::string_view domain) {
  return ns == domain || absl::EndsWith(ns, absl::StrCat(".", domain));
}

}  // namespace

absl::Status ValidateLabelKey(absl::string_view key) {
  auto bad = [&](absl::string_view why) {
    return absl::InvalidArgumentError(
        absl::StrCat("label key \"", key, "\" is not a qualified name: ", why));
  };
  std::vector<absl::string_view> parts = absl::StrSplit(key, '/');
  if (parts.size() > 2) return bad("at most one '/' (prefix/name)");
  absl::string_view name = parts.back();
  if (parts.size() == 2 && !IsDns1123Subdomain(parts[0]))
    return bad("the prefix must be a DNS-1123 subdomain (lower case, at most 253 characters)");
  if (!IsLabelName(name))
    return bad(
        "the name must be 1-63 characters of [-A-Za-z0-9_.], beginning and ending with an "
        "alphanumeric character");
  return absl::OkStatus();
}

absl::Status ValidateLabelValue(absl::string_view key, absl::string_view value) {
  if (value.empty() || IsLabelName(value)) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "label \"", key, "\" has an invalid value \"", value,
      "\": at most 63 characters of [-A-Za-z0-9_.], beginning and ending with an alphanumeric "
      "character"));
}

bool IsKubernetesLabel(absl::string_view key) {
  size_t slash = key.find('/');
  if (slash == absl::string_view::npos) return false;
  absl::string_view ns = key.substr(0, slash);
  return InDomain(ns, "kubernetes.io") || InDomain(ns, "k8s.io");
}

absl::StatusOr<ExtraLabels> ValidateExtraLabels(const Labels& requested) {
  ExtraLabels out;
  for (const auto& [k, v] : requested) {
    if (absl::Status s = ValidateLabelKey(k); !s.ok()) return s;
    if (absl::Status s = ValidateLabelValue(k, v); !s.ok()) return s;
    if (IsKubernetesLabel(k)) {
      out.warnings.push_back(absl::StrCat(
          "--node-labels: label \"", k,
          "\" is in the kubernetes.io or k8s.io namespace, which belongs to Kubernetes; ignored"));
      continue;
    }
    out.labels.emplace(k, v);
  }
  return out;
}

Labels ComputeNodeLabels(const Labels& existing, const InstanceMetadata& metadata,
                         const Labels& extra) {
  Labels out = existing;
  auto set = [&](absl::string_view key, const std::string& value) {
    if (!value.empty()) out[std::string(key)] = value;
  };
  set(kInstanceTypeLabel, metadata.instance_type);
  set(kInstanceTypeBetaLabel, metadata.instance_type);
  set(kZoneLabel, metadata.zone);
  set(kZoneBetaLabel, metadata.zone);
  set(kRegionLabel, metadata.region);
  set(kRegionBetaLabel, metadata.region);
  for (const auto& [k, v] : metadata.additional_labels) out.emplace(k, v);  // never overwrites
  for (const auto& [k, v] : extra)
    if (!IsKubernetesLabel(k)) out.emplace(k, v);
  return out;
}

}  // namespace ccm::cloud
