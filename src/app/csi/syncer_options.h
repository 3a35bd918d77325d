#pragma once
// Flags and environment of vsphere-csi-driver in syncer mode (X_CSI_MODE=syncer): the CNS
// metadata syncer, which the reference ships as its own image (cmd/syncer, the vsphere-syncer
// container). Its flags and variables are taken under the same names, so the reference's
// vsphere-syncer container runs this binary with one change: the image, plus X_CSI_MODE=syncer.
//   --leader-election (false), --leader-election-namespace (default: POD_NAMESPACE, then the
//   in-cluster namespace), --leader-election-lease-duration (15s), -renew-deadline (10s),
//   -retry-period (5s): Lease "vsphere-syncer", as the reference.
//   --operation-mode: METADATA_SYNC (the default) or WEBHOOK_SERVER (the validating admission
//   webhook, app/csi/webhook.h, configured by the file at WEBHOOK_CONFIG_PATH, default
//   /etc/webhook/webhook.config).
//   --fss-name, --fss-namespace: the feature-state ConfigMap (trigger-csi-fullsync).
//   --supervisor-fss-*, --storagequota-sync-interval: accepted.
//   FULL_SYNC_INTERVAL_MINUTES (30), VSPHERE_CSI_CONFIG (/etc/cloud/csi-vsphere.conf),
//   LOGGER_LEVEL (DEVELOPMENT = -v 4).
//   KUBECONFIG: the kubeconfig when --kubeconfig is not given (the reference's client reads the
//   flag, then this variable, then the in-cluster configuration).
// Ours: --kubeconfig / --master (default in-cluster), --metrics-port (2113, the reference's
// fixed ":2113"; 0 disables), --metrics-bind-address, --workers (1), -v.
// Pure: the environment is passed in.

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace ccm::app {

inline constexpr char kEnvFullSyncInterval[] = "FULL_SYNC_INTERVAL_MINUTES";
inline constexpr int kDefaultSyncerMetricsPort = 2113;
inline constexpr char kSyncerLeaseName[] = "vsphere-syncer";

struct CsiSyncerOptions {
  std::string config_path = "/etc/cloud/csi-vsphere.conf";
  std::string kubeconfig;
  std::string master;
  std::string fss_name, fss_namespace;  // the feature-state ConfigMap
  bool leader_election = false;
  std::string leader_election_namespace;  // empty: POD_NAMESPACE, then the client's namespace
  absl::Duration lease_duration = absl::Seconds(15);
  absl::Duration renew_deadline = absl::Seconds(10);
  absl::Duration retry_period = absl::Seconds(5);
  absl::Duration full_sync_interval = absl::Minutes(30);
  // How often csi-vsphere.conf is re-read (config_reload.h); 0 = never.
  absl::Duration config_check_period = absl::Seconds(10);
  // Ours: a vCenter that answers nothing for this long is reported "not answering" (issue 43).
  absl::Duration vcenter_hang_timeout = absl::Seconds(30);
  int metrics_port = kDefaultSyncerMetricsPort;
  std::string metrics_bind_address = "0.0.0.0";
  int workers = 1;
  bool webhook = false;  // --operation-mode=WEBHOOK_SERVER
  std::string webhook_config_path = "/etc/webhook/webhook.config";
  int verbosity = 0;
  bool version = false;
  bool help = false;
  std::vector<std::string> warnings;
};

// `args[0]` is the program name.
absl::StatusOr<CsiSyncerOptions> ParseCsiSyncerOptions(
    const std::vector<std::string>& args, const std::map<std::string, std::string>& env);
std::string CsiSyncerUsageText();

}  // namespace ccm::app
