// Raw sections -> typed Config: defaults, inheritance from Global, validation. The rules are the
// reference's (pkg/common/config validateConfig), with mistakes it ignores reported instead.
#include <algorithm>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "cloud/config/raw_config.h"
#include "common/status_macros.h"
#include "nlohmann/json.hpp"

namespace ccm::cloud::config_internal {
namespace {

#define CCM_CFG_RETURN_IF_ERROR(expr) \
  do {                                \
    absl::Status s_ = (expr);         \
    if (!s_.ok()) return s_;          \
  } while (0)

absl::Status Invalid(const RawValue& v, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(v.where, ": ", what));
}

// Reads typed values out of one raw section.
class Reader {
 public:
  explicit Reader(const RawSection* s) : s_(s) {}
  const RawValue* Find(const char* key) const {
    if (s_ == nullptr) return nullptr;
    auto it = s_->keys.find(key);
    return it == s_->keys.end() ? nullptr : &it->second;
  }
  bool Has(const char* key) const { return Find(key) != nullptr; }

  // A single plain value; secret values are never echoed.
  absl::Status Scalar(const char* key, std::string& out, bool* present = nullptr) const {
    const RawValue* v = Find(key);
    if (present != nullptr) *present = v != nullptr;
    if (v == nullptr) return absl::OkStatus();
    if (v->implicit) return Invalid(*v, "missing value (expected `key = value`)");
    if (v->is_list || v->is_map || v->items.size() != 1) {
      return Invalid(*v, "expected a single value, got a list or mapping");
    }
    out = v->items[0];
    return absl::OkStatus();
  }
  absl::Status Str(const char* key, std::string& out) const { return Scalar(key, out); }
  absl::Status Secret(const char* key, ccm::Secret& out) const {
    std::string v;
    bool present = false;
    CCM_CFG_RETURN_IF_ERROR(Scalar(key, v, &present));
    if (present) out = ccm::Secret(std::move(v));
    return absl::OkStatus();
  }
  absl::Status Bool(const char* key, bool& out) const {
    const RawValue* v = Find(key);
    if (v == nullptr) return absl::OkStatus();
    if (v->is_list || v->is_map || v->items.size() != 1) {
      return Invalid(*v, "expected a boolean, got a list or mapping");
    }
    std::optional<bool> b = ParseBoolText(v->items[0]);
    if (!b) {
      return Invalid(*v,
                     absl::StrCat("expected a boolean (true/false, 1/0, yes/no, on/off), got \"",
                                  v->items[0], "\""));
    }
    out = *b;
    return absl::OkStatus();
  }
  // An unsigned integer in [lo, hi]; `present` tells whether the key was set.
  absl::Status Int(const char* key, int lo, int hi, int& out, bool* present) const {
    std::string text;
    CCM_CFG_RETURN_IF_ERROR(Scalar(key, text, present));
    if (!*present) return absl::OkStatus();
    int64_t n = 0;
    std::string t(absl::StripAsciiWhitespace(text));
    bool digits = !t.empty() && std::all_of(t.begin(), t.end(), [](char c) {
      return absl::ascii_isdigit(static_cast<unsigned char>(c));
    });
    if (!digits || !absl::SimpleAtoi(t, &n) || n < lo || n > hi) {
      return Invalid(*Find(key), absl::StrCat("expected an integer from ", lo, " to ", hi,
                                              ", got \"", text, "\""));
    }
    out = static_cast<int>(n);
    return absl::OkStatus();
  }
  // A comma-separated list (INI, env) or a YAML list; blanks dropped, items trimmed.
  absl::Status List(const char* key, std::vector<std::string>& out, bool* present) const {
    const RawValue* v = Find(key);
    *present = v != nullptr;
    if (v == nullptr) return absl::OkStatus();
    if (v->implicit) return Invalid(*v, "missing value (expected `key = value`)");
    if (v->is_map) return Invalid(*v, "expected a list, got a mapping");
    out.clear();
    for (const std::string& item : v->items) {
      for (absl::string_view part : absl::StrSplit(item, ',')) {
        part = absl::StripAsciiWhitespace(part);
        if (!part.empty()) out.emplace_back(part);
      }
    }
    return absl::OkStatus();
  }
  absl::Status Cidrs(const char* key, std::vector<IpNet>& out) const {
    std::vector<std::string> items;
    bool present = false;
    CCM_CFG_RETURN_IF_ERROR(List(key, items, &present));
    for (const std::string& item : items) {
      absl::StatusOr<IpNet> net = IpNet::Parse(item);
      if (!net.ok()) {
        return Invalid(*Find(key), absl::StrCat("expected CIDRs like 10.0.0.0/8 or fd00::/64, "
                                                "got \"",
                                                item, "\""));
      }
      out.push_back(*net);
    }
    return absl::OkStatus();
  }
  absl::Status IpFamilies(const char* key, std::vector<IpFamily>& out, bool* present) const {
    std::vector<std::string> items;
    CCM_CFG_RETURN_IF_ERROR(List(key, items, present));
    if (!*present) return absl::OkStatus();
    const RawValue& v = *Find(key);
    std::vector<IpFamily> families;
    for (const std::string& item : items) {
      std::string f = absl::AsciiStrToLower(item);
      IpFamily fam;
      if (f == "ipv4")
        fam = IpFamily::kIPv4;
      else if (f == "ipv6")
        fam = IpFamily::kIPv6;
      else
        return Invalid(v, absl::StrCat("expected ipv4, ipv6 or an ordered pair such as "
                                       "\"ipv4,ipv6\", got \"",
                                       item, "\""));
      if (std::find(families.begin(), families.end(), fam) != families.end()) {
        return Invalid(v, absl::StrCat("ip family \"", item, "\" is listed twice"));
      }
      families.push_back(fam);
    }
    if (families.empty()) families.push_back(IpFamily::kIPv4);  // reference default
    out = std::move(families);
    return absl::OkStatus();
  }

