// Key tables: the reference's gcfg tag (INI) and yaml tag for every known key.
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "cloud/config/raw_config.h"

namespace ccm::cloud::config_internal {
namespace {

const std::vector<KeySpec> kGlobal = {
    {"user", "user"},
    {"password", "password", true},
    {"server", "server"},
    {"port", "port"},
    {"insecure-flag", "insecureFlag"},
    {"datacenters", "datacenters"},
    {"soap-roundtrip-count", "soapRoundtripCount"},
    {"ca-file", "caFile"},
    {"thumbprint", "thumbprint"},
    {"secret-name", "secretName"},
    {"secret-namespace", "secretNamespace"},
    {"secrets-directory", "secretsDirectory"},
    {"ip-family", "ipFamily"},
    {"cluster-id", "clusterID"},
    // The CSI driver's keys (csi-vsphere.conf, kubernetes-sigs/vsphere-csi-driver
    // pkg/common/config/types.go); the cloud controller manager ignores them.
    {"supervisor-id", "supervisorID"},
    {"cluster-distribution", "clusterDistribution"},
    {"vc-client-timeout", "vcClientTimeout"},
    {"query-limit", "queryLimit"},
    {"list-volume-threshold", "listVolumeThreshold"},
    {"csi-fetch-preferred-datastores-intervalinmin", "csiFetchPreferredDatastoresIntervalInMin"},
    {"csi-auth-check-intervalinmin", "csiAuthCheckIntervalInMin"},
    {"cnsregistervolumes-cleanup-intervalinmin", "cnsRegisterVolumesCleanupIntervalInMin"},
    {"volumemigration-cr-cleanup-intervalinmin", "volumeMigrationCRCleanupIntervalInMin"},
    {"cnsvolumeoperationrequest-cleanup-intervalinmin",
     "cnsVolumeOperationRequestCleanupIntervalInMin"},
    // Accepted for compatibility; the reference's CCM API they configured is gone.
    {"api-disable", "apiDisable"},
    {"api-binding", "apiBinding"},
};

const std::vector<KeySpec> kVirtualCenter = {
    {"user", "user"},
    {"password", "password", true},
    {"server", "server"},
    {"port", "port"},
    {"insecure-flag", "insecureFlag"},
    {"datacenters", "datacenters"},
    {"soap-roundtrip-count", "soapRoundtripCount"},
    {"ca-file", "caFile"},
    {"thumbprint", "thumbprint"},
    {"secret-name", "secretName"},
    {"secret-namespace", "secretNamespace"},
    {"ip-family", "ipFamily"},
    // CSI: file volumes' datastores and clusters, in-tree migration's default datastore.
    {"targetvSANFileShareDatastoreURLs", "targetvSANFileShareDatastoreURLs"},
    {"targetvSANFileShareClusters", "targetvSANFileShareClusters"},
    {"migration-datastore-url", "migrationDatastoreURL"},
};

const std::vector<KeySpec> kLabels = {
    {"region", "region"}, {"zone", "zone"}, {"topology-categories", "topologyCategories"}};

// CSI: [TopologyCategory "<category>"] label = the Node label key for that category.
const std::vector<KeySpec> kTopologyCategory = {{"label", "label"}};
// CSI: [Snapshot]; accepted (snapshots are not implemented by this driver).
const std::vector<KeySpec> kSnapshot = {
    {"global-max-snapshots-per-block-volume", "globalMaxSnapshotsPerBlockVolume"},
    {"granular-max-snapshots-per-block-volume-vsan", "granularMaxSnapshotsPerBlockVolumeInVSAN"},
    {"granular-max-snapshots-per-block-volume-vvol", "granularMaxSnapshotsPerBlockVolumeInVVOL"},
};
// CSI: [NetPermissions "<name>"]: the access rules of file volumes' vSAN file shares.
const std::vector<KeySpec> kNetPermissions = {
    {"ips", "ips"}, {"permissions", "permissions"}, {"rootsquash", "rootsquash"}};

const std::vector<KeySpec> kNodes = {
    {"internal-network-subnet-cidr", "internalNetworkSubnetCidr"},
    {"external-network-subnet-cidr", "externalNetworkSubnetCidr"},
    {"internal-vm-network-name", "internalVmNetworkName"},
    {"external-vm-network-name", "externalVmNetworkName"},
    {"exclude-internal-network-subnet-cidr", "excludeInternalNetworkSubnetCidr"},
    {"exclude-external-network-subnet-cidr", "excludeExternalNetworkSubnetCidr"},
};

const std::vector<KeySpec> kNsxt = {
    {"user", "user"},
    {"password", "password", true},
    {"host", "host"},
    {"insecure-flag", "insecureFlag"},
    {"remote-auth", "remoteAuth"},
    {"secret-name", "secretName"},
    {"secret-namespace", "secretNamespace"},
    {"vmc-access-token", "vmcAccessToken", true},
    {"vmc-auth-host", "vmcAuthHost"},
    {"client-auth-cert-file", "clientAuthCertFile"},
    {"client-auth-key-file", "clientAuthKeyFile"},
    {"ca-file", "caFile"},
};

#define CCM_LB_CLASS_KEYS                                     \
  {"ip-pool-name", "ipPoolName"}, {"ip-pool-id", "ipPoolId"}, \
      {"tcp-app-profile-name", "tcpAppProfileName"},          \
      {"tcp-app-profile-path", "tcpAppProfilePath"},          \
      {"udp-app-profile-name", "udpAppProfileName"}, {        \
    "udp-app-profile-path", "udpAppProfilePath"               \
  }

const std::vector<KeySpec> kLoadBalancerClass = {CCM_LB_CLASS_KEYS};
const std::vector<KeySpec> kLoadBalancer = {
    CCM_LB_CLASS_KEYS,
    {"size", "size"},
    {"lb-service-id", "lbServiceId"},
    {"tier1-gateway-path", "tier1GatewayPath"},
    {"snat-disabled", "snatDisabled"},
    {"tags", "tags"},
};
#undef CCM_LB_CLASS_KEYS

const std::vector<KeySpec> kRoute = {{"router-path", "routerPath"}};

}  // namespace

const std::vector<KeySpec>& KeysOf(SectionKind kind) {
  switch (kind) {
    case SectionKind::kGlobal:
      return kGlobal;
    case SectionKind::kVirtualCenter:
      return kVirtualCenter;
    case SectionKind::kLabels:
      return kLabels;
    case SectionKind::kNodes:
      return kNodes;
    case SectionKind::kNsxt:
      return kNsxt;
    case SectionKind::kLoadBalancer:
      return kLoadBalancer;
    case SectionKind::kLoadBalancerClass:
      return kLoadBalancerClass;
    case SectionKind::kRoute:
      return kRoute;
    case SectionKind::kTopologyCategory:
      return kTopologyCategory;
    case SectionKind::kSnapshot:
      return kSnapshot;
    case SectionKind::kNetPermissions:
      return kNetPermissions;
  }
  return kGlobal;
}

const KeySpec* FindKey(SectionKind kind, absl::string_view name, bool yaml, std::string* hint) {
  for (const KeySpec& k : KeysOf(kind)) {
    // gcfg matches names case-insensitively; yaml.v2 matches exactly.
    if (yaml ? name == k.yaml : absl::EqualsIgnoreCase(name, k.ini)) return &k;
  }
  if (hint != nullptr) {
    for (const KeySpec& k : KeysOf(kind)) {
      if (yaml ? absl::EqualsIgnoreCase(name, k.ini) || absl::EqualsIgnoreCase(name, k.yaml)
               : absl::EqualsIgnoreCase(name, k.yaml)) {
        *hint = yaml ? k.yaml : k.ini;
        break;
      }
    }
  }
  return nullptr;
}

std::optional<bool> ParseBoolText(absl::string_view text) {
  std::string t = absl::AsciiStrToLower(absl::StripAsciiWhitespace(text));
  if (t == "1" || t == "true" || t == "yes" || t == "on") return true;
  if (t == "0" || t == "false" || t == "no" || t == "off") return false;
  return std::nullopt;
}

}  // namespace ccm::cloud::config_internal
