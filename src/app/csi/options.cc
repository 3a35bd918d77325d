#include "app/csi/options.h"

#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "app/shared/flag_parser.h"
#include "csi/server/endpoint.h"

namespace ccm::app {
namespace {

std::string Get(const std::map<std::string, std::string>& env, const char* name) {
  auto it = env.find(name);
  return it == env.end() ? "" : it->second;
}

// Flags the reference binary (or the Go runtime it is built with) takes that mean nothing here.
const std::set<std::string>& IgnoredFlags() {
  static const std::set<std::string> k = {
      "use-gocsi",  // older reference releases: choose gocsi or its own gRPC server
      "logtostderr",      "alsologtostderr", "log-dir",          "log-file",
      "stderrthreshold",  "vmodule",         "add-dir-header",   "skip-headers",
      "skip-log-headers", "one-output",      "log-backtrace-at", "log-flush-frequency",
      "logging-format"};
  return k;
}

}  // namespace

const char* CsiModeName(CsiMode m) { return m == CsiMode::kController ? "controller" : "node"; }

absl::StatusOr<CsiOptions> ParseCsiOptions(const std::vector<std::string>& args,
                                           const std::map<std::string, std::string>& env) {
  CsiOptions o;
  std::string endpoint_flag;
  int verbosity = -1;  // -1: not given
  FlagParser flags;
  flags.Bool("version", &o.version);
  flags.Bool("help", &o.help);
  flags.String("endpoint", &endpoint_flag);
  flags.String("fss-name", &o.fss_name);
  flags.String("fss-namespace", &o.fss_namespace);
  flags.String("supervisor-fss-name", &o.supervisor_fss_name);
  flags.String("supervisor-fss-namespace", &o.supervisor_fss_namespace);
  flags.Int("metrics-port", &o.metrics_port, 0);
  flags.String("metrics-bind-address", &o.metrics_bind_address);
  flags.Duration("shutdown-grace-period", &o.shutdown_grace);
  flags.Duration("config-check-period", &o.config_check_period);
  flags.Duration("vcenter-hang-timeout", &o.vcenter_hang_timeout);
  flags.Int("v", &verbosity, 0);
  flags.Ignore(IgnoredFlags());
  if (absl::Status s = flags.Parse(args, &o.warnings); !s.ok()) return s;
  if (o.help || o.version) return o;

  if (o.metrics_port > 65535)
    return BadFlag("metrics-port", std::to_string(o.metrics_port), "0..65535");
  if (verbosity >= 0) {
    o.verbosity = verbosity;
  } else if (absl::AsciiStrToUpper(Get(env, kEnvLoggerLevel)) == "DEVELOPMENT") {
    o.verbosity = kDevelopmentVerbosity;
  }

  // The same test and message as the reference's server.go.
  const std::string mode = Get(env, kEnvCsiMode);
  if (absl::EqualsIgnoreCase(mode, "controller")) {
    o.mode = CsiMode::kController;
  } else if (absl::EqualsIgnoreCase(mode, "node")) {
    o.mode = CsiMode::kNode;
  } else {
    return absl::InvalidArgumentError(absl::StrCat("invalid value \"", mode, "\" specified for ",
                                                   kEnvCsiMode,
                                                   ", expecting 'node' or 'controller'"));
  }

  o.endpoint = !endpoint_flag.empty() ? endpoint_flag : Get(env, kEnvCsiEndpoint);
  if (o.endpoint.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("CSI endpoint cannot be empty: set ",
                                                   kEnvCsiEndpoint,
                                                   " (or --endpoint), e.g. unix:///csi/csi.sock"));
  }
  if (auto e = csi::ParseEndpoint(o.endpoint); !e.ok()) return e.status();

  if (std::string path = Get(env, kEnvCsiConfig); !path.empty()) o.config_path = path;

  if (o.vcenter_hang_timeout <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError(
        "--vcenter-hang-timeout must be above 0 (how long a vCenter may answer nothing)");
  }
  const std::string flavor = Get(env, kEnvClusterFlavor);
  if (!flavor.empty() && flavor != "VANILLA") {
    return absl::InvalidArgumentError(absl::StrCat(
        kEnvClusterFlavor, "=\"", flavor,
        "\" is not supported: this driver implements the VANILLA flavor (plain vSphere) only"));
  }
  return o;
}

std::string CsiUsageText() {
  return R"(Usage: vsphere-csi-driver [flags]
       vsphere-csi-driver diagnose [--output text|json]   (checks csi-vsphere.conf; read-only)

The vSphere CSI driver (csi.vsphere.vmware.com). Configured by the environment, as the reference
driver is:
  CSI_ENDPOINT        (required) the CSI socket, e.g. unix:///csi/csi.sock (or a plain path)
  X_CSI_MODE          (required) controller | node | syncer (the CNS metadata syncer)
  VSPHERE_CSI_CONFIG  csi-vsphere.conf (default /etc/cloud/csi-vsphere.conf); the node plugin
                      reads only its topology part, when the file exists
  NODE_NAME           node mode (required): this node's Node object
  MAX_VOLUMES_PER_NODE, CSI_DEVICE_BY_ID_DIR, CSI_DEVICE_WAIT, KUBECONFIG: node mode (docs/deploy-csi.md)
  LOGGER_LEVEL        PRODUCTION (default) | DEVELOPMENT (logs every RPC, like -v 4)
  CLUSTER_FLAVOR      VANILLA (the default; the only flavor implemented)

Flags:
  --endpoint string                 overrides CSI_ENDPOINT
  --metrics-port int                controller: HTTP port for /metrics and /healthz (default 2112; 0 disables)
  --metrics-bind-address ip         (default 0.0.0.0)
  --shutdown-grace-period duration  on SIGTERM, how long RPCs in flight may finish (default 10s)
  --config-check-period duration    controller: how often csi-vsphere.conf is re-read; a new
                                    password applies live, other changes restart (default 10s; 0 never)
  --vcenter-hang-timeout duration   controller: a vCenter that answers nothing this long is reported
                                    not answering: /healthz, metrics, an Event (default 30s)
  --fss-name, --fss-namespace       feature-state ConfigMap (accepted, as the reference)
  --supervisor-fss-name, --supervisor-fss-namespace  (accepted, as the reference)
  -v, --v int                       log verbosity (klog format on stderr; 4 logs every RPC)
  --version                         print the version and exit
)";
}

}  // namespace ccm::app