 private:
  const RawSection* s_;
};

const RawSection* Ptr(const std::optional<RawSection>& s) { return s ? &*s : nullptr; }

// The CSI driver's [Global] keys (csi-vsphere.conf): limits and periods as the reference checks
// them (pkg/common/config/config.go validateConfig); 0 means the default there too.
absl::Status BuildCsiGlobal(const Reader& r, GlobalConfig& g) {
  bool present = false;
  CCM_CFG_RETURN_IF_ERROR(r.Str("supervisor-id", g.supervisor_id));
  CCM_CFG_RETURN_IF_ERROR(r.Str("cluster-distribution", g.cluster_distribution));
  for (auto [key, id] :
       {std::pair{"cluster-id", &g.cluster_id}, std::pair{"supervisor-id", &g.supervisor_id}}) {
    if (id->size() > 64) {
      return absl::InvalidArgumentError(
          absl::StrCat(r.Find(key)->where, ": must not exceed 64 characters"));
    }
  }
  CCM_CFG_RETURN_IF_ERROR(r.Int("query-limit", 0, 1 << 30, g.query_limit, &present));
  if (g.query_limit == 0) g.query_limit = kDefaultQueryLimit;
  CCM_CFG_RETURN_IF_ERROR(
      r.Int("list-volume-threshold", 0, 1 << 30, g.list_volume_threshold, &present));
  if (g.list_volume_threshold == 0) g.list_volume_threshold = kDefaultListVolumeThreshold;
  CCM_CFG_RETURN_IF_ERROR(
      r.Int("vc-client-timeout", 0, 24 * 60, g.vc_client_timeout_minutes, &present));
  if (g.vc_client_timeout_minutes == 0) g.vc_client_timeout_minutes = 5;
  CCM_CFG_RETURN_IF_ERROR(r.Int("csi-fetch-preferred-datastores-intervalinmin", 0, 24 * 60,
                                g.csi_fetch_preferred_datastores_interval_minutes, &present));
  if (g.csi_fetch_preferred_datastores_interval_minutes == 0) {
    g.csi_fetch_preferred_datastores_interval_minutes = 5;
  }
  CCM_CFG_RETURN_IF_ERROR(r.Int("cnsvolumeoperationrequest-cleanup-intervalinmin", 0, 24 * 60,
                                g.cns_volume_operation_request_cleanup_minutes, &present));
  if (g.cns_volume_operation_request_cleanup_minutes == 0) {
    g.cns_volume_operation_request_cleanup_minutes = 15;
  }
  CCM_CFG_RETURN_IF_ERROR(r.Int("csi-auth-check-intervalinmin", 0, 24 * 60,
                                g.csi_auth_check_interval_minutes, &present));
  if (g.csi_auth_check_interval_minutes == 0) g.csi_auth_check_interval_minutes = 5;
  // Known to the reference, with no effect on a block-volume driver without its CRDs.
  int unused = 0;
  for (const char* key :
       {"cnsregistervolumes-cleanup-intervalinmin", "volumemigration-cr-cleanup-intervalinmin"}) {
    CCM_CFG_RETURN_IF_ERROR(r.Int(key, 0, 1 << 30, unused, &present));
  }
  return absl::OkStatus();
}

// With kube_secrets off, secret-name/secret-namespace of `s` are dropped with a warning.
void DropKubeSecret(Reader& r, std::string& name, std::string& ns,
                    std::vector<std::string>& warnings) {
  if (name.empty() && ns.empty()) return;
  const RawValue* v = r.Find("secret-name");
  if (v == nullptr) v = r.Find("secret-namespace");
  warnings.push_back(absl::StrCat(
      v != nullptr ? v->where : "csi-vsphere.conf",
      ": ignored: vsphere-csi-driver takes credentials from user and password in this file (the "
      "Secret vsphere-config-secret holds the whole file) or from secrets-directory, as the "
      "reference driver does"));
  name.clear();
  ns.clear();
}

absl::Status BuildGlobal(const RawSection* s, GlobalConfig& g, const BuildOptions& options,
                         std::vector<std::string>& warnings) {
  Reader r(s);
  bool present = false;
  CCM_CFG_RETURN_IF_ERROR(r.Str("user", g.user));
  CCM_CFG_RETURN_IF_ERROR(r.Secret("password", g.password));
  CCM_CFG_RETURN_IF_ERROR(r.Str("server", g.server));
  CCM_CFG_RETURN_IF_ERROR(r.Int("port", 1, 65535, g.port, &present));
  CCM_CFG_RETURN_IF_ERROR(r.Bool("insecure-flag", g.insecure_flag));
  CCM_CFG_RETURN_IF_ERROR(r.List("datacenters", g.datacenters, &present));
  CCM_CFG_RETURN_IF_ERROR(r.Int("soap-roundtrip-count", 0, 1000, g.soap_roundtrip_count, &present));
  if (g.soap_roundtrip_count == 0) g.soap_roundtrip_count = kDefaultSoapRoundTripCount;
  CCM_CFG_RETURN_IF_ERROR(r.Str("ca-file", g.ca_file));
  CCM_CFG_RETURN_IF_ERROR(r.Str("thumbprint", g.thumbprint));
  CCM_CFG_RETURN_IF_ERROR(r.Str("secret-name", g.secret_name));
  CCM_CFG_RETURN_IF_ERROR(r.Str("secret-namespace", g.secret_namespace));
  if (!options.kube_secrets) DropKubeSecret(r, g.secret_name, g.secret_namespace, warnings);
  CCM_CFG_RETURN_IF_ERROR(r.Str("secrets-directory", g.secrets_directory));
  CCM_CFG_RETURN_IF_ERROR(r.IpFamilies("ip-family", g.ip_families, &present));
  CCM_CFG_RETURN_IF_ERROR(r.Str("cluster-id", g.cluster_id));
  CCM_CFG_RETURN_IF_ERROR(BuildCsiGlobal(r, g));
  for (const char* key : {"api-disable", "api-binding"}) {
    if (const RawValue* v = r.Find(key)) {
      warnings.push_back(absl::StrCat(v->where,
                                      ": ignored (the reference provider's own API "
                                      "server is not part of this provider)"));
    }
  }
  if (g.secret_name.empty() != g.secret_namespace.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(s->where, ": secret-name and secret-namespace must be set together"));
  }
  if (!g.secret_name.empty() && !g.secrets_directory.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        s->where, ": set either secret-name/secret-namespace or secrets-directory, not both"));
  }
  return absl::OkStatus();
}

