#include "cloud/nsxt/lb_objects.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace ccm::cloud::lb {
namespace {

Tags With(Tags base, const Tags& more) {
  for (const auto& [scope, tag] : more) base[scope] = tag;
  return base;
}

Tags ObjectTags(const std::string& cluster, const std::string& key) {
  return {{kScopeCluster, cluster}, {kScopeService, key}};
}

std::string OrDefault(const std::string& v, const std::string& fallback) {
  return v.empty() ? fallback : v;
}

}  // namespace

std::string PortTag(const PortMapping& m) { return absl::StrCat(m.protocol, "/", m.source_port); }
std::string ServiceKey(const std::string& ns, const std::string& name) {
  return absl::StrCat(ns, "/", name);
}
std::string ServiceKeyOf(const Json& service) {
  const Json meta = service.value("metadata", Json::object());
  return ServiceKey(meta.value("namespace", ""), meta.value("name", ""));
}
std::string LbServiceName(const std::string& cluster) { return "cluster:" + cluster; }
std::string ObjectName(const std::string& cluster, const std::string& key) {
  return absl::StrCat("cluster:", cluster, ":", key);
}
std::string MonitorName(const std::string& cluster, const std::string& key, const PortMapping& m) {
  return absl::StrCat("cluster:", cluster, ":", key, ":", m.node_port);
}

Tags StandardTags(const std::map<std::string, std::string>& additional) {
  return With({{kScopeOwner, kOwner}}, additional);
}

Json TagList(const Tags& tags) {
  Json out = Json::array();
  for (const auto& [scope, tag] : tags) out.push_back({{"scope", scope}, {"tag", tag}});
  return out;
}

std::string TagOf(const Json& object, const std::string& scope) {
  for (const auto& t : object.value("tags", Json::array())) {
    if (t.is_object() && t.value("scope", "") == scope) return t.value("tag", "");
  }
  return "";
}

bool HasTags(const Json& object, const Tags& required) {
  for (const auto& [scope, tag] : required) {
    bool found = false;
    for (const auto& t : object.value("tags", Json::array())) {
      if (!t.is_object() || t.value("scope", "") != scope) continue;
      if (t.value("tag", "") != tag) return false;
      found = true;
      break;
    }
    if (!found) return false;
  }
  return true;
}

absl::StatusOr<std::vector<PortMapping>> Mappings(const Json& service) {
  std::vector<PortMapping> out;
  for (const auto& p : service.value("spec", Json::object()).value("ports", Json::array())) {
    PortMapping m{p.value("port", 0), p.value("nodePort", 0), p.value("protocol", "TCP")};
    if (m.protocol != "TCP" && m.protocol != "UDP")
      return absl::InvalidArgumentError(absl::StrCat("port ", m.source_port, "/", m.protocol,
                                                     ": only TCP and UDP are supported"));
    out.push_back(m);
  }
  return out;
}

bool MatchesVirtualServer(const Json& server, const PortMapping& m) {
  const Json ports = server.value("ports", Json::array());
  return ports.size() == 1 && ports[0] == std::to_string(m.source_port) &&
         HasTags(server, {{kScopePort, PortTag(m)}});
}

bool MatchesByPort(const Json& object, const PortMapping& m) {
  return HasTags(object, {{kScopePort, PortTag(m)}});
}

std::map<std::string, std::string> NodeInternalIps(const std::vector<Json>& nodes) {
  std::map<std::string, std::string> out;
  for (const auto& n : nodes) {
    const Json status = n.value("status", Json::object());
    for (const auto& a : status.value("addresses", Json::array())) {
      if (a.value("type", "") != "InternalIP") continue;
      out[a.value("address", "")] = n.value("metadata", Json::object()).value("name", "");
      break;
    }
  }
  return out;
}

Json PoolMembers(const Json& current, const std::map<std::string, std::string>& node_ips,
                 const std::string& cluster, bool* changed) {
  Json out = Json::array();
  std::map<std::string, bool> present;
  *changed = false;
  for (const auto& member : current.is_array() ? current : Json::array()) {
    const std::string ip = member.value("ip_address", "");
    if (node_ips.count(ip) && !present[ip]) {
      out.push_back(member);
      present[ip] = true;
    } else {
      *changed = true;
    }
  }
  for (const auto& [ip, node] : node_ips) {
    if (present[ip]) continue;
    out.push_back({{"admin_state", "ENABLED"},
                   {"display_name", absl::StrCat(cluster, ":", node)},
                   {"ip_address", ip}});
    *changed = true;
  }
  return out;
}

