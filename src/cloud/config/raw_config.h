#pragma once
// The format-neutral middle step: both readers (INI, YAML) and the environment overrides produce
// RawSections keyed by the canonical (INI, kebab-case) key name; BuildConfig turns them into the
// typed Config. Every value remembers where it came from so errors can point at it.

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "cloud/config/config.h"

namespace ccm::cloud::config_internal {

struct RawValue {
  std::vector<std::string> items;  // one item for scalars; YAML lists keep their items
  bool is_list = false;
  bool implicit = false;  // INI `key` without `=`: true for booleans, error otherwise
  std::string where;      // "vsphere.conf:12: [Global] port" or YAML path + position
  std::map<std::string, std::string> map;  // YAML mappings (loadBalancer.tags)
  bool is_map = false;
};

struct RawSection {
  std::string where;             // position of the section header
  bool label_is_server = false;  // INI section name / env id value: the address unless `server`
  std::map<std::string, RawValue> keys;  // canonical key name -> value (last one wins)
};

struct RawConfig {
  std::optional<RawSection> global, labels, nodes, nsxt, load_balancer, route, snapshot;
  std::map<std::string, RawSection> vcenters;  // label -> section
  std::map<std::string, RawSection> lb_classes;
  std::map<std::string, RawSection> topology_categories;  // CSI: category -> section
  std::map<std::string, RawSection> net_permissions;      // CSI: name -> section
  std::vector<std::string> warnings;
  bool yaml = false;
};

// Known keys of a section: canonical (INI) name, YAML name, and whether the value is a secret.
struct KeySpec {
  const char* ini;
  const char* yaml;
  bool secret = false;
};
enum class SectionKind {
  kGlobal,
  kVirtualCenter,
  kLabels,
  kNodes,
  kNsxt,
  kLoadBalancer,
  kLoadBalancerClass,
  kRoute,
  kTopologyCategory,
  kSnapshot,
  kNetPermissions
};
const std::vector<KeySpec>& KeysOf(SectionKind kind);
// Looks a key up by its spelling in one format (INI: case-insensitive). On a miss, `hint` is set
// to the right spelling when the key is known in the other format's spelling.
const KeySpec* FindKey(SectionKind kind, absl::string_view name, bool yaml, std::string* hint);

// Readers. Unknown keys/sections become warnings in RawConfig::warnings.
absl::StatusOr<RawConfig> ReadIni(absl::string_view bytes, absl::string_view file);
absl::StatusOr<RawConfig> ReadYaml(absl::string_view bytes, absl::string_view file);
// True when the document parses as a YAML mapping (the reference tries YAML first).
bool LooksLikeYamlMapping(absl::string_view bytes);

// Environment overrides (env_overrides.h documents them) applied on the raw level.
absl::Status ApplyEnvironment(const Environment& env, RawConfig& raw);

struct BuildOptions {
  // false: a vCenter may name no user/password (the CSI node plugin reads only the topology part
  // of csi-vsphere.conf).
  bool credentials_required = true;
  // false: secret-name / secret-namespace are accepted and ignored with a warning (the CSI
  // driver, whose reference takes credentials from the file itself).
  bool kube_secrets = true;
};

// Defaults, inheritance, validation.
absl::StatusOr<Config> BuildConfig(const RawConfig& raw, std::vector<std::string>& warnings,
                                   const BuildOptions& options = {});

// Shared value parsers.
std::optional<bool> ParseBoolText(absl::string_view text);

}  // namespace ccm::cloud::config_internal