// [Labels] topology-categories and [TopologyCategory "<category>"] (CSI), checked as the
// reference checks them.
absl::Status BuildTopologyCategories(const RawConfig& raw, LabelsConfig& labels) {
  Reader r(Ptr(raw.labels));
  bool present = false;
  CCM_CFG_RETURN_IF_ERROR(r.List("topology-categories", labels.topology_categories, &present));
  if (!labels.topology_categories.empty()) {
    const std::string& where = r.Find("topology-categories")->where;
    if (!labels.zone.empty() || !labels.region.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": zone and region must not be set when topology-categories is set"));
    }
    if (labels.topology_categories.size() > 5) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": at most 5 topology categories are allowed, got ",
                       labels.topology_categories.size()));
    }
  }
  for (const auto& [category, section] : raw.topology_categories) {
    std::string label;
    CCM_CFG_RETURN_IF_ERROR(Reader(&section).Str("label", label));
    if (label.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(section.where, ": label is required"));
    }
    labels.category_labels[category] = label;
  }
  return absl::OkStatus();
}

// [NetPermissions "<name>"] (CSI file volumes), checked and defaulted as the reference does.
absl::Status BuildNetPermissions(const RawConfig& raw, std::vector<NetPermissionConfig>& out) {
  for (const auto& [name, section] : raw.net_permissions) {
    Reader r(&section);
    NetPermissionConfig p;
    p.name = name;
    std::string ips, permissions;
    CCM_CFG_RETURN_IF_ERROR(r.Str("ips", ips));
    CCM_CFG_RETURN_IF_ERROR(r.Str("permissions", permissions));
    CCM_CFG_RETURN_IF_ERROR(r.Bool("rootsquash", p.root_squash));
    ips = std::string(absl::StripAsciiWhitespace(ips));
    if (!ips.empty()) p.ips = ips;
    permissions = std::string(absl::StripAsciiWhitespace(permissions));
    if (!permissions.empty()) p.permissions = permissions;
    if (p.permissions != "READ_WRITE" && p.permissions != "READ_ONLY" &&
        p.permissions != "NO_ACCESS") {
      return absl::InvalidArgumentError(absl::StrCat(
          section.where, ": permissions \"", p.permissions,
          "\" is not one of READ_WRITE, READ_ONLY, NO_ACCESS (upper case, as vSAN names them)"));
    }
    out.push_back(std::move(p));
  }
  return absl::OkStatus();
}

