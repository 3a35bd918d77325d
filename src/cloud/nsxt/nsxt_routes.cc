#include "cloud/nsxt/nsxt_routes.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "cloud/core/route_plan.h"
#include "common/logging.h"

namespace ccm::cloud {
namespace {

constexpr size_t kDisplayNameMax = 255;

std::string TagValue(const nsxt::Json& object, const std::string& scope) {
  for (const auto& t : object.value("tags", nsxt::Json::array())) {
    if (t.is_object() && t.value("scope", "") == scope) return t.value("tag", "");
  }
  return "";
}

}  // namespace

std::string StaticRouteId(const std::string& name_hint, const std::string& cidr) {
  return absl::StrReplaceAll(absl::StrCat(name_hint, "_", cidr), {{"/", "_"}});
}

nsxt::Json StaticRouteBody(const std::string& cluster, const std::string& node,
                           const std::string& cidr, const std::string& next_hop) {
  std::string display = absl::StrCat(cluster, "_", node, "_", cidr);
  if (display.size() > kDisplayNameMax) display.resize(kDisplayNameMax);
  return {{"display_name", display},
          {"network", cidr},
          {"next_hops", nsxt::Json::array({{{"ip_address", next_hop}}})},
          {"tags", nsxt::Json::array({{{"scope", kClusterNameTagScope}, {"tag", cluster}},
                                      {{"scope", kNodeNameTagScope}, {"tag", node}}})}};
}

NsxtRoutes::NsxtRoutes(nsxt::PolicyClient& client, NsxtRoutesOptions options)
    : client_(client),
      options_(std::move(options)),
      clock_(options_.clock != nullptr ? *options_.clock : Clock::Real()) {}

absl::StatusOr<std::vector<Route>> NsxtRoutes::ListRoutes(const std::string& cluster) {
  const std::string query = absl::StrCat(
      "resource_type:StaticRoutes AND tags.scope:", nsxt::EscapeQueryValue(kClusterNameTagScope),
      " AND tags.tag:", nsxt::EscapeQueryValue(cluster));
  auto found = client_.Search(query);
  if (!found.ok()) return found.status();
  std::vector<Route> out;
  for (const auto& item : *found) {
    if (item.value("parent_path", "") != options_.router_path) continue;
    if (TagValue(item, kClusterNameTagScope) != cluster) continue;  // the index matches loosely
    out.push_back(
        {item.value("id", ""), TagValue(item, kNodeNameTagScope), item.value("network", "")});
  }
  return out;
}

absl::Status NsxtRoutes::CreateRoute(const std::string& cluster, const std::string& name_hint,
                                     const Route& route, const NodeAddressList& addresses) {
  auto hop = RouteNextHop(route.target_node, addresses, route.destination_cidr);
  if (!hop.ok()) return hop.status();
  const std::string id = StaticRouteId(name_hint, route.destination_cidr);
  const std::string path = absl::StrCat(options_.router_path, "/static-routes/", id);
  absl::Status s = client_.Patch(
      path, StaticRouteBody(cluster, route.target_node, route.destination_cidr, *hop));
  if (!s.ok()) return s;
  return WaitRealized(path);
}

absl::Status NsxtRoutes::WaitRealized(const std::string& path) {
  const absl::Time deadline = clock_.Now() + options_.realized_timeout;
  while (true) {
    auto entities = client_.Realized(path);
    if (!entities.ok()) return entities.status();
    for (const auto& e : *entities) {
      auto paths = e.value("intent_paths", nsxt::Json::array());
      if (paths.empty() || paths[0] != path) continue;
      const std::string state = e.value("state", "");
      if (state == "REALIZED") return absl::OkStatus();
      if (state == "ERROR")
        return absl::InternalError(absl::StrCat("NSX-T could not realize static route ", path));
    }
    if (clock_.Now() + options_.realized_poll > deadline) break;
    clock_.SleepFor(options_.realized_poll, nullptr);
  }
  return absl::DeadlineExceededError(
      absl::StrCat("timed out waiting for static route ", path, " to be realized (",
                   absl::FormatDuration(options_.realized_timeout), ")"));
}

absl::Status NsxtRoutes::DeleteRoute(const std::string& cluster, const Route& route) {
  VLOG(2, "deleting static route {} of cluster {} on {}", route.name, cluster,
       options_.router_path);
  return client_.Delete(absl::StrCat(options_.router_path, "/static-routes/", route.name));
}

}  // namespace ccm::cloud