std::map<std::string, LbClass> Classes(const LoadBalancerConfig& config) {
  auto make = [](const std::string& name, const LoadBalancerClassConfig& c, const LbClass* base) {
    LbClass k{name,
              c.ip_pool_id,
              c.ip_pool_name,
              c.tcp_app_profile_path,
              c.tcp_app_profile_name,
              c.udp_app_profile_path,
              c.udp_app_profile_name};
    if (base != nullptr) {
      if (k.ip_pool_id.empty() && k.ip_pool_name.empty()) {
        k.ip_pool_id = base->ip_pool_id;
        k.ip_pool_name = base->ip_pool_name;
      }
      if (k.tcp_profile_path.empty() && k.tcp_profile_name.empty()) {
        k.tcp_profile_path = base->tcp_profile_path;
        k.tcp_profile_name = base->tcp_profile_name;
      }
      if (k.udp_profile_path.empty() && k.udp_profile_name.empty()) {
        k.udp_profile_path = base->udp_profile_path;
        k.udp_profile_name = base->udp_profile_name;
      }
    }
    return k;
  };
  std::map<std::string, LbClass> out;
  LbClass def = make(kDefaultClass, config.defaults, nullptr);
  if (auto it = config.classes.find(kDefaultClass); it != config.classes.end())
    def = make(kDefaultClass, it->second, &def);
  out[kDefaultClass] = def;
  for (const auto& [name, c] : config.classes) {
    if (name != kDefaultClass) out[name] = make(name, c, &def);
  }
  return out;
}

absl::StatusOr<LbClass> ClassOf(const Json& service,
                                const std::map<std::string, LbClass>& classes) {
  const Json annotations =
      service.value("metadata", Json::object()).value("annotations", Json::object());
  std::string name(absl::StripAsciiWhitespace(annotations.value(kClassAnnotation, "")));
  if (name.empty()) name = kDefaultClass;
  auto it = classes.find(name);
  if (it == classes.end())
    return absl::NotFoundError(
        absl::StrCat("invalid load balancer class ", name, " (annotation ", kClassAnnotation, ")"));
  return it->second;
}

Json LbServiceBody(const std::string& cluster, const std::string& size,
                   const std::string& tier1_path, const Tags& standard) {
  return {{"description",
           absl::StrCat("virtual server pool for cluster ", cluster, " created by ", kOwner)},
          {"display_name", LbServiceName(cluster)},
          {"tags", TagList(With(standard, {{kScopeCluster, cluster}}))},
          {"size", OrDefault(size, "SMALL")},
          {"enabled", true},
          {"connectivity_path", tier1_path}};
}

Json VirtualServerBody(const std::string& cluster, const std::string& key, const LbClass& cls,
                       const std::string& ip, const PortMapping& m,
                       const std::string& lb_service_path, const std::string& app_profile_path,
                       const std::string& pool_path, const Tags& standard) {
  Tags tags = With(standard, {{kScopeIpPoolId, cls.ip_pool_id},
                              {kScopeLbClass, cls.name},
                              {kScopeCluster, cluster},
                              {kScopeService, key},
                              {kScopePort, PortTag(m)}});
  return {{"description", absl::StrCat("virtual server for cluster ", cluster, ", service ", key,
                                       " created by ", kOwner)},
          {"display_name", ObjectName(cluster, key)},
          {"tags", TagList(tags)},
          {"default_pool_member_ports", Json::array({std::to_string(m.node_port)})},
          {"enabled", true},
          {"ip_address", ip},
          {"application_profile_path", app_profile_path},
          {"pool_path", pool_path},
          {"ports", Json::array({std::to_string(m.source_port)})},
          {"lb_service_path", lb_service_path}};
}

Json PoolBody(const std::string& cluster, const std::string& key, const PortMapping& m,
              const Json& members, const Json& monitor_paths, const Tags& standard,
              bool snat_disabled) {
  Tags tags = With(With(standard, ObjectTags(cluster, key)), {{kScopePort, PortTag(m)}});
  return {{"description",
           absl::StrCat("pool for cluster ", cluster, ", service ", key, " created by ", kOwner)},
          {"display_name", ObjectName(cluster, key)},
          {"tags", TagList(tags)},
          {"snat_translation", {{"type", snat_disabled ? "LBSnatDisabled" : "LBSnatAutoMap"}}},
          {"members", members},
          {"active_monitor_paths", monitor_paths}};
}

Json TcpMonitorBody(const std::string& cluster, const std::string& key, const PortMapping& m,
                    const Tags& standard) {
  Tags tags = With(With(standard, ObjectTags(cluster, key)), {{kScopePort, PortTag(m)}});
  return {{"resource_type", "LBTcpMonitorProfile"},
          {"description", absl::StrCat("tcp monitor for cluster ", cluster, ", service ", key,
                                       ", port ", m.node_port, " created by ", kOwner)},
          {"display_name", MonitorName(cluster, key, m)},
          {"tags", TagList(tags)},
          {"monitor_port", m.node_port}};
}

Json IpAllocationBody(const std::string& cluster, const std::string& key, const Tags& standard) {
  return {{"tags", TagList(With(standard, ObjectTags(cluster, key)))}};
}

}  // namespace ccm::cloud::lb
