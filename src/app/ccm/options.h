#pragma once
// Command-line flags of vsphere-cloud-controller-manager, with the names and defaults of the Go
// cloud-controller-manager. Flags the Go binary has and we do not implement are accepted and
// reported in `warnings` (never a crash); unknown flags are warnings too.

#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace ccm::app {

struct Options {
  std::string cloud_provider = "vsphere";  // may be omitted; any other value is an error
  std::string cloud_config;
  std::string kubeconfig;  // empty: in-cluster config
  std::string master;
  std::vector<std::string> controllers = {"*"};
  bool leader_elect = true;
  absl::Duration lease_duration = absl::Seconds(15);
  absl::Duration renew_deadline = absl::Seconds(10);
  absl::Duration retry_period = absl::Seconds(2);
  std::string leader_elect_resource_lock = "leases";
  std::string leader_elect_resource_name = "cloud-controller-manager";
  std::string leader_elect_resource_namespace = "kube-system";
  int concurrent_node_syncs = 1;
  absl::Duration node_status_update_frequency = absl::Minutes(5);
  absl::Duration node_monitor_period = absl::Seconds(5);
  // Validated (qualified-name keys, label values); kubernetes.io / k8s.io keys removed with a
  // warning.
  std::map<std::string, std::string> node_labels;
  double kube_api_qps = 20;
  int kube_api_burst = 30;
  std::string bind_address = "0.0.0.0";
  int secure_port = 10258;
  std::string tls_cert_file, tls_private_key_file, cert_dir;
  std::string cluster_name = "kubernetes";
  // The route controller runs with both on (and [Route] in the config), as in the Go binary.
  bool allocate_node_cidrs = false;
  bool configure_cloud_routes = true;
  std::string cluster_cidr;  // comma-separated, at most one per IP family
  absl::Duration route_reconciliation_period = absl::Seconds(10);
  // The service controller (NSX-T load balancer; ENABLE_ALPHA_NSXT_LB and [LoadBalancer]).
  int concurrent_service_syncs = 1;
  absl::Duration node_sync_period = absl::Seconds(100);
  int verbosity = 0;
  bool version = false;
  bool help = false;
  bool strict_config = false;
  // Ours: how often --cloud-config is re-read to apply changes (config_reloader.h); 0 = never.
  absl::Duration cloud_config_check_period = absl::Seconds(10);
  // Ours: a vCenter that answers nothing for this long is reported "not answering" (issue 43).
  absl::Duration vcenter_hang_timeout = absl::Seconds(30);
  std::vector<std::string> warnings;
};

// The controllers this binary has, by the names the Go binary uses.
inline const std::set<std::string>& KnownControllers() {
  static const std::set<std::string> k = {"cloud-node", "cloud-node-lifecycle", "route", "service"};
  return k;
}
// Whether `name` is enabled by --controllers (`*` = all defaults, `-name` disables, `name`
// enables).
bool ControllerEnabled(const Options& o, const std::string& name);

// argv[0] is the program name. Errors name the flag and the expected form.
absl::StatusOr<Options> ParseOptions(const std::vector<std::string>& args);
std::string UsageText();

}  // namespace ccm::app
