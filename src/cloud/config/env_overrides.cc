// Environment overrides on the raw config; see env_overrides.h for the table.
#include "cloud/config/env_overrides.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "cloud/config/raw_config.h"

namespace ccm::cloud::config_internal {
namespace {

struct Mapping {
  const char* var;
  const char* key;
};

constexpr Mapping kGlobalVars[] = {
    {"VSPHERE_VCENTER", "server"},
    {"VSPHERE_VCENTER_PORT", "port"},
    {"VSPHERE_USER", "user"},
    {"VSPHERE_PASSWORD", "password"},
    {"VSPHERE_DATACENTER", "datacenters"},
    {"VSPHERE_SECRET_NAME", "secret-name"},
    {"VSPHERE_SECRET_NAMESPACE", "secret-namespace"},
    {"VSPHERE_SECRETS_DIRECTORY", "secrets-directory"},
    {"VSPHERE_ROUNDTRIP_COUNT", "soap-roundtrip-count"},
    {"VSPHERE_INSECURE", "insecure-flag"},
    {"VSPHERE_CAFILE", "ca-file"},
    {"VSPHERE_THUMBPRINT", "thumbprint"},
    {"VSPHERE_IP_FAMILY", "ip-family"},
    {"VSPHERE_API_DISABLE", "api-disable"},
    {"VSPHERE_API_BINDING", "api-binding"},
};
constexpr Mapping kLabelVars[] = {
    {"VSPHERE_LABEL_REGION", "region"},
    {"VSPHERE_LABEL_ZONE", "zone"},
};
constexpr Mapping kNodeVars[] = {
    {"VSPHERE_NODES_INTERNAL_NETWORK_SUBNET_CIDR", "internal-network-subnet-cidr"},
    {"VSPHERE_NODES_EXTERNAL_NETWORK_SUBNET_CIDR", "external-network-subnet-cidr"},
    {"VSPHERE_NODES_INTERNAL_VM_NETWORK_NAME", "internal-vm-network-name"},
    {"VSPHERE_NODES_EXTERNAL_VM_NETWORK_NAME", "external-vm-network-name"},
    {"VSPHERE_NODES_EXCLUDE_INTERNAL_NETWORK_SUBNET_CIDR", "exclude-internal-network-subnet-cidr"},
    {"VSPHERE_NODES_EXCLUDE_EXTERNAL_NETWORK_SUBNET_CIDR", "exclude-external-network-subnet-cidr"},
};
constexpr Mapping kSnapshotVars[] = {
    {"GLOBAL_MAX_SNAPSHOTS_PER_BLOCK_VOLUME", "global-max-snapshots-per-block-volume"},
    {"GRANULAR_MAX_SNAPSHOTS_PER_BLOCK_VOLUME_VSAN",
     "granular-max-snapshots-per-block-volume-vsan"},
    {"GRANULAR_MAX_SNAPSHOTS_PER_BLOCK_VOLUME_VVOL",
     "granular-max-snapshots-per-block-volume-vvol"},
};
// Suffixes of VCENTER_<ID>_...
constexpr Mapping kVCenterVars[] = {
    {"_SERVER", "server"},
    {"_PORT", "port"},
    {"_USERNAME", "user"},
    {"_PASSWORD", "password"},
    {"_INSECURE", "insecure-flag"},
    {"_DATACENTERS", "datacenters"},
    {"_ROUNDTRIP", "soap-roundtrip-count"},
    {"_CAFILE", "ca-file"},
    {"_THUMBPRINT", "thumbprint"},
    {"_SECRET_NAME", "secret-name"},
    {"_SECRET_NAMESPACE", "secret-namespace"},
    {"_IP_FAMILY", "ip-family"},
};

void Set(RawSection& section, const char* key, const std::string& var, const std::string& v) {
  RawValue value;
  value.items.push_back(v);
  value.where = absl::StrCat("environment ", var);
  section.keys[key] = std::move(value);
}

template <size_t N>
void ApplyTable(const Environment& env, const Mapping (&table)[N], std::optional<RawSection>& slot,
                const char* section_name) {
  for (const Mapping& m : table) {
    auto it = env.find(m.var);
    if (it == env.end() || it->second.empty()) continue;
    if (!slot) slot = RawSection{absl::StrCat("environment (", section_name, ")"), {}};
    Set(*slot, m.key, m.var, it->second);
  }
}

}  // namespace

absl::Status ApplyEnvironment(const Environment& env, RawConfig& raw) {
  ApplyTable(env, kGlobalVars, raw.global, "Global");
  ApplyTable(env, kLabelVars, raw.labels, "Labels");
  ApplyTable(env, kNodeVars, raw.nodes, "Nodes");
  ApplyTable(env, kSnapshotVars, raw.snapshot, "Snapshot");

  constexpr absl::string_view kPrefix = "VSPHERE_VCENTER_";
  for (const auto& [var, value] : env) {
    if (!absl::StartsWith(var, kPrefix) || value.empty() || var == "VSPHERE_VCENTER_PORT") {
      continue;
    }
    std::string id = var.substr(kPrefix.size());
    if (id.empty()) continue;
    auto [it, inserted] =
        raw.vcenters.try_emplace(value, RawSection{absl::StrCat("environment ", var), {}});
    if (inserted) it->second.label_is_server = true;
    for (const Mapping& m : kVCenterVars) {
      std::string name = absl::StrCat("VCENTER_", id, m.var);
      auto e = env.find(name);
      if (e == env.end() || e->second.empty()) continue;
      Set(it->second, m.key, name, e->second);
    }
  }
  return absl::OkStatus();
}

}  // namespace ccm::cloud::config_internal
