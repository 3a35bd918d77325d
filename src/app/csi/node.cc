#include "app/csi/node.h"

#include <filesystem>
#include <optional>

#include "absl/strings/str_cat.h"
#include "app/csi/client_rate.h"
#include "app/csi/config.h"
#include "common/logging.h"
#include "csi/core/constants.h"
#include "csi/core/node_topology.h"
#include "csi/core/node_volume.h"
#include "kube/config.h"

namespace ccm::app {
namespace {

std::optional<std::string> Lookup(const std::map<std::string, std::string>& env,
                                  absl::string_view key) {
  auto it = env.find(std::string(key));
  if (it == env.end()) return std::nullopt;
  return it->second;
}

// The topology part of csi-vsphere.conf, when the DaemonSet mounts it (our earlier DaemonSets);
// nullopt without the file (the reference's DaemonSet: CSINodeTopology). The node plugin never
// logs in to vCenter: credentials may be absent, and those in the file are parsed and dropped.
absl::StatusOr<std::optional<csi::TopologyConfig>> TopologyFromConfig(
    const CsiOptions& options, const std::map<std::string, std::string>& env) {
  std::error_code ec;
  if (!std::filesystem::exists(options.config_path, ec)) return std::nullopt;
  absl::StatusOr<cloud::ParseResult> r =
      ReadCsiConfig(options.config_path, env, /*credentials_required=*/false);
  if (!r.ok()) return r.status();
  const cloud::Config& c = r->config;
  csi::TopologyConfig t;
  t.zone_category = c.labels.zone;
  t.region_category = c.labels.region;
  t.topology_categories = c.labels.topology_categories;
  t.category_labels = c.labels.category_labels;
  return std::optional<csi::TopologyConfig>(std::move(t));
}

}  // namespace

std::shared_ptr<kube::Client> ApiClientFromEnv(const std::map<std::string, std::string>& env,
                                               const std::string& without) {
  kube::EnvLookup lookup = [&env](absl::string_view key) { return Lookup(env, key); };
  absl::StatusOr<kube::Config> cfg =
      kube::BuildConfig("", Lookup(env, kEnvKubeconfig).value_or(""), lookup);
  if (!cfg.ok()) {
    LOG_WARN("no Kubernetes API access ({}): {}", cfg.status().message(), without);
    return nullptr;
  }
  ClientRate rate = InClusterClientRate(env);
  for (const std::string& w : rate.warnings) LOG_WARN("{}", w);
  LOG_INFO("{}", DescribeClientRate(rate));
  cfg->qps = rate.qps;
  cfg->burst = rate.burst;
  absl::StatusOr<std::unique_ptr<kube::RestClient>> client = kube::RestClient::New(*cfg);
  if (!client.ok()) {
    LOG_WARN("Kubernetes API client: {}: {}", client.status().message(), without);
    return nullptr;
  }
  return std::shared_ptr<kube::Client>(std::move(*client));
}

absl::StatusOr<csi::node::NodeServiceOptions> NodeServiceOptionsFromEnv(
    const CsiOptions& options, const std::map<std::string, std::string>& env) {
  csi::node::NodeServiceOptions o;
  o.info.node_name = Lookup(env, csi::kEnvNodeName).value_or("");
  if (o.info.node_name.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(csi::kEnvNodeName,
                     " is not set (the node DaemonSet sets it from the Pod's "
                     "spec.nodeName)"));
  }
  // $MAX_VOLUMES_PER_NODE (ours) when set to 1-255; unset or 0: by the feature states, as the
  // reference (59, or 255 with high-pv-node-density).
  if (std::optional<std::string> v = Lookup(env, csi::kEnvMaxVolumesPerNode);
      v && !v->empty() && *v != "0") {
    absl::StatusOr<int64_t> max = csi::MaxVolumesPerNode(*v);
    if (!max.ok()) return max.status();
    o.info.max_volumes_per_node = *max;
  }
  absl::StatusOr<std::optional<csi::TopologyConfig>> topology = TopologyFromConfig(options, env);
  if (!topology.ok()) return topology.status();
  // Without one, a node plugin outside a cluster still answers with the SMBIOS UUID.
  o.info.client = ApiClientFromEnv(env, "node ID from product_serial only, no topology");
  if (topology->has_value()) {
    o.info.topology = **std::move(topology);
    LOG_INFO("topology from the Node's labels, as csi-vsphere.conf {} configures it",
             options.config_path);
  } else if (o.info.client != nullptr) {
    o.info.topology_from_crd = true;
    csi::WatchTimeout wait =
        csi::NodeGetInfoWatchTimeout(Lookup(env, csi::kEnvNodeGetInfoWatchTimeout));
    if (!wait.warning.empty()) LOG_WARN("{}", wait.warning);
    o.info.topology_wait = absl::Minutes(wait.minutes);
    LOG_INFO("no CSI config at {}: topology from this Node's CSINodeTopology (waiting up to {})",
             options.config_path, absl::FormatDuration(o.info.topology_wait));
  }

  o.devices.by_id_dir = Lookup(env, kEnvDeviceByIdDir).value_or(std::string(csi::kDevDiskById));
  if (auto wait = Lookup(env, kEnvDeviceWait); wait && !wait->empty()) {
    absl::Duration d;
    if (!absl::ParseDuration(*wait, &d) || d < absl::ZeroDuration()) {
      return absl::InvalidArgumentError(absl::StrCat(
          kEnvDeviceWait, "=\"", *wait, "\" is not a duration such as \"10s\" or \"500ms\""));
    }
    o.devices.wait = d;
  }
  LOG_INFO("node plugin for Node {}: disks under {} (wait {}), max volumes {}, API {}",
           o.info.node_name, o.devices.by_id_dir, absl::FormatDuration(o.devices.wait),
           o.info.max_volumes_per_node > 0 ? std::to_string(o.info.max_volumes_per_node)
                                           : "by high-pv-node-density (59 or 255)",
           o.info.client ? "configured" : "none");
  return o;
}

}  // namespace ccm::app
