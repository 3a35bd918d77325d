// NsxtLoadBalancer, continued: the cluster's LB service, the LoadBalancer calls and the cleanup.
#include "absl/strings/str_cat.h"
#include "cloud/nsxt/nsxt_load_balancer.h"
#include "common/logging.h"

namespace ccm::cloud {
namespace {

using nsxt::Json;

}  // namespace

absl::StatusOr<std::string> NsxtLoadBalancer::LbServicePath(const std::string& cluster) {
  const LoadBalancerConfig& c = options_.config;
  if (!c.lb_service_id.empty()) {
    auto s = client_.Get(absl::StrCat(lb::kLbServices, "/", c.lb_service_id));
    if (!s.ok()) return s.status();
    const std::string via = s->value("connectivity_path", "");
    if (!c.tier1_gateway_path.empty() && via != c.tier1_gateway_path)
      return absl::FailedPreconditionError(absl::StrCat("load balancer service ", c.lb_service_id,
                                                        " is configured for router \"", via,
                                                        "\" not \"", c.tier1_gateway_path, "\""));
    return s->value("path", "");
  }
  auto all = client_.List(lb::kLbServices);
  if (!all.ok()) return all.status();
  const lb::Tags ours = {{lb::kScopeOwner, standard_.at(lb::kScopeOwner)},
                         {lb::kScopeCluster, cluster}};
  for (const auto& s : *all) {
    if ((!c.tier1_gateway_path.empty() &&
         s.value("connectivity_path", "") == c.tier1_gateway_path) ||
        lb::HasTags(s, ours))
      return s.value("path", "");
  }
  auto created =
      Create(lb::kLbServices, lb::LbServiceBody(cluster, c.size, c.tier1_gateway_path, standard_));
  if (!created.ok())
    return absl::Status(created.status().code(),
                        absl::StrCat("creating the load balancer service of cluster ", cluster,
                                     ": ", created.status().message()));
  LOG_INFO("load balancer service {} created on {}", created->value("path", ""),
           c.tier1_gateway_path);
  return created->value("path", "");
}

absl::Status NsxtLoadBalancer::RemoveLbServiceIfUnused(const std::string& cluster) {
  if (!options_.config.lb_service_id.empty()) return absl::OkStatus();  // not ours to remove
  const lb::Tags ours = {{lb::kScopeOwner, standard_.at(lb::kScopeOwner)},
                         {lb::kScopeCluster, cluster}};
  auto servers = Tagged(lb::kVirtualServers, ours);
  if (!servers.ok()) return servers.status();
  if (!servers->empty()) return absl::OkStatus();
  auto services = Tagged(lb::kLbServices, ours);
  if (!services.ok()) return services.status();
  for (const auto& s : *services) {
    if (absl::Status d = client_.Delete(s.value("path", "")); !d.ok()) return d;
    LOG_INFO("load balancer service {} deleted: no virtual server left", s.value("path", ""));
  }
  return absl::OkStatus();
}

absl::StatusOr<LoadBalancerStatus> NsxtLoadBalancer::Ensure(const std::string& cluster,
                                                            const Json& service,
                                                            const std::vector<Json>& nodes) {
  if (absl::Status s = SetUpLocked(); !s.ok()) return s;
  auto ports = lb::Mappings(service);
  if (!ports.ok()) return ports.status();
  auto cls = lb::ClassOf(service, classes_);
  if (!cls.ok()) return cls.status();
  const std::string key = lb::ServiceKeyOf(service);
  auto found = Read(cluster, key, *cls);
  if (!found.ok()) return found.status();
  LoadBalancerStatus status;
  if (!ports->empty()) {
    auto ip = Allocate(cluster, key, *cls, service, *found);
    if (!ip.ok()) return ip.status();
    const auto node_ips = lb::NodeInternalIps(nodes);
    for (const auto& m : *ports) {
      std::string monitor;
      if (m.protocol == "TCP") {
        auto path = MonitorPath(cluster, key, m, *found);
        if (!path.ok()) return path.status();
        monitor = *path;
      }
      auto pool = PoolPath(cluster, key, m, monitor, node_ips, *found);
      if (!pool.ok()) return pool.status();
      if (absl::Status s = EnsureServer(cluster, key, *cls, *ip, m, *pool, *found); !s.ok())
        return s;
    }
    status.ingress_ips.push_back(*ip);
  }
  if (absl::Status s = DeleteUnused(cluster, *ports, *found); !s.ok()) return s;
  if (ports->empty()) {
    for (const auto& a : found->allocations) {
      if (absl::Status s = client_.Delete(a.value("path", "")); !s.ok()) return s;
      LOG_INFO("{}: IP address {} released", key, a.value("allocation_ip", ""));
    }
  }
  return status;
}

absl::StatusOr<LoadBalancerStatus> NsxtLoadBalancer::EnsureLoadBalancer(
    const std::string& cluster, const Json& service, const std::vector<Json>& nodes) {
  absl::MutexLock l(&mu_);
  return Ensure(cluster, service, nodes);
}

absl::Status NsxtLoadBalancer::EnsureLoadBalancerDeleted(const std::string& cluster,
                                                         const Json& service) {
  Json empty = service;
  empty["spec"]["ports"] = Json::array();
  absl::MutexLock l(&mu_);
  return Ensure(cluster, empty, {}).status();
}

absl::Status NsxtLoadBalancer::UpdateLoadBalancer(const std::string& cluster, const Json& service,
                                                  const std::vector<Json>& nodes) {
  absl::MutexLock l(&mu_);
  if (absl::Status s = SetUpLocked(); !s.ok()) return s;
  auto ports = lb::Mappings(service);
  if (!ports.ok()) return ports.status();
  auto cls = lb::ClassOf(service, classes_);
  if (!cls.ok()) return cls.status();
  auto found = Read(cluster, lb::ServiceKeyOf(service), *cls);
  if (!found.ok()) return found.status();
  const auto node_ips = lb::NodeInternalIps(nodes);
  for (auto& pool : found->pools) {
    bool changed = false;
    lb::PoolMembers(pool.value("members", Json::array()), node_ips, cluster, &changed);
    if (!changed) continue;
    auto put = Change(pool, [&](Json& o) {
      bool c = false;
      o["members"] = lb::PoolMembers(o.value("members", Json::array()), node_ips, cluster, &c);
    });
    if (!put.ok()) return put.status();
  }
  return absl::OkStatus();
}

absl::StatusOr<std::optional<LoadBalancerStatus>> NsxtLoadBalancer::GetLoadBalancer(
    const std::string& cluster, const Json& service) {
  auto servers = Tagged(lb::kVirtualServers, {{lb::kScopeOwner, standard_.at(lb::kScopeOwner)},
                                              {lb::kScopeCluster, cluster},
                                              {lb::kScopeService, lb::ServiceKeyOf(service)}});
  if (!servers.ok()) return servers.status();
  if (servers->empty()) return std::optional<LoadBalancerStatus>();
  return std::optional<LoadBalancerStatus>(
      LoadBalancerStatus{{(*servers)[0].value("ip_address", "")}});
}

std::string NsxtLoadBalancer::GetLoadBalancerName(const std::string& cluster, const Json& service) {
  return lb::ObjectName(cluster, lb::ServiceKeyOf(service));
}

absl::Status NsxtLoadBalancer::CleanupOrphans(const std::string& cluster,
                                              const std::set<std::string>& services) {
  const lb::Tags ours = {{lb::kScopeOwner, standard_.at(lb::kScopeOwner)},
                         {lb::kScopeCluster, cluster}};
  std::map<std::string, lb::LbClass> classes;
  {
    absl::MutexLock l(&mu_);
    if (absl::Status s = SetUpLocked(); !s.ok()) return s;
    classes = classes_;
  }
  std::set<std::string> seen;
  std::vector<std::string> collections = {lb::kVirtualServers, lb::kPools, lb::kMonitors};
  for (const auto& [name, c] : classes)
    collections.push_back(absl::StrCat("/infra/ip-pools/", c.ip_pool_id, "/ip-allocations"));
  for (const auto& collection : collections) {
    auto objects = Tagged(collection, ours);
    if (!objects.ok()) return objects.status();
    for (const auto& o : *objects) {
      const std::string key = lb::TagOf(o, lb::kScopeService);
      if (!key.empty() && !services.count(key)) seen.insert(key);
    }
  }
  for (const auto& key : seen) {
    const size_t slash = key.find('/');
    Json service = {
        {"metadata", {{"namespace", key.substr(0, slash)}, {"name", key.substr(slash + 1)}}}};
    LOG_INFO("deleting the load balancer of Service {}, which no longer exists", key);
    if (absl::Status s = EnsureLoadBalancerDeleted(cluster, service); !s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace ccm::cloud
