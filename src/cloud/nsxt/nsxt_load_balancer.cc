#include "cloud/nsxt/nsxt_load_balancer.h"

#include <random>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/logging.h"

namespace ccm::cloud {
namespace {

using nsxt::Json;

// A random (version 4) UUID, as the Go provider names new objects.
std::string NewId() {
  static absl::Mutex mu(absl::kConstInit);
  static std::mt19937_64* gen = new std::mt19937_64(std::random_device{}());
  absl::MutexLock l(&mu);
  auto r = [&](int bits) { return (*gen)() & ((uint64_t{1} << bits) - 1); };
  return absl::StrFormat("%08x-%04x-4%03x-%04x-%012x", r(32), r(16), r(12), 0x8000 | r(14), r(48));
}

std::string PathOf(const Json& o) { return o.value("path", ""); }

}  // namespace

NsxtLoadBalancer::NsxtLoadBalancer(nsxt::PolicyClient& client, NsxtLoadBalancerOptions options)
    : client_(client),
      options_(std::move(options)),
      clock_(options_.clock != nullptr ? *options_.clock : Clock::Real()),
      standard_(lb::StandardTags(options_.config.tags)) {}

absl::Status NsxtLoadBalancer::Setup() {
  absl::MutexLock l(&mu_);
  return SetUpLocked();
}

absl::Status NsxtLoadBalancer::SetUpLocked() {
  if (set_up_) return absl::OkStatus();
  classes_ = lb::Classes(options_.config);
  auto pools = client_.List("/infra/ip-pools");
  if (!pools.ok()) return pools.status();
  auto profiles = client_.List("/infra/lb-app-profiles");
  if (!profiles.ok()) return profiles.status();
  auto profile = [&](const std::string& name, const std::string& type,
                     std::string* path) -> absl::Status {
    for (const auto& p : *profiles) {
      if (p.value("resource_type", "") != type || p.value("display_name", "") != name) continue;
      if (!path->empty())
        return absl::FailedPreconditionError(
            absl::StrCat("application profile name ", name, " of type ", type, " is not unique"));
      *path = PathOf(p);
    }
    if (path->empty())
      return absl::NotFoundError(
          absl::StrCat("application profile named ", name, " of type ", type, " not found"));
    return absl::OkStatus();
  };
  for (auto& [name, c] : classes_) {
    for (const auto& p : *pools) {
      if (c.ip_pool_id.empty() && p.value("display_name", "") == c.ip_pool_name)
        c.ip_pool_id = p.value("id", "");
    }
    if (c.ip_pool_id.empty())
      return absl::NotFoundError(absl::StrCat("load balancer class ", name, ": IP pool named \"",
                                              c.ip_pool_name, "\" not found"));
    if (c.tcp_profile_path.empty()) {
      std::string n =
          c.tcp_profile_name.empty() ? "default-tcp-lb-app-profile" : c.tcp_profile_name;
      if (absl::Status s = profile(n, "LBFastTcpProfile", &c.tcp_profile_path); !s.ok()) return s;
    }
    if (c.udp_profile_path.empty()) {
      std::string n =
          c.udp_profile_name.empty() ? "default-udp-lb-app-profile" : c.udp_profile_name;
      if (absl::Status s = profile(n, "LBFastUdpProfile", &c.udp_profile_path); !s.ok()) return s;
    }
  }
  set_up_ = true;
  return absl::OkStatus();
}

std::string NsxtLoadBalancer::ProfilePath(const lb::LbClass& cls,
                                          const std::string& protocol) const {
  return protocol == "UDP" ? cls.udp_profile_path : cls.tcp_profile_path;
}

absl::StatusOr<std::vector<Json>> NsxtLoadBalancer::Tagged(const std::string& collection,
                                                           const lb::Tags& tags) {
  auto all = client_.List(collection);
  if (!all.ok()) return all.status();
  std::vector<Json> out;
  for (auto& o : *all) {
    if (lb::HasTags(o, tags)) out.push_back(std::move(o));
  }
  return out;
}

absl::StatusOr<Json> NsxtLoadBalancer::Create(const std::string& collection, const Json& body) {
  return client_.Put(collection + "/" + NewId(), body);
}

absl::StatusOr<Json> NsxtLoadBalancer::Change(const Json& current,
                                              const std::function<void(Json&)>& change) {
  Json next = current;
  change(next);
  auto put = client_.Put(PathOf(current), next);
  if (put.ok() || !absl::IsFailedPrecondition(put.status())) return put;
  return client_.Update(PathOf(current), change);
}

absl::StatusOr<NsxtLoadBalancer::Found> NsxtLoadBalancer::Read(const std::string& cluster,
                                                               const std::string& key,
                                                               const lb::LbClass& cls) {
  const lb::Tags tags = {{lb::kScopeOwner, standard_.at(lb::kScopeOwner)},
                         {lb::kScopeCluster, cluster},
                         {lb::kScopeService, key}};
  Found f;
  auto servers = Tagged(lb::kVirtualServers, tags);
  if (!servers.ok()) return servers.status();
  f.servers = std::move(*servers);
  auto pools = Tagged(lb::kPools, tags);
  if (!pools.ok()) return pools.status();
  f.pools = std::move(*pools);
  auto monitors = Tagged(lb::kMonitors, tags);
  if (!monitors.ok()) return monitors.status();
  for (auto& m : *monitors) {
    if (m.value("resource_type", "") == "LBTcpMonitorProfile") f.monitors.push_back(std::move(m));
  }
  // A Service keeps the pool its load balancer was made from (the Go provider's rule when its
  // class changes): the virtual servers' ippoolid tag says which.
  std::string pool_id = cls.ip_pool_id;
  if (!f.servers.empty() && !lb::TagOf(f.servers[0], lb::kScopeIpPoolId).empty())
    pool_id = lb::TagOf(f.servers[0], lb::kScopeIpPoolId);
  auto allocations = Tagged(absl::StrCat("/infra/ip-pools/", pool_id, "/ip-allocations"), tags);
  if (!allocations.ok()) return allocations.status();
  f.allocations = std::move(*allocations);
  return f;
}

absl::StatusOr<std::string> NsxtLoadBalancer::AllocatedIp(const Json& allocation) {
  if (!allocation.value("allocation_ip", "").empty()) return allocation.value("allocation_ip", "");
  const absl::Time deadline = clock_.Now() + options_.realized_timeout;
  while (true) {
    auto realized = client_.Realized(PathOf(allocation));
    if (!realized.ok()) return realized.status();
    for (const auto& e : *realized) {
      for (const auto& a : e.value("extended_attributes", Json::array())) {
        if (a.value("key", "") == "allocation_ip" && !a.value("values", Json::array()).empty())
          return a["values"][0].get<std::string>();
      }
    }
    if (clock_.Now() + options_.realized_poll > deadline) break;
    clock_.SleepFor(options_.realized_poll, nullptr);
  }
  return absl::DeadlineExceededError(absl::StrCat("no address for IP allocation ",
                                                  PathOf(allocation), " after ",
                                                  absl::FormatDuration(options_.realized_timeout)));
}

absl::StatusOr<std::string> NsxtLoadBalancer::Allocate(const std::string& cluster,
                                                       const std::string& key,
                                                       const lb::LbClass& cls, const Json& service,
                                                       Found& found) {
  if (found.allocations.size() > 1)
    return absl::FailedPreconditionError(
        absl::StrCat("Service ", key, " has ", found.allocations.size(),
                     " IP address allocations in pool ", cls.ip_pool_id));
  if (found.allocations.empty()) {
    Json body = lb::IpAllocationBody(cluster, key, standard_);
    const std::string wanted = service.value("spec", Json::object()).value("loadBalancerIP", "");
    if (!wanted.empty()) body["allocation_ip"] = wanted;
    const std::string path =
        absl::StrCat("/infra/ip-pools/", cls.ip_pool_id, "/ip-allocations/", NewId());
    if (absl::Status s = client_.Patch(path, body); !s.ok()) return s;
    auto stored = client_.Get(path);
    if (!stored.ok()) return stored.status();
    found.allocations.push_back(*stored);
    LOG_INFO("{}: IP address allocation {} in pool {}", key, path, cls.ip_pool_id);
  }
  return AllocatedIp(found.allocations[0]);
}

absl::StatusOr<std::string> NsxtLoadBalancer::MonitorPath(const std::string& cluster,
                                                          const std::string& key,
                                                          const lb::PortMapping& m, Found& found) {
  for (auto& monitor : found.monitors) {
    if (!lb::MatchesByPort(monitor, m)) continue;
    if (monitor.value("monitor_port", 0) != m.node_port) {
      auto put = Change(monitor, [&](Json& o) { o["monitor_port"] = m.node_port; });
      if (!put.ok()) return put.status();
      monitor = *put;
    }
    return PathOf(monitor);
  }
  auto created = Create(lb::kMonitors, lb::TcpMonitorBody(cluster, key, m, standard_));
  if (!created.ok()) return created.status();
  found.monitors.push_back(*created);
  return PathOf(*created);
}

absl::StatusOr<std::string> NsxtLoadBalancer::PoolPath(
    const std::string& cluster, const std::string& key, const lb::PortMapping& m,
    const std::string& monitor, const std::map<std::string, std::string>& node_ips, Found& found) {
  const Json monitors = monitor.empty() ? Json::array() : Json::array({monitor});
  for (auto& pool : found.pools) {
    if (!lb::MatchesByPort(pool, m)) continue;
    bool changed = false;
    Json members =
        lb::PoolMembers(pool.value("members", Json::array()), node_ips, cluster, &changed);
    if (changed || pool.value("active_monitor_paths", Json::array()) != monitors) {
      auto put = Change(pool, [&](Json& o) {
        bool c = false;
        o["members"] = lb::PoolMembers(o.value("members", Json::array()), node_ips, cluster, &c);
        o["active_monitor_paths"] = monitors;
      });
      if (!put.ok()) return put.status();
      pool = *put;
    }
    return PathOf(pool);
  }
  bool changed = false;
  Json members = lb::PoolMembers(Json::array(), node_ips, cluster, &changed);
  auto created = Create(lb::kPools, lb::PoolBody(cluster, key, m, members, monitors, standard_,
                                                 options_.config.snat_disabled));
  if (!created.ok()) return created.status();
  found.pools.push_back(*created);
  return PathOf(*created);
}

absl::Status NsxtLoadBalancer::EnsureServer(const std::string& cluster, const std::string& key,
                                            const lb::LbClass& cls, const std::string& ip,
                                            const lb::PortMapping& m, const std::string& pool,
                                            Found& found) {
  const std::string profile = ProfilePath(cls, m.protocol);
  const Json node_ports = Json::array({std::to_string(m.node_port)});
  for (auto& server : found.servers) {
    if (!lb::MatchesVirtualServer(server, m)) continue;
    if (server.value("default_pool_member_ports", Json::array()) == node_ports &&
        server.value("pool_path", "") == pool &&
        server.value("application_profile_path", "") == profile)
      return absl::OkStatus();
    auto put = Change(server, [&](Json& o) {
      o["default_pool_member_ports"] = node_ports;
      o["pool_path"] = pool;
      o["application_profile_path"] = profile;
    });
    if (!put.ok()) return put.status();
    server = *put;
    return absl::OkStatus();
  }
  auto service_path = LbServicePath(cluster);
  if (!service_path.ok()) return service_path.status();
  auto created = Create(
      lb::kVirtualServers,
      lb::VirtualServerBody(cluster, key, cls, ip, m, *service_path, profile, pool, standard_));
  if (!created.ok()) return created.status();
  LOG_INFO("{}: virtual server {} for {}/{} on {}", key, PathOf(*created), m.protocol,
           m.source_port, ip);
  found.servers.push_back(*created);
  return absl::OkStatus();
}

absl::Status NsxtLoadBalancer::DeleteUnused(const std::string& cluster,
                                            const std::vector<lb::PortMapping>& ports,
                                            Found& found) {
  std::set<std::string> pools_in_use, monitors_in_use;
  bool deleted_server = false;
  for (const auto& server : found.servers) {
    bool keep = false;
    for (const auto& m : ports) keep = keep || lb::MatchesVirtualServer(server, m);
    if (keep) {
      pools_in_use.insert(server.value("pool_path", ""));
      continue;
    }
    if (absl::Status s = client_.Delete(PathOf(server)); !s.ok()) return s;
    deleted_server = true;
  }
  for (const auto& pool : found.pools) {
    bool keep = pools_in_use.count(PathOf(pool)) > 0;
    for (const auto& p : pool.value("active_monitor_paths", Json::array()))
      if (keep) monitors_in_use.insert(p.get<std::string>());
    if (!keep) {
      if (absl::Status s = client_.Delete(PathOf(pool)); !s.ok()) return s;
    }
  }
  for (const auto& monitor : found.monitors) {
    if (monitors_in_use.count(PathOf(monitor))) continue;
    if (absl::Status s = client_.Delete(PathOf(monitor)); !s.ok()) return s;
  }
  return deleted_server ? RemoveLbServiceIfUnused(cluster) : absl::OkStatus();
}

}  // namespace ccm::cloud