absl::StatusOr<VirtualCenterConfig> BuildVCenter(const std::string& label, const RawSection& s,
                                                 const GlobalConfig& g, bool yaml,
                                                 const BuildOptions& options,
                                                 std::vector<std::string>& warnings) {
  Reader r(&s);
  VirtualCenterConfig vc;
  vc.label = label;
  bool present = false;
  CCM_CFG_RETURN_IF_ERROR(r.Str("server", vc.server));
  if (vc.server.empty()) {
    if (!s.label_is_server) {
      return absl::InvalidArgumentError(
          absl::StrCat(s.where, ": server is required (the key under vcenter is only a label)"));
    }
    vc.server = label;
  }
  if (std::any_of(vc.server.begin(), vc.server.end(),
                  [](char c) { return absl::ascii_isspace(static_cast<unsigned char>(c)); })) {
    return absl::InvalidArgumentError(
        absl::StrCat(s.where, ": server \"", vc.server, "\" contains whitespace"));
  }
  vc.port = g.port;
  CCM_CFG_RETURN_IF_ERROR(r.Int("port", 1, 65535, vc.port, &present));
  bool insecure = false;
  CCM_CFG_RETURN_IF_ERROR(r.Bool("insecure-flag", insecure));
  vc.insecure_flag = insecure || g.insecure_flag;  // OR'ed, as in the reference
  CCM_CFG_RETURN_IF_ERROR(r.List("datacenters", vc.datacenters, &present));
  if (vc.datacenters.empty()) vc.datacenters = g.datacenters;
  int rt = 0;
  CCM_CFG_RETURN_IF_ERROR(r.Int("soap-roundtrip-count", 0, 1000, rt, &present));
  vc.soap_roundtrip_count = rt == 0 ? g.soap_roundtrip_count : rt;
  CCM_CFG_RETURN_IF_ERROR(r.Str("ca-file", vc.ca_file));
  if (vc.ca_file.empty()) vc.ca_file = g.ca_file;
  CCM_CFG_RETURN_IF_ERROR(r.Str("thumbprint", vc.thumbprint));
  CCM_CFG_RETURN_IF_ERROR(r.Str("migration-datastore-url", vc.migration_datastore_url));
  CCM_CFG_RETURN_IF_ERROR(r.List("targetvSANFileShareDatastoreURLs",
                                 vc.target_vsan_file_share_datastore_urls, &present));
  CCM_CFG_RETURN_IF_ERROR(
      r.List("targetvSANFileShareClusters", vc.target_vsan_file_share_clusters, &present));
  if (vc.thumbprint.empty()) vc.thumbprint = g.thumbprint;
  vc.ip_families = g.ip_families;
  CCM_CFG_RETURN_IF_ERROR(r.IpFamilies("ip-family", vc.ip_families, &present));

  std::string user, secret_name, secret_namespace;
  Secret password;
  CCM_CFG_RETURN_IF_ERROR(r.Str("user", user));
  CCM_CFG_RETURN_IF_ERROR(r.Secret("password", password));
  CCM_CFG_RETURN_IF_ERROR(r.Str("secret-name", secret_name));
  CCM_CFG_RETURN_IF_ERROR(r.Str("secret-namespace", secret_namespace));
  if (!options.kube_secrets) DropKubeSecret(r, secret_name, secret_namespace, warnings);
  if (secret_name.empty() != secret_namespace.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(s.where, ": secret-name and secret-namespace must be set together"));
  }
  if (!secret_name.empty()) {
    vc.credential_source = CredentialSourceKind::kVCenterSecret;
    vc.secret_name = secret_name;
    vc.secret_namespace = secret_namespace;
  } else if (!g.secret_name.empty()) {
    vc.credential_source = CredentialSourceKind::kGlobalSecret;
    vc.secret_name = g.secret_name;
    vc.secret_namespace = g.secret_namespace;
  } else if (!g.secrets_directory.empty()) {
    vc.credential_source = CredentialSourceKind::kSecretsDirectory;
    vc.secrets_directory = g.secrets_directory;
  } else {
    vc.credential_source = CredentialSourceKind::kInline;
    vc.user = user.empty() ? g.user : user;
    vc.password = password.empty() ? g.password : password;
    if (options.credentials_required && (vc.user.empty() || vc.password.empty())) {
      return absl::InvalidArgumentError(absl::StrCat(
          s.where, ": no credentials for vCenter \"", vc.server,
          "\": ", vc.user.empty() ? "user" : "password", " is missing (set user and password, ",
          options.kube_secrets ? "secret-name and secret-namespace, " : "",
          "or secrets-directory in Global)"));
    }
  }
  if (vc.credential_source != CredentialSourceKind::kInline &&
      (!user.empty() || !password.empty())) {
    warnings.push_back(absl::StrCat(s.where, ": user/password ignored: credentials for \"",
                                    vc.server, "\" come from ",
                                    CredentialSourceKindName(vc.credential_source)));
  }
  return vc;
}

