#pragma once
// vsphere.conf in typed form, and ParseConfig: bytes + environment in, typed config (or an error
// naming file, line/path, key and what was expected) out. Pure: no file or getenv access.
//
// Both formats of the reference provider are read: YAML (camelCase keys) and the legacy gcfg INI
// (kebab-case keys). Detection follows the reference: YAML first; a document that is not a YAML
// mapping and looks like INI (first section header) is read as INI. Both produce the same Config.
// Environment overrides are listed in env_overrides.h.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "cloud/core/nodes_config.h"
#include "common/ip.h"
#include "common/secret.h"

namespace ccm::cloud {

inline constexpr int kDefaultVCenterPort = 443;
inline constexpr int kDefaultSoapRoundTripCount = 3;
// The reference CSI driver's defaults (pkg/common/config/config.go).
inline constexpr int kDefaultQueryLimit = 10000;
inline constexpr int kDefaultListVolumeThreshold = 50;

// Where a vCenter's credentials come from (precedence as in the reference: a per-VC Secret, else
// the global Secret or secrets-directory, else inline user/password).
enum class CredentialSourceKind { kInline, kGlobalSecret, kVCenterSecret, kSecretsDirectory };
absl::string_view CredentialSourceKindName(CredentialSourceKind k);

// [Global] / global:. Values here are the defaults each vCenter inherits.
struct GlobalConfig {
  std::string user;
  Secret password;
  std::string server;  // deprecated single-vCenter form: adds a vCenter with this address
  int port = kDefaultVCenterPort;
  bool insecure_flag = false;
  std::vector<std::string> datacenters;
  int soap_roundtrip_count = kDefaultSoapRoundTripCount;
  std::string ca_file;
  std::string thumbprint;
  std::string secret_name;
  std::string secret_namespace;
  std::string secrets_directory;
  std::vector<IpFamily> ip_families = {IpFamily::kIPv4};
  std::string cluster_id;
  // The CSI driver's (csi-vsphere.conf); the cloud controller manager ignores them.
  std::string supervisor_id;
  std::string cluster_distribution;      // CNS container cluster flavour's distribution name
  int query_limit = kDefaultQueryLimit;  // CNS QueryAll page size
  int list_volume_threshold = kDefaultListVolumeThreshold;
  int vc_client_timeout_minutes = 5;
  int csi_fetch_preferred_datastores_interval_minutes = 5;
  // How often the CSI controller reads the user's privileges on the datastores.
  int csi_auth_check_interval_minutes = 5;
  // How often ended CnsVolumeOperationRequests are cleaned up (those older than 15 minutes).
  int cns_volume_operation_request_cleanup_minutes = 15;
  bool operator==(const GlobalConfig&) const = default;
};

// [VirtualCenter "<label>"] / vcenter.<label>: after inheritance from Global.
struct VirtualCenterConfig {
  std::string label;   // INI section name / YAML map key / VSPHERE_VCENTER_<ID> value
  std::string server;  // address to connect to; the key for credentials (Secret keys use it)
  int port = kDefaultVCenterPort;
  std::string user;  // inline credentials (only used when credential_source == kInline)
  Secret password;
  bool insecure_flag = false;            // OR of this vCenter's and Global's value
  std::vector<std::string> datacenters;  // empty = all datacenters
  int soap_roundtrip_count = kDefaultSoapRoundTripCount;
  std::string ca_file;
  std::string thumbprint;
  CredentialSourceKind credential_source = CredentialSourceKind::kInline;
  std::string secret_name;  // the Secret to read for kGlobalSecret / kVCenterSecret
  std::string secret_namespace;
  std::string secrets_directory;                          // for kSecretsDirectory
  std::vector<IpFamily> ip_families = {IpFamily::kIPv4};  // ordered; two entries = dual stack
  std::string migration_datastore_url;  // CSI: default datastore of migrated in-tree volumes
  // CSI file volumes: when set, only these vSAN datastores (URLs) / these clusters (MOIDs or
  // names) hold file shares (the reference's targetvSANFileShareDatastoreURLs, read by its 2.x
  // releases, and targetvSANFileShareClusters).
  std::vector<std::string> target_vsan_file_share_datastore_urls;
  std::vector<std::string> target_vsan_file_share_clusters;
  bool operator==(const VirtualCenterConfig&) const = default;
};

// [Labels] / labels: vSphere tag CATEGORY names for zones and regions.
struct LabelsConfig {
  std::string region;
  std::string zone;
  // CSI: `topology-categories` (at most 5 category names, comma separated); when set it wins
  // over zone/region for the CSI driver's topology keys.
  std::vector<std::string> topology_categories;
  // CSI: [TopologyCategory "<category>"] label = the Node label key used for that category.
  std::map<std::string, std::string> category_labels;
  bool ZonesEnabled() const { return !region.empty() && !zone.empty(); }
  bool operator==(const LabelsConfig&) const = default;
};

// [NSXT] / nsxt: the NSX-T manager (cloud/nsxt/nsxt_connection.h).
struct NsxtConfig {
  std::string user;
  Secret password;
  std::string host;
  bool insecure_flag = false;
  bool remote_auth = false;
  std::string secret_name;
  std::string secret_namespace;
  Secret vmc_access_token;
  std::string vmc_auth_host;
  std::string client_auth_cert_file;
  std::string client_auth_key_file;
  std::string ca_file;
  bool operator==(const NsxtConfig&) const = default;
};

struct LoadBalancerClassConfig {
  std::string ip_pool_name;
  std::string ip_pool_id;
  std::string tcp_app_profile_name;
  std::string tcp_app_profile_path;
  std::string udp_app_profile_name;
  std::string udp_app_profile_path;
  bool operator==(const LoadBalancerClassConfig&) const = default;
};

// [LoadBalancer] + [LoadBalancerClass "<name>"] / loadBalancer + loadBalancerClass: the NSX-T
// load balancer (cloud/nsxt/nsxt_load_balancer.h), with ENABLE_ALPHA_NSXT_LB.
struct LoadBalancerConfig {
  LoadBalancerClassConfig defaults;
  std::string size;  // SMALL, MEDIUM, LARGE, XLARGE
  std::string lb_service_id;
  std::string tier1_gateway_path;
  bool snat_disabled = false;  // snat-disabled: the pools keep the clients' source addresses
  std::map<std::string, std::string> tags;
  std::map<std::string, LoadBalancerClassConfig> classes;
  bool operator==(const LoadBalancerConfig&) const = default;
};

// CSI: [Snapshot], the per-volume snapshot limits (the reference's keys and defaults). A
// granular limit (> 0) replaces the global one for volumes on vSAN or vVol datastores.
struct SnapshotConfig {
  int global_max_per_block_volume = 3;  // global-max-snapshots-per-block-volume
  int vsan_max_per_block_volume = 0;    // granular-max-snapshots-per-block-volume-vsan
  int vvol_max_per_block_volume = 0;    // granular-max-snapshots-per-block-volume-vvol
  bool operator==(const SnapshotConfig&) const = default;
};

// CSI: [NetPermissions "<name>"], one access rule of the vSAN file shares this driver creates
// (CnsVSANFileCreateSpec.permission), with the reference's defaults.
struct NetPermissionConfig {
  std::string name;
  std::string ips = "*";                   // ips: an address, a CIDR or "*"
  std::string permissions = "READ_WRITE";  // permissions: READ_WRITE, READ_ONLY or NO_ACCESS
  bool root_squash = false;                // rootsquash: true = root is mapped to nobody
  bool operator==(const NetPermissionConfig&) const = default;
};

// [Route] / route: where the route controller puts pod routes (cloud/nsxt/nsxt_routes.h).
struct RouteConfig {
  std::string router_path;
  bool operator==(const RouteConfig&) const = default;
};

struct Config {
  GlobalConfig global;
  std::vector<VirtualCenterConfig> vcenters;  // at least one, sorted by label
  LabelsConfig labels;
  NodesConfig nodes;
  std::optional<NsxtConfig> nsxt;
  std::optional<LoadBalancerConfig> load_balancer;
  std::optional<RouteConfig> route;
  SnapshotConfig snapshot;
  // CSI: [NetPermissions] sections by name; empty = the reference's default (every address,
  // READ_WRITE, root not squashed), see csi/core/file_volume.h.
  std::vector<NetPermissionConfig> net_permissions;

