#include "app/ccm/options.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "app/shared/flag_parser.h"
#include "cloud/core/node_labels.h"
#include "cloud/core/route_plan.h"

namespace ccm::app {
namespace {

// Flags of kube-cloud-controller-manager / the Go vSphere CCM that we accept but do not act on.
const std::set<std::string>& IgnoredFlags() {
  static const std::set<std::string> k = {"use-service-account-credentials",
                                          "authentication-kubeconfig",
                                          "authorization-kubeconfig",
                                          "authentication-skip-lookup",
                                          "authorization-always-allow-paths",
                                          "kube-api-content-type",
                                          "profiling",
                                          "contention-profiling",
                                          "min-resync-period",
                                          "cidr-allocator-type",
                                          "feature-gates",
                                          "logtostderr",
                                          "alsologtostderr",
                                          "log-dir",
                                          "log-file",
                                          "stderrthreshold",
                                          "one-output",
                                          "skip-headers",
                                          "skip-log-headers",
                                          "log-flush-frequency",
                                          "external-cloud-volume-plugin",
                                          "enable-leader-migration",
                                          "leader-migration-config",
                                          "requestheader-client-ca-file",
                                          "client-ca-file",
                                          "permit-address-sharing",
                                          "permit-port-sharing",
                                          "http2-max-streams-per-connection",
                                          "tls-cipher-suites",
                                          "tls-min-version",
                                          "tls-sni-cert-key",
                                          "authentication-token-webhook-cache-ttl",
                                          "authorization-webhook-cache-authorized-ttl",
                                          "authorization-webhook-cache-unauthorized-ttl",
                                          "leader-elect-resource-lock-migration",
                                          "webhook-bind-address",
                                          "webhook-secure-port",
                                          "webhooks",
                                          "vmodule",
                                          "add-dir-header",
                                          "log-backtrace-at",
                                          "logging-format",
                                          "master-election"};
  return k;
}

}  // namespace

bool ControllerEnabled(const Options& o, const std::string& name) {
  bool star = false;
  for (const auto& c : o.controllers) {
    if (c == name) return true;
    if (c == "-" + name) return false;
    if (c == "*") star = true;
  }
  return star;
}

namespace {

void RegisterFlags(Options& o, FlagParser& p) {
  p.Bool("leader-elect", &o.leader_elect);
  p.Bool("version", &o.version);
  p.Bool("help", &o.help);
  p.Bool("strict-config", &o.strict_config);
  p.Bool("allocate-node-cidrs", &o.allocate_node_cidrs);
  p.Bool("configure-cloud-routes", &o.configure_cloud_routes);
  p.String("cluster-cidr", &o.cluster_cidr);
  p.Duration("route-reconciliation-period", &o.route_reconciliation_period);
  p.Duration("node-sync-period", &o.node_sync_period);
  p.Int("concurrent-service-syncs", &o.concurrent_service_syncs, 1);
  p.String("cloud-provider", &o.cloud_provider);
  p.String("cloud-config", &o.cloud_config);
  p.String("kubeconfig", &o.kubeconfig);
  p.String("master", &o.master);
  p.String("leader-elect-resource-lock", &o.leader_elect_resource_lock);
  p.String("leader-elect-resource-name", &o.leader_elect_resource_name);
  p.String("leader-elect-resource-namespace", &o.leader_elect_resource_namespace);
  p.String("bind-address", &o.bind_address);
  p.String("tls-cert-file", &o.tls_cert_file);
  p.String("tls-private-key-file", &o.tls_private_key_file);
  p.String("cert-dir", &o.cert_dir);
  p.String("cluster-name", &o.cluster_name);
  p.Duration("leader-elect-lease-duration", &o.lease_duration);
  p.Duration("leader-elect-renew-deadline", &o.renew_deadline);
  p.Duration("leader-elect-retry-period", &o.retry_period);
  p.Duration("node-status-update-frequency", &o.node_status_update_frequency);
  p.Duration("node-monitor-period", &o.node_monitor_period);
  p.Duration("cloud-config-check-period", &o.cloud_config_check_period);
  p.Duration("vcenter-hang-timeout", &o.vcenter_hang_timeout);
  p.Int("concurrent-node-syncs", &o.concurrent_node_syncs, 1);
  p.Int("kube-api-burst", &o.kube_api_burst, 1);
  p.Int("secure-port", &o.secure_port, 0);
  p.Int("v", &o.verbosity, 0);
  p.Value("controllers", [&o](const std::string& v) {
    o.controllers = absl::StrSplit(v, ',', absl::SkipWhitespace());
    for (auto& c : o.controllers) c = std::string(absl::StripAsciiWhitespace(c));
    for (const auto& c : o.controllers) {
      std::string n(absl::StripPrefix(c, "-"));
      if (c != "*" && !KnownControllers().count(n))
        o.warnings.push_back(absl::StrCat("--controllers: controller \"", n,
                                          "\" is not implemented by this binary; ignored"));
    }
    return absl::OkStatus();
  });
  p.Value("kube-api-qps", [&o](const std::string& v) {
    if (!absl::SimpleAtod(v, &o.kube_api_qps) || o.kube_api_qps <= 0)
      return BadFlag("kube-api-qps", v, "a number > 0");
    return absl::OkStatus();
  });
  p.Value("node-labels", [&o](const std::string& v) {
    for (absl::string_view kv : absl::StrSplit(v, ',', absl::SkipWhitespace())) {
      std::pair<std::string, std::string> kvp = absl::StrSplit(kv, absl::MaxSplits('=', 1));
      if (kvp.first.empty() || !absl::StrContains(kv, '='))
        return BadFlag("node-labels", v, "key=value pairs separated by commas");
      o.node_labels[std::string(absl::StripAsciiWhitespace(kvp.first))] =
          std::string(absl::StripAsciiWhitespace(kvp.second));
    }
    return absl::OkStatus();
  });
  p.Ignore(IgnoredFlags());
}

// The checks across flags, once all are read.
absl::Status Validate(Options& o) {
  if (o.cloud_provider != "vsphere") {
    return absl::InvalidArgumentError(absl::StrCat(
        "--cloud-provider=\"", o.cloud_provider,
        "\" is not supported: this binary only implements \"vsphere\" (the default when the flag "
        "is omitted)"));
  }
  if (o.cloud_config.empty())
    return absl::InvalidArgumentError("--cloud-config is required (path to vsphere.conf)");
  if (o.leader_elect_resource_lock != "leases")
    return absl::InvalidArgumentError(absl::StrCat("--leader-elect-resource-lock=\"",
                                                   o.leader_elect_resource_lock,
                                                   "\" is not supported: only \"leases\""));
  if (o.leader_elect && !(o.lease_duration > o.renew_deadline && o.renew_deadline > o.retry_period))
    return absl::InvalidArgumentError(
        "leader election needs --leader-elect-lease-duration > --leader-elect-renew-deadline > "
        "--leader-elect-retry-period");
  if (o.vcenter_hang_timeout <= absl::ZeroDuration())
    return absl::InvalidArgumentError(
        "--vcenter-hang-timeout must be above 0 (how long a vCenter may answer nothing)");
  if (o.secure_port > 65535)
    return BadFlag("secure-port", std::to_string(o.secure_port), "0..65535");
  if (o.tls_cert_file.empty() != o.tls_private_key_file.empty())
    return absl::InvalidArgumentError("--tls-cert-file and --tls-private-key-file go together");
  if (auto cidrs = cloud::ParseClusterCidrs(o.cluster_cidr); !cidrs.ok()) return cidrs.status();
  if (o.route_reconciliation_period <= absl::ZeroDuration())
    return BadFlag("route-reconciliation-period",
                   absl::FormatDuration(o.route_reconciliation_period), "a duration above 0");
  auto labels = cloud::ValidateExtraLabels(o.node_labels);
  if (!labels.ok())
    return absl::InvalidArgumentError(absl::StrCat("--node-labels: ", labels.status().message()));
  o.node_labels = std::move(labels->labels);
  o.warnings.insert(o.warnings.end(), labels->warnings.begin(), labels->warnings.end());
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Options> ParseOptions(const std::vector<std::string>& args) {
  Options o;
  FlagParser parser;
  RegisterFlags(o, parser);
  if (absl::Status s = parser.Parse(args, &o.warnings); !s.ok()) return s;
  if (o.help || o.version) return o;
  if (absl::Status s = Validate(o); !s.ok()) return s;
  return o;
}

std::string UsageText() {
  return R"(Usage: vsphere-cloud-controller-manager --cloud-config=FILE [--cloud-provider=vsphere] [flags]
       vsphere-cloud-controller-manager diagnose [--output text|json] --cloud-config=FILE [flags]

  --cloud-provider string                  "vsphere" (the default); anything else is an error
  --cloud-config string                    path to vsphere.conf (YAML or legacy INI)
  --strict-config                          treat config warnings (unknown keys) as errors
  --cloud-config-check-period duration     re-read --cloud-config this often and apply changes
                                           (default 10s; 0 disables)
  --vcenter-hang-timeout duration          a vCenter that answers nothing this long is reported
                                           not answering: /healthz, metrics, an Event (default 30s)
  --kubeconfig string                      kubeconfig file (in-cluster config when absent)
  --master string                          Kubernetes API server address (overrides kubeconfig)
  --controllers strings                    * | cloud-node | cloud-node-lifecycle | route | service |
                                           -name
                                           (default *)
  --allocate-node-cidrs                    Nodes get pod CIDRs (from kube-controller-manager); with
                                           --configure-cloud-routes and [Route] in the config, the
                                           route controller runs (default false)
  --configure-cloud-routes                 (default true)
  --cluster-cidr cidr[,cidr]               the pods' CIDRs (one per IP family); routes outside them
                                           are never deleted
  --route-reconciliation-period duration   (default 10s)
  --concurrent-service-syncs int           service controller workers (default 1); the NSX-T load
                                           balancer runs with ENABLE_ALPHA_NSXT_LB set and
                                           [LoadBalancer] in the config
  --node-sync-period duration              load balancer backends refresh (default 1m40s)
  --leader-elect                           use leader election (default true)
  --leader-elect-lease-duration duration   (default 15s)
  --leader-elect-renew-deadline duration   (default 10s)
  --leader-elect-retry-period duration     (default 2s)
  --leader-elect-resource-lock string      only "leases" (default leases)
  --leader-elect-resource-name string      (default cloud-controller-manager)
  --leader-elect-resource-namespace string (default kube-system)
  --concurrent-node-syncs int              node initialisation workers (default 1)
  --node-status-update-frequency duration  address refresh period (default 5m0s)
  --node-monitor-period duration           lifecycle check period (default 5s)
  --node-labels key=value,...              extra labels set at initialisation (never overwrite;
                                           kubernetes.io and k8s.io keys are ignored)
  --kube-api-qps float                     (default 20)
  --kube-api-burst int                     (default 30)
  --bind-address ip                        (default 0.0.0.0)
  --secure-port int                        HTTPS port for /healthz, /readyz, /livez, /metrics (default 10258; 0 disables)
  --tls-cert-file, --tls-private-key-file  serving certificate (self-signed when absent)
  --cert-dir string                        (accepted; the self-signed certificate is kept in memory)
  --cluster-name string                    (default kubernetes)
  -v, --v int                              log verbosity
  --version                                print the version and exit
)";
}

}  // namespace ccm::app
