#include "app/csi/syncer_options.h"

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "app/shared/flag_parser.h"

namespace ccm::app {
namespace {

std::string Get(const std::map<std::string, std::string>& env, const char* name) {
  auto it = env.find(name);
  return it == env.end() ? "" : it->second;
}

}  // namespace

absl::StatusOr<CsiSyncerOptions> ParseCsiSyncerOptions(
    const std::vector<std::string>& args, const std::map<std::string, std::string>& env) {
  CsiSyncerOptions o;
  std::string mode = "METADATA_SYNC";
  std::string ignored;
  absl::Duration ignored_duration;
  int verbosity = -1;
  FlagParser flags;
  flags.Bool("version", &o.version);
  flags.Bool("help", &o.help);
  flags.Bool("leader-election", &o.leader_election);
  flags.String("leader-election-namespace", &o.leader_election_namespace);
  flags.Duration("leader-election-lease-duration", &o.lease_duration);
  flags.Duration("leader-election-renew-deadline", &o.renew_deadline);
  flags.Duration("leader-election-retry-period", &o.retry_period);
  flags.String("operation-mode", &mode);
  flags.String("fss-name", &o.fss_name);
  flags.String("fss-namespace", &o.fss_namespace);
  for (const char* f : {"supervisor-fss-name", "supervisor-fss-namespace"}) {
    flags.String(f, &ignored);
  }
  flags.Duration("storagequota-sync-interval", &ignored_duration);
  flags.Duration("config-check-period", &o.config_check_period);
  flags.Duration("vcenter-hang-timeout", &o.vcenter_hang_timeout);
  flags.String("kubeconfig", &o.kubeconfig);
  flags.String("master", &o.master);
  flags.Int("metrics-port", &o.metrics_port, 0);
  flags.String("metrics-bind-address", &o.metrics_bind_address);
  flags.Int("workers", &o.workers, 1);
  flags.Int("v", &verbosity, 0);
  flags.Ignore({"logtostderr", "alsologtostderr", "log-dir", "log-file", "stderrthreshold",
                "vmodule", "add-dir-header", "skip-headers", "logging-format"});
  if (absl::Status s = flags.Parse(args, &o.warnings); !s.ok()) return s;
  if (o.help || o.version) return o;

  if (mode != "METADATA_SYNC" && mode != "WEBHOOK_SERVER") {
    return BadFlag("operation-mode", mode, "METADATA_SYNC or WEBHOOK_SERVER");
  }
  o.webhook = mode == "WEBHOOK_SERVER";
  if (!Get(env, "WEBHOOK_CONFIG_PATH").empty())
    o.webhook_config_path = Get(env, "WEBHOOK_CONFIG_PATH");
  if (o.metrics_port > 65535) {
    return BadFlag("metrics-port", std::to_string(o.metrics_port), "0..65535");
  }
  if (verbosity >= 0) {
    o.verbosity = verbosity;
  } else if (absl::AsciiStrToUpper(Get(env, "LOGGER_LEVEL")) == "DEVELOPMENT") {
    o.verbosity = 4;
  }
  if (std::string path = Get(env, "VSPHERE_CSI_CONFIG"); !path.empty()) o.config_path = path;
  // As the reference's client: the flag, else $KUBECONFIG, else the in-cluster configuration.
  if (o.kubeconfig.empty()) o.kubeconfig = Get(env, "KUBECONFIG");
  if (std::string v = Get(env, kEnvFullSyncInterval); !v.empty()) {
    int minutes = 0;
    if (!absl::SimpleAtoi(v, &minutes) || minutes <= 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          kEnvFullSyncInterval, "=\"", v, "\": expected a whole number of minutes above 0"));
    }
    o.full_sync_interval = absl::Minutes(minutes);
  }
  if (o.leader_election_namespace.empty()) {
    o.leader_election_namespace = Get(env, "POD_NAMESPACE");
  }
  if (o.vcenter_hang_timeout <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError(
        "--vcenter-hang-timeout must be above 0 (how long a vCenter may answer nothing)");
  }
  return o;
}

std::string CsiSyncerUsageText() {
  return R"(Usage: X_CSI_MODE=syncer vsphere-csi-driver [flags]

The CNS metadata syncer (the reference's vsphere-syncer): tells vCenter's Cloud Native Storage
which PersistentVolume, PersistentVolumeClaim and Pods own each volume of this cluster.
Environment:
  VSPHERE_CSI_CONFIG          csi-vsphere.conf (default /etc/cloud/csi-vsphere.conf); without
                              [Global] cluster-id, the one in ConfigMap vsphere-csi-cluster-id
  CSI_NAMESPACE               the driver's namespace (that ConfigMap's; default vmware-system-csi)
  FULL_SYNC_INTERVAL_MINUTES  full sync period (default 30)
  POD_NAMESPACE               the Lease's namespace when --leader-election-namespace is not set
  LOGGER_LEVEL                PRODUCTION (default) | DEVELOPMENT (like -v 4)

Flags:
  --leader-election                      run only while holding the Lease vsphere-syncer (default false)
  --leader-election-namespace string
  --leader-election-lease-duration duration  (default 15s)
  --leader-election-renew-deadline duration  (default 10s)
  --leader-election-retry-period duration    (default 5s)
  --operation-mode string                METADATA_SYNC (default) or WEBHOOK_SERVER (the validating
                                         admission webhook; its config at WEBHOOK_CONFIG_PATH,
                                         default /etc/webhook/webhook.config)
  --kubeconfig string, --master string   (default: in-cluster configuration)
  --metrics-port int                     /metrics and /healthz (default 2113; 0 disables)
  --metrics-bind-address ip              (default 0.0.0.0)
  --workers int                          volumes synced in parallel (default 1)
  --config-check-period duration         how often csi-vsphere.conf is re-read: a new password
                                         applies live, other changes restart (default 10s; 0 never)
  --vcenter-hang-timeout duration        a vCenter that answers nothing this long is reported not
                                         answering: /healthz, metrics, an Event (default 30s)
  --fss-name, --fss-namespace            the feature-state ConfigMap (default
                                         internal-feature-states.csi.vsphere.vmware.com in
                                         $CSI_NAMESPACE): trigger-csi-fullsync
  --supervisor-fss-name, --supervisor-fss-namespace,
  --storagequota-sync-interval           accepted, as the reference; no effect
  -v, --v int                            log verbosity
  --version                              print the version and exit
)";
}

}  // namespace ccm::app
