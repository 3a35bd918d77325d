#pragma once
// Flags and environment of vsphere-csi-driver, named as kubernetes-sigs/vsphere-csi-driver (the
// reference) names them, so its manifests run this binary unchanged:
//   CSI_ENDPOINT        the socket, e.g. unix:///csi/csi.sock (gocsi's EnvVarEndpoint, read by
//                       cmd/vsphere-csi/main.go; the reference refuses an empty one)
//   X_CSI_MODE          controller | node, case-insensitive (gocsi's EnvVarMode; server.go refuses
//                       anything else)
//   VSPHERE_CSI_CONFIG  csi-vsphere.conf, default /etc/cloud/csi-vsphere.conf
//                       (pkg/common/config EnvVSphereCSIConfig, DefaultCloudConfigPath)
//   LOGGER_LEVEL        PRODUCTION | DEVELOPMENT (pkg/csi/service/logger); DEVELOPMENT = -v 4
//   CLUSTER_FLAVOR      VANILLA (default); WORKLOAD / GUEST_CLUSTER are not implemented here
//   --fss-name, --fss-namespace, --supervisor-fss-name, --supervisor-fss-namespace, --version
//                       (cmd/vsphere-csi/main.go)
// Ours: --endpoint (overrides CSI_ENDPOINT), --metrics-port (the controller's /metrics and
// /healthz port, 2112 as the reference's hard-coded ":2112"; 0 disables), -v / --v (klog
// verbosity). Unknown flags are warnings, as in vsphere-cloud-controller-manager.
// Pure: the environment is passed in, never read with getenv here.

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace ccm::app {

inline constexpr char kEnvCsiEndpoint[] = "CSI_ENDPOINT";
inline constexpr char kEnvCsiMode[] = "X_CSI_MODE";
inline constexpr char kEnvCsiConfig[] = "VSPHERE_CSI_CONFIG";
inline constexpr char kEnvLoggerLevel[] = "LOGGER_LEVEL";
inline constexpr char kEnvClusterFlavor[] = "CLUSTER_FLAVOR";
inline constexpr char kDefaultCsiConfigPath[] = "/etc/cloud/csi-vsphere.conf";
// The reference's controller serves Prometheus on ":2112" (its manifests name the port
// "prometheus"); the syncer's 2113 belongs to the syncer.
inline constexpr int kDefaultCsiMetricsPort = 2112;
// -v when LOGGER_LEVEL=DEVELOPMENT and no -v is given: every RPC is logged.
inline constexpr int kDevelopmentVerbosity = 4;

enum class CsiMode { kController, kNode };

struct CsiOptions {
  CsiMode mode = CsiMode::kController;
  std::string endpoint;
  std::string config_path = kDefaultCsiConfigPath;
  // Feature-state ConfigMaps (internal-feature-states.csi.vsphere.vmware.com in the manifests);
  // kept for the services that read feature states.
  std::string fss_name, fss_namespace, supervisor_fss_name, supervisor_fss_namespace;
  int metrics_port = kDefaultCsiMetricsPort;  // controller only; 0 = no HTTP server
  std::string metrics_bind_address = "0.0.0.0";
  // How long in-flight RPCs may run on SIGTERM before they are cancelled.
  absl::Duration shutdown_grace = absl::Seconds(10);
  // Controller: how often csi-vsphere.conf is re-read (config_reload.h); 0 = never.
  absl::Duration config_check_period = absl::Seconds(10);
  // Ours: a vCenter that answers nothing for this long is reported "not answering" (issue 43).
  absl::Duration vcenter_hang_timeout = absl::Seconds(30);
  int verbosity = 0;
  bool version = false;
  bool help = false;
  std::vector<std::string> warnings;
};

absl::StatusOr<CsiOptions> ParseCsiOptions(const std::vector<std::string>& args,
                                           const std::map<std::string, std::string>& env);
std::string CsiUsageText();
const char* CsiModeName(CsiMode m);

}  // namespace ccm::app