absl::Status BuildNsxt(const RawSection& s, NsxtConfig& n) {
  Reader r(&s);
  CCM_CFG_RETURN_IF_ERROR(r.Str("user", n.user));
  CCM_CFG_RETURN_IF_ERROR(r.Secret("password", n.password));
  CCM_CFG_RETURN_IF_ERROR(r.Str("host", n.host));
  CCM_CFG_RETURN_IF_ERROR(r.Bool("insecure-flag", n.insecure_flag));
  CCM_CFG_RETURN_IF_ERROR(r.Bool("remote-auth", n.remote_auth));
  CCM_CFG_RETURN_IF_ERROR(r.Str("secret-name", n.secret_name));
  CCM_CFG_RETURN_IF_ERROR(r.Str("secret-namespace", n.secret_namespace));
  CCM_CFG_RETURN_IF_ERROR(r.Secret("vmc-access-token", n.vmc_access_token));
  CCM_CFG_RETURN_IF_ERROR(r.Str("vmc-auth-host", n.vmc_auth_host));
  CCM_CFG_RETURN_IF_ERROR(r.Str("client-auth-cert-file", n.client_auth_cert_file));
  CCM_CFG_RETURN_IF_ERROR(r.Str("client-auth-key-file", n.client_auth_key_file));
  CCM_CFG_RETURN_IF_ERROR(r.Str("ca-file", n.ca_file));
  auto err = [&](absl::string_view m) {
    return absl::InvalidArgumentError(absl::StrCat(s.where, ": ", m));
  };
  // The reference's checks, in its order.
  if (!n.vmc_access_token.empty()) {
    if (n.vmc_auth_host.empty()) return err("vmc-auth-host is required with vmc-access-token");
  } else if (!n.vmc_auth_host.empty()) {
    return err("vmc-access-token is required with vmc-auth-host");
  } else if (!n.user.empty()) {
    if (n.password.empty()) return err("password is required with user");
  } else if (!n.client_auth_key_file.empty()) {
    if (n.client_auth_cert_file.empty()) {
      return err("client-auth-cert-file is required with client-auth-key-file");
    }
  } else if (!n.client_auth_cert_file.empty()) {
    return err("client-auth-key-file is required with client-auth-cert-file");
  } else if (!n.secret_name.empty()) {
    if (n.secret_namespace.empty()) return err("secret-namespace is required with secret-name");
  } else if (!n.secret_namespace.empty()) {
    return err("secret-name is required with secret-namespace");
  } else {
    return err("one of user, vmc-access-token, client-auth-cert-file or secret-name is required");
  }
  if (n.host.empty()) return err("host is required");
  return absl::OkStatus();
}

