// ParseConfig: format detection, reading, environment, building; plus Config helpers.
#include "cloud/config/config.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "cloud/config/raw_config.h"
#include "common/status_macros.h"

namespace ccm::cloud {
namespace {

// Some line starts with '[': a section header of the gcfg form.
bool LooksLikeIni(absl::string_view bytes) {
  for (absl::string_view line : absl::StrSplit(bytes, '\n')) {
    line = absl::StripAsciiWhitespace(line);
    if (!line.empty() && line[0] == '[') return true;
  }
  return false;
}

std::string Families(const std::vector<IpFamily>& f) {
  return absl::StrJoin(f, ",",
                       [](std::string* out, IpFamily x) { absl::StrAppend(out, IpFamilyName(x)); });
}

std::string Cidrs(const std::vector<IpNet>& nets) {
  return absl::StrJoin(
      nets, ",", [](std::string* out, const IpNet& n) { absl::StrAppend(out, n.ToString()); });
}

std::string Redact(const Secret& s) {
  return std::string(s.empty() ? "<empty>" : Secret::kRedacted);
}

}  // namespace

absl::string_view CredentialSourceKindName(CredentialSourceKind k) {
  switch (k) {
    case CredentialSourceKind::kInline:
      return "inline user/password";
    case CredentialSourceKind::kGlobalSecret:
      return "the global Secret";
    case CredentialSourceKind::kVCenterSecret:
      return "the vCenter's Secret";
    case CredentialSourceKind::kSecretsDirectory:
      return "secrets-directory";
  }
  return "?";
}

const VirtualCenterConfig* Config::FindVCenter(absl::string_view server_or_label) const {
  for (const auto& vc : vcenters) {
    if (vc.server == server_or_label) return &vc;
  }
  for (const auto& vc : vcenters) {
    if (vc.label == server_or_label) return &vc;
  }
  return nullptr;
}

std::string Config::ToString() const {
  std::string out;
  absl::StrAppend(
      &out, "global: user=", global.user, " password=", Redact(global.password),
      " port=", global.port, " insecure=", global.insecure_flag ? "true" : "false",
      " datacenters=[", absl::StrJoin(global.datacenters, ","), "]",
      " soap-roundtrip-count=", global.soap_roundtrip_count, " secret=", global.secret_namespace,
      "/", global.secret_name, " secrets-directory=", global.secrets_directory,
      " ip-family=", Families(global.ip_families), " cluster-id=", global.cluster_id, "\n");
  for (const auto& vc : vcenters) {
    absl::StrAppend(&out, "vcenter ", vc.label, ": server=", vc.server, " port=", vc.port,
                    " user=", vc.user, " password=", Redact(vc.password),
                    " insecure=", vc.insecure_flag ? "true" : "false", " datacenters=[",
                    absl::StrJoin(vc.datacenters, ","), "]",
                    " soap-roundtrip-count=", vc.soap_roundtrip_count, " ca-file=", vc.ca_file,
                    " thumbprint=", vc.thumbprint,
                    " credentials=", CredentialSourceKindName(vc.credential_source));
    if (!vc.secret_name.empty()) {
      absl::StrAppend(&out, " (", vc.secret_namespace, "/", vc.secret_name, ")");
    }
    if (!vc.secrets_directory.empty()) absl::StrAppend(&out, " (", vc.secrets_directory, ")");
    absl::StrAppend(&out, " ip-family=", Families(vc.ip_families), "\n");
  }
  absl::StrAppend(&out, "labels: region=", labels.region, " zone=", labels.zone);
  if (!labels.topology_categories.empty()) {
    absl::StrAppend(&out, " topology-categories=", absl::StrJoin(labels.topology_categories, ","));
  }
  for (const auto& [category, label] : labels.category_labels) {
    absl::StrAppend(&out, " [TopologyCategory ", category, "] label=", label);
  }
  absl::StrAppend(&out, "\n");
  absl::StrAppend(&out, "nodes: internal-cidrs=", Cidrs(nodes.internal_network_subnet_cidrs),
                  " external-cidrs=", Cidrs(nodes.external_network_subnet_cidrs),
                  " internal-network=", nodes.internal_vm_network_name,
                  " external-network=", nodes.external_vm_network_name,
                  " exclude-internal=", Cidrs(nodes.exclude_internal_network_subnet_cidrs),
                  " exclude-external=", Cidrs(nodes.exclude_external_network_subnet_cidrs), "\n");
  if (nsxt) {
    absl::StrAppend(&out, "nsxt: host=", nsxt->host, " user=", nsxt->user,
                    " password=", Redact(nsxt->password),
                    " vmc-access-token=", Redact(nsxt->vmc_access_token), "\n");
  }
  if (load_balancer) {
    absl::StrAppend(&out, "loadBalancer: size=", load_balancer->size,
                    " classes=", load_balancer->classes.size(), "\n");
  }
  if (route) absl::StrAppend(&out, "route: router-path=", route->router_path, "\n");
  return out;
}

absl::StatusOr<ParseResult> ParseConfig(absl::string_view bytes, const Environment& env,
                                        const ParseOptions& options) {
  using namespace config_internal;  // NOLINT
  const std::string& file = options.file_name;
  if (absl::StripAsciiWhitespace(bytes).empty()) {
    return absl::InvalidArgumentError(absl::StrCat(file, ": the config file is empty"));
  }
  ParseResult result;
  absl::StatusOr<RawConfig> raw;
  // Like the reference: YAML first; INI when the text is not a YAML mapping and looks like INI.
  if (LooksLikeYamlMapping(bytes) || !LooksLikeIni(bytes)) {
    result.format = ConfigFormat::kYaml;
    raw = ReadYaml(bytes, file);
  } else {
    result.format = ConfigFormat::kIni;
    raw = ReadIni(bytes, file);
    result.notices.push_back(
        absl::StrCat(file,
                     ": the INI config format is deprecated (as in the reference provider); "
                     "the YAML format has the same keys in camelCase"));
  }
  if (!raw.ok()) return raw.status();
  CCM_RETURN_IF_ERROR(ApplyEnvironment(env, *raw));
  result.warnings = std::move(raw->warnings);
  CCM_ASSIGN_OR_RETURN(
      result.config, BuildConfig(*raw, result.warnings,
                                 BuildOptions{options.credentials_required, options.kube_secrets}));
  const Config& c = result.config;
  if (c.nsxt) {
    result.notices.push_back(
        "NSX-T settings are used by the route controller and the NSX-T load balancer");
  }
  if (c.load_balancer) {
    result.notices.push_back(
        "load balancer settings: the NSX-T load balancer serves Services of type LoadBalancer "
        "when ENABLE_ALPHA_NSXT_LB is set (alpha, as in the Go provider)");
  }
  if (c.route) {
    result.notices.push_back(
        absl::StrCat("route settings: static routes on ", c.route->router_path,
                     " when --allocate-node-cidrs and --configure-cloud-routes are set"));
  }
  if (options.strict && !result.warnings.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("strict config: ", absl::StrJoin(result.warnings, "; ")));
  }
  return result;
}

}  // namespace ccm::cloud
