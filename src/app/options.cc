#include "app/options.h"

#include <functional>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "cloud/core/node_labels.h"

namespace ccm::app {
namespace {

// Flags of kube-cloud-controller-manager / the Go vSphere CCM that we accept but do not act on.
const std::set<std::string>& IgnoredFlags() {
  static const std::set<std::string> k = {
      "allocate-node-cidrs", "configure-cloud-routes", "cluster-cidr", "use-service-account-credentials",
      "authentication-kubeconfig", "authorization-kubeconfig", "authentication-skip-lookup",
      "authorization-always-allow-paths", "kube-api-content-type", "profiling", "contention-profiling",
      "route-reconciliation-period", "node-sync-period", "min-resync-period", "cidr-allocator-type",
      "feature-gates", "logtostderr", "alsologtostderr", "log-dir", "log-file", "stderrthreshold",
      "one-output", "skip-headers", "skip-log-headers", "log-flush-frequency", "concurrent-service-syncs",
      "external-cloud-volume-plugin", "enable-leader-migration", "leader-migration-config",
      "requestheader-client-ca-file", "client-ca-file", "permit-address-sharing", "permit-port-sharing",
      "http2-max-streams-per-connection", "tls-cipher-suites", "tls-min-version", "tls-sni-cert-key",
      "authentication-token-webhook-cache-ttl", "authorization-webhook-cache-authorized-ttl",
      "authorization-webhook-cache-unauthorized-ttl", "leader-elect-resource-lock-migration",
      "webhook-bind-address", "webhook-secure-port", "webhooks", "vmodule", "add-dir-header",
      "log-backtrace-at", "logging-format", "master-election"};
  return k;
}

absl::Status Bad(const std::string& flag, const std::string& value, const std::string& want) {
  return absl::InvalidArgumentError(
      absl::StrCat("invalid value \"", value, "\" for flag --", flag, ": expected ", want));
}

absl::StatusOr<bool> ParseBool(const std::string& flag, const std::string& v) {
  std::string l = absl::AsciiStrToLower(v);
  if (l == "true" || l == "1" || l == "t") return true;
  if (l == "false" || l == "0" || l == "f") return false;
  return Bad(flag, v, "true or false");
}

absl::StatusOr<absl::Duration> ParseDur(const std::string& flag, const std::string& v) {
  absl::Duration d;
  if (!absl::ParseDuration(v, &d) || d < absl::ZeroDuration())
    return Bad(flag, v, "a duration such as 15s, 5m0s or 1h");
  return d;
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

absl::StatusOr<Options> ParseOptions(const std::vector<std::string>& args) {
  Options o;
  using Setter = std::function<absl::Status(const std::string&)>;
  auto str = [](std::string* dst) -> Setter {
    return [dst](const std::string& v) {
      *dst = v;
      return absl::OkStatus();
    };
  };
  std::map<std::string, Setter> value_flags;
  std::map<std::string, bool*> bool_flags = {
      {"leader-elect", &o.leader_elect}, {"version", &o.version}, {"help", &o.help},
      {"strict-config", &o.strict_config}};
  value_flags["cloud-provider"] = str(&o.cloud_provider);
  value_flags["cloud-config"] = str(&o.cloud_config);
  value_flags["kubeconfig"] = str(&o.kubeconfig);
  value_flags["master"] = str(&o.master);
  value_flags["leader-elect-resource-lock"] = str(&o.leader_elect_resource_lock);
  value_flags["leader-elect-resource-name"] = str(&o.leader_elect_resource_name);
  value_flags["leader-elect-resource-namespace"] = str(&o.leader_elect_resource_namespace);
  value_flags["bind-address"] = str(&o.bind_address);
  value_flags["tls-cert-file"] = str(&o.tls_cert_file);
  value_flags["tls-private-key-file"] = str(&o.tls_private_key_file);
  value_flags["cert-dir"] = str(&o.cert_dir);
  value_flags["cluster-name"] = str(&o.cluster_name);
  value_flags["controllers"] = [&](const std::string& v) {
    o.controllers = absl::StrSplit(v, ',', absl::SkipWhitespace());
    for (auto& c : o.controllers) c = std::string(absl::StripAsciiWhitespace(c));
    for (const auto& c : o.controllers) {
      std::string n(absl::StripPrefix(c, "-"));
      if (c != "*" && !KnownControllers().count(n))
        o.warnings.push_back(absl::StrCat("--controllers: controller \"", n,
                                          "\" is not implemented by this binary; ignored"));
    }
    return absl::OkStatus();
  };
  auto dur = [](const std::string& flag, absl::Duration* dst) -> Setter {
    return [flag, dst](const std::string& v) -> absl::Status {
      auto d = ParseDur(flag, v);
      if (!d.ok()) return d.status();
      *dst = *d;
      return absl::OkStatus();
    };
  };
  value_flags["leader-elect-lease-duration"] = dur("leader-elect-lease-duration", &o.lease_duration);
  value_flags["leader-elect-renew-deadline"] = dur("leader-elect-renew-deadline", &o.renew_deadline);
  value_flags["leader-elect-retry-period"] = dur("leader-elect-retry-period", &o.retry_period);
  value_flags["node-status-update-frequency"] =
      dur("node-status-update-frequency", &o.node_status_update_frequency);
  value_flags["node-monitor-period"] = dur("node-monitor-period", &o.node_monitor_period);
  value_flags["cloud-config-check-period"] =
      dur("cloud-config-check-period", &o.cloud_config_check_period);
  auto integer = [](const std::string& flag, int* dst, int min) -> Setter {
    return [flag, dst, min](const std::string& v) -> absl::Status {
      int n;
      if (!absl::SimpleAtoi(v, &n) || n < min)
        return Bad(flag, v, absl::StrCat("an integer >= ", min));
      *dst = n;
      return absl::OkStatus();
    };
  };
  value_flags["concurrent-node-syncs"] = integer("concurrent-node-syncs", &o.concurrent_node_syncs, 1);
  value_flags["kube-api-burst"] = integer("kube-api-burst", &o.kube_api_burst, 1);
  value_flags["secure-port"] = integer("secure-port", &o.secure_port, 0);
  value_flags["v"] = integer("v", &o.verbosity, 0);
  value_flags["kube-api-qps"] = [&](const std::string& v) -> absl::Status {
    if (!absl::SimpleAtod(v, &o.kube_api_qps) || o.kube_api_qps <= 0)
      return Bad("kube-api-qps", v, "a number > 0");
    return absl::OkStatus();
  };
  value_flags["node-labels"] = [&](const std::string& v) -> absl::Status {
    for (absl::string_view kv : absl::StrSplit(v, ',', absl::SkipWhitespace())) {
      std::pair<std::string, std::string> p = absl::StrSplit(kv, absl::MaxSplits('=', 1));
      if (p.first.empty() || !absl::StrContains(kv, '='))
        return Bad("node-labels", v, "key=value pairs separated by commas");
      o.node_labels[std::string(absl::StripAsciiWhitespace(p.first))] =
          std::string(absl::StripAsciiWhitespace(p.second));
    }
    return absl::OkStatus();
  };

  for (size_t i = 1; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--") break;
    if (!absl::StartsWith(a, "-") || a == "-") {
      o.warnings.push_back(absl::StrCat("unexpected argument \"", a, "\" ignored"));
      continue;
    }
    std::string body(absl::StripPrefix(absl::StripPrefix(a, "-"), "-"));
    std::string name = body, value;
    bool has_value = false;
    if (auto eq = body.find('='); eq != std::string::npos) {
      name = body.substr(0, eq);
      value = body.substr(eq + 1);
      has_value = true;
    }
    if (name == "h") name = "help";
    if (auto b = bool_flags.find(name); b != bool_flags.end()) {
      if (!has_value) {
        *b->second = true;
        continue;
      }
      auto v = ParseBool(name, value);
      if (!v.ok()) return v.status();
      *b->second = *v;
      continue;
    }
    auto f = value_flags.find(name);
    bool ignored = IgnoredFlags().count(name) > 0;
    if (f == value_flags.end() && !ignored) {
      o.warnings.push_back(absl::StrCat("unknown flag --", name, " ignored"));
      if (!has_value && i + 1 < args.size() && !absl::StartsWith(args[i + 1], "-")) ++i;
      continue;
    }
    if (!has_value) {
      if (i + 1 >= args.size()) {
        if (ignored) continue;  // most ignored flags are booleans
        return absl::InvalidArgumentError(absl::StrCat("flag needs an argument: --", name));
      }
      value = args[++i];
    }
    if (ignored) {
      o.warnings.push_back(
          absl::StrCat("flag --", name, " is accepted for compatibility but has no effect here"));
      continue;
    }
    if (absl::Status s = f->second(value); !s.ok()) return s;
  }
  if (o.help || o.version) return o;
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
  if (o.secure_port > 65535) return Bad("secure-port", std::to_string(o.secure_port), "0..65535");
  if (o.tls_cert_file.empty() != o.tls_private_key_file.empty())
    return absl::InvalidArgumentError("--tls-cert-file and --tls-private-key-file go together");
  auto labels = cloud::ValidateExtraLabels(o.node_labels);
  if (!labels.ok())
    return absl::InvalidArgumentError(absl::StrCat("--node-labels: ", labels.status().message()));
  o.node_labels = std::move(labels->labels);
  o.warnings.insert(o.warnings.end(), labels->warnings.begin(), labels->warnings.end());
  return o;
}

std::string UsageText() {
  return R"(Usage: vsphere-cloud-controller-manager --cloud-config=FILE [--cloud-provider=vsphere] [flags]

  --cloud-provider string                  "vsphere" (the default); anything else is an error
  --cloud-config string                    path to vsphere.conf (YAML or legacy INI)
  --strict-config                          treat config warnings (unknown keys) as errors
  --cloud-config-check-period duration     re-read --cloud-config this often and apply changes
                                           (default 10s; 0 disables)
  --kubeconfig string                      kubeconfig file (in-cluster config when absent)
  --master string                          Kubernetes API server address (overrides kubeconfig)
  --controllers strings                    * | cloud-node | cloud-node-lifecycle | -name (default *)
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