absl::Status BuildLbClass(const RawSection& s, LoadBalancerClassConfig& c) {
  Reader r(&s);
  CCM_CFG_RETURN_IF_ERROR(r.Str("ip-pool-name", c.ip_pool_name));
  CCM_CFG_RETURN_IF_ERROR(r.Str("ip-pool-id", c.ip_pool_id));
  CCM_CFG_RETURN_IF_ERROR(r.Str("tcp-app-profile-name", c.tcp_app_profile_name));
  CCM_CFG_RETURN_IF_ERROR(r.Str("tcp-app-profile-path", c.tcp_app_profile_path));
  CCM_CFG_RETURN_IF_ERROR(r.Str("udp-app-profile-name", c.udp_app_profile_name));
  CCM_CFG_RETURN_IF_ERROR(r.Str("udp-app-profile-path", c.udp_app_profile_path));
  return absl::OkStatus();
}

absl::Status BuildLoadBalancer(const RawConfig& raw, LoadBalancerConfig& lb) {
  static const RawSection kEmpty{"loadBalancer", {}};
  const RawSection& s = raw.load_balancer ? *raw.load_balancer : kEmpty;
  Reader r(&s);
  CCM_CFG_RETURN_IF_ERROR(BuildLbClass(s, lb.defaults));
  CCM_CFG_RETURN_IF_ERROR(r.Str("size", lb.size));
  CCM_CFG_RETURN_IF_ERROR(r.Str("lb-service-id", lb.lb_service_id));
  CCM_CFG_RETURN_IF_ERROR(r.Str("tier1-gateway-path", lb.tier1_gateway_path));
  CCM_CFG_RETURN_IF_ERROR(r.Bool("snat-disabled", lb.snat_disabled));
  if (const RawValue* tags = r.Find("tags")) {
    if (tags->is_map) {
      lb.tags = tags->map;
    } else if (!tags->is_list && tags->items.size() == 1 && !tags->implicit) {
      // INI: a JSON object of string values, as in the reference.
      nlohmann::json j = nlohmann::json::parse(tags->items[0], nullptr, /*allow_exceptions=*/false);
      if (!j.is_object()) return Invalid(*tags, "expected a JSON object of strings for tags");
      for (auto it = j.begin(); it != j.end(); ++it) {
        if (!it.value().is_string()) return Invalid(*tags, "expected a JSON object of strings");
        lb.tags[it.key()] = it.value().get<std::string>();
      }
    } else {
      return Invalid(*tags, "expected a mapping of tag names to values");
    }
  }
  for (const auto& [name, cs] : raw.lb_classes) {
    LoadBalancerClassConfig c;
    CCM_CFG_RETURN_IF_ERROR(BuildLbClass(cs, c));
    if (c.ip_pool_name.empty()) c.ip_pool_name = lb.defaults.ip_pool_name;
    if (c.ip_pool_id.empty()) c.ip_pool_id = lb.defaults.ip_pool_id;
    lb.classes[name] = c;
  }
  auto err = [&](absl::string_view m) {
    return absl::InvalidArgumentError(absl::StrCat(s.where, ": ", m));
  };
  if (lb.lb_service_id.empty() && lb.tier1_gateway_path.empty()) {
    return err("either lb-service-id or tier1-gateway-path is required");
  }
  if (lb.defaults.tcp_app_profile_name.empty() && lb.defaults.tcp_app_profile_path.empty()) {
    return err("either tcp-app-profile-name or tcp-app-profile-path is required");
  }
  if (lb.defaults.udp_app_profile_name.empty() && lb.defaults.udp_app_profile_path.empty()) {
    return err("either udp-app-profile-name or udp-app-profile-path is required");
  }
  static const std::set<std::string> kSizes = {"SMALL", "MEDIUM", "LARGE", "XLARGE"};
  if (kSizes.count(lb.size) == 0) {
    return err(
        absl::StrCat("size must be one of SMALL, MEDIUM, LARGE, XLARGE, got \"", lb.size, "\""));
  }
  if (lb.defaults.ip_pool_id.empty() && lb.defaults.ip_pool_name.empty()) {
    auto it = lb.classes.find("default");
    if (it == lb.classes.end()) {
      return err("no ip-pool-name/ip-pool-id and no default load balancer class");
    }
    if (it->second.ip_pool_name.empty() && it->second.ip_pool_id.empty()) {
      return err("the default load balancer class has neither ip-pool-name nor ip-pool-id");
    }
  } else if (!lb.defaults.ip_pool_id.empty() && !lb.defaults.ip_pool_name.empty()) {
    return err("set either ip-pool-name or ip-pool-id, not both");
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Config> BuildConfig(const RawConfig& raw, std::vector<std::string>& warnings,
                                   const BuildOptions& options) {
  Config cfg;
  const RawSection* global = Ptr(raw.global);
  static const RawSection kEmptyGlobal{"Global", {}};
  if (global == nullptr) global = &kEmptyGlobal;
  CCM_CFG_RETURN_IF_ERROR(BuildGlobal(global, cfg.global, options, warnings));

  std::map<std::string, RawSection> vcenters = raw.vcenters;
  if (!cfg.global.server.empty() && vcenters.count(cfg.global.server) == 0) {
    // Deprecated single-vCenter form: Global server adds a vCenter inheriting everything.
    RawSection s{global->where, {}};
    s.label_is_server = true;
    vcenters.emplace(cfg.global.server, std::move(s));
  }
  if (vcenters.empty()) {
    return absl::InvalidArgumentError(
        raw.yaml ? "no vCenter configured: add an entry under vcenter: (with server:)"
                 : "no vCenter configured: add a [VirtualCenter \"<address>\"] section");
  }
  std::map<std::string, std::string> servers;  // server:port -> label
  for (const auto& [label, s] : vcenters) {
    if (label.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(s.where, ": empty vCenter name"));
    }
    CCM_ASSIGN_OR_RETURN(VirtualCenterConfig vc,
                         BuildVCenter(label, s, cfg.global, raw.yaml, options, warnings));
    std::string id = absl::StrCat(vc.server, ":", vc.port);
    auto [it, inserted] = servers.emplace(id, label);
    if (!inserted) {
      return absl::InvalidArgumentError(absl::StrCat(s.where, ": vCenter ", vc.server,
                                                     " is configured twice (\"", it->second,
                                                     "\" and \"", label, "\")"));
    }
    cfg.vcenters.push_back(std::move(vc));
  }

  Reader labels(Ptr(raw.labels));
  CCM_CFG_RETURN_IF_ERROR(labels.Str("region", cfg.labels.region));
  CCM_CFG_RETURN_IF_ERROR(labels.Str("zone", cfg.labels.zone));
  if (cfg.labels.region.empty() != cfg.labels.zone.empty()) {
    warnings.push_back(absl::StrCat(raw.labels->where, ": only ",
                                    cfg.labels.region.empty() ? "zone" : "region",
                                    " is set; zones and regions are looked up only when both "
                                    "are set"));
  }
  CCM_CFG_RETURN_IF_ERROR(BuildTopologyCategories(raw, cfg.labels));
  CCM_CFG_RETURN_IF_ERROR(BuildNetPermissions(raw, cfg.net_permissions));
  Reader snapshot(Ptr(raw.snapshot));
  SnapshotConfig& sc = cfg.snapshot;
  bool present = false;
  // Not bounded here, as the reference does not (vCenter itself allows 32 per disk).
  CCM_CFG_RETURN_IF_ERROR(snapshot.Int("global-max-snapshots-per-block-volume", 0, 1 << 30,
                                       sc.global_max_per_block_volume, &present));
  if (sc.global_max_per_block_volume == 0) sc.global_max_per_block_volume = 3;
  CCM_CFG_RETURN_IF_ERROR(snapshot.Int("granular-max-snapshots-per-block-volume-vsan", 0, 1 << 30,
                                       sc.vsan_max_per_block_volume, &present));
  CCM_CFG_RETURN_IF_ERROR(snapshot.Int("granular-max-snapshots-per-block-volume-vvol", 0, 1 << 30,
                                       sc.vvol_max_per_block_volume, &present));

  Reader nodes(Ptr(raw.nodes));
  NodesConfig& n = cfg.nodes;
  CCM_CFG_RETURN_IF_ERROR(
      nodes.Cidrs("internal-network-subnet-cidr", n.internal_network_subnet_cidrs));
  CCM_CFG_RETURN_IF_ERROR(
      nodes.Cidrs("external-network-subnet-cidr", n.external_network_subnet_cidrs));
  CCM_CFG_RETURN_IF_ERROR(nodes.Str("internal-vm-network-name", n.internal_vm_network_name));
  CCM_CFG_RETURN_IF_ERROR(nodes.Str("external-vm-network-name", n.external_vm_network_name));
  CCM_CFG_RETURN_IF_ERROR(
      nodes.Cidrs("exclude-internal-network-subnet-cidr", n.exclude_internal_network_subnet_cidrs));
  CCM_CFG_RETURN_IF_ERROR(
      nodes.Cidrs("exclude-external-network-subnet-cidr", n.exclude_external_network_subnet_cidrs));

  if (raw.nsxt) {
    NsxtConfig nsxt;
    CCM_CFG_RETURN_IF_ERROR(BuildNsxt(*raw.nsxt, nsxt));
    cfg.nsxt = std::move(nsxt);
  }
  if (raw.load_balancer || !raw.lb_classes.empty()) {
    LoadBalancerConfig lb;
    CCM_CFG_RETURN_IF_ERROR(BuildLoadBalancer(raw, lb));
    cfg.load_balancer = std::move(lb);
  }
  if (raw.route) {
    RouteConfig route;
    CCM_CFG_RETURN_IF_ERROR(Reader(&*raw.route).Str("router-path", route.router_path));
    if (route.router_path.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat(raw.route->where, ": router-path is required"));
    }
    if (!cfg.nsxt) {
      return absl::InvalidArgumentError(
          absl::StrCat(raw.route->where, ": routes need the NSX-T section (nsxt)"));
    }
    cfg.route = std::move(route);
  }
  return cfg;
}

}  // namespace ccm::cloud::config_internal