  // The vCenter with this server address (or label), nullptr if none.
  const VirtualCenterConfig* FindVCenter(absl::string_view server_or_label) const;
  // Multi-line human-readable dump; secrets print as <redacted>.
  std::string ToString() const;
  bool operator==(const Config&) const = default;
};

enum class ConfigFormat { kYaml, kIni };

struct ParseOptions {
  std::string file_name = "vsphere.conf";  // used in messages only
  bool strict = false;                     // warnings (unknown keys, ...) become errors
  // false: a vCenter without user/password is accepted (the CSI node plugin, which never logs
  // in, reads only the topology part of csi-vsphere.conf).
  bool credentials_required = true;
  // false (vsphere-csi-driver): secret-name / secret-namespace are ignored with a warning, as the
  // reference CSI driver ignores them; credentials come from user/password or secrets-directory.
  bool kube_secrets = true;
};

struct ParseResult {
  Config config;
  ConfigFormat format = ConfigFormat::kYaml;
  std::vector<std::string> warnings;  // never contain secret values; errors when strict
  std::vector<std::string> notices;   // informational (deprecated format, inactive sections)
};

using Environment = std::map<std::string, std::string>;

// Parses vsphere.conf. `env` holds the process environment (the caller reads it); see
// env_overrides.h for the variables that override file values.
absl::StatusOr<ParseResult> ParseConfig(absl::string_view bytes, const Environment& env,
                                        const ParseOptions& options = {});

}  // namespace ccm::cloud
