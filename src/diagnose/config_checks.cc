#include "diagnose/config_checks.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace ccm::diagnose {
namespace {

std::string Credentials(const cloud::VirtualCenterConfig& vc) {
  switch (vc.credential_source) {
    case cloud::CredentialSourceKind::kInline:
      return absl::StrCat("inline user ", vc.user);
    case cloud::CredentialSourceKind::kGlobalSecret:
    case cloud::CredentialSourceKind::kVCenterSecret:
      return absl::StrCat("Secret ", vc.secret_namespace, "/", vc.secret_name);
    case cloud::CredentialSourceKind::kSecretsDirectory:
      return absl::StrCat("secrets-directory ", vc.secrets_directory);
  }
  return std::string(cloud::CredentialSourceKindName(vc.credential_source));
}

std::string Trust(const cloud::VirtualCenterConfig& vc) {
  if (vc.insecure_flag) return "certificate NOT checked (insecure-flag)";
  if (!vc.thumbprint.empty()) return absl::StrCat("certificate pinned by thumbprint");
  if (!vc.ca_file.empty()) return absl::StrCat("certificate checked against ", vc.ca_file);
  return "certificate checked against the system's CAs";
}

}  // namespace

void CheckConfig(const std::string& path, const absl::StatusOr<cloud::ParseResult>& parsed,
                 Report& report) {
  if (!parsed.ok()) {
    report.Error("config", std::string(parsed.status().message()),
                 absl::StrCat("correct ", path, " (the message names the line and the key)"));
    return;
  }
  const cloud::Config& c = parsed->config;
  report.Ok(
      "config",
      absl::StrCat(
          "read ", path, ": ", c.vcenters.size(), " vCenter", c.vcenters.size() == 1 ? "" : "s",
          c.global.cluster_id.empty() ? "" : absl::StrCat(", cluster-id ", c.global.cluster_id)));
  for (const std::string& w : parsed->warnings) {
    report.Warn("config", w, "remove or correct the key: it is ignored as it is");
  }
  for (const cloud::VirtualCenterConfig& vc : c.vcenters) {
    const std::string dcs =
        vc.datacenters.empty() ? "every datacenter" : absl::StrJoin(vc.datacenters, ", ");
    const std::string line = absl::StrCat(vc.server, ":", vc.port, ", ", dcs, ", credentials ",
                                          Credentials(vc), ", ", Trust(vc));
    if (vc.insecure_flag) {
      report.Warn(absl::StrCat("config ", vc.label), line,
                  "set ca-file or thumbprint instead of insecure-flag");
    } else {
      report.Ok(absl::StrCat("config ", vc.label), line);
    }
  }
}

}  // namespace ccm::diagnose
