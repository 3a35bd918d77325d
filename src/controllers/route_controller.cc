#include "controllers/route_controller.h"

#include <atomic>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/logging.h"
#include "kube/objects.h"
#include "kube/resource.h"

namespace ccm::controllers {
namespace {

std::string Rfc3339(absl::Time t) {
  return absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", t, absl::UTCTimeZone());
}

kube::ObjectReference NodeReference(const cloud::RouteNode& n) {
  return {.kind = "Node", .name = n.name, .uid = n.uid, .api_version = "v1"};
}

cloud::RouteNode ToRouteNode(const kube::Json& node) {
  cloud::RouteNode n{kube::Name(node), kube::Uid(node), {}, {}, ""};
  const kube::Json spec = node.value("spec", kube::Json::object());
  for (const auto& c : spec.value("podCIDRs", kube::Json::array())) {
    if (c.is_string()) n.pod_cidrs.push_back(c.get<std::string>());
  }
  if (n.pod_cidrs.empty() && spec.value("podCIDR", kube::Json("")).is_string()) {
    std::string one = spec.value("podCIDR", "");
    if (!one.empty()) n.pod_cidrs.push_back(one);
  }
  const kube::Json status = node.value("status", kube::Json::object());
  for (const auto& a : status.value("addresses", kube::Json::array())) {
    if (a.is_object()) n.addresses.emplace_back(a.value("type", ""), a.value("address", ""));
  }
  n.network_unavailable = kube::NodeConditionStatus(node, "NetworkUnavailable").value_or("");
  return n;
}

}  // namespace

RouteController::RouteController(kube::Client& client, kube::Informer& nodes, cloud::Routes& routes,
                                 kube::EventRecorder* recorder, RouteControllerOptions options)
    : client_(client),
      nodes_(nodes),
      routes_(routes),
      recorder_(recorder),
      options_(std::move(options)),
      clock_(options_.clock != nullptr ? *options_.clock : Clock::Real()),
      runner_(clock_) {}

RouteController::~RouteController() { Stop(); }

void RouteController::Start() {
  runner_.Start({.name = "route controller",
                 .informers = {&nodes_},
                 .period = options_.period,
                 .pass_at_start = true,
                 .pass = [this] { Reconcile(); }});
}

void RouteController::Stop() { runner_.Stop(); }

std::vector<cloud::RouteNode> RouteController::Nodes() const {
  std::vector<cloud::RouteNode> out;
  for (const auto& node : nodes_.List()) out.push_back(ToRouteNode(*node));
  return out;
}

void RouteController::RunAll(std::vector<std::function<void()>> jobs) {
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next++; i < jobs.size(); i = next++) jobs[i]();
  };
  std::vector<std::thread> threads;
  const size_t n = std::min(jobs.size(), static_cast<size_t>(std::max(1, options_.workers)));
  for (size_t i = 1; i < n; ++i) threads.emplace_back(work);
  if (n > 0) work();
  for (auto& t : threads) t.join();
}

void RouteController::CreateRoutes(const std::vector<cloud::RouteNode>& nodes,
                                   const cloud::RoutePlan& plan,
                                   std::vector<std::vector<bool>>& created,
                                   RoutePassResult& result) {
  absl::Mutex mu;
  std::vector<std::function<void()>> jobs;
  for (const auto& c : plan.create) {
    jobs.push_back([&, c] {
      const cloud::RouteNode& node = nodes[c.node];
      const absl::Time start = clock_.Now();
      absl::Status s = routes_.CreateRoute(options_.cluster_name, node.uid, {"", node.name, c.cidr},
                                           node.addresses);
      absl::MutexLock l(&mu);
      if (s.ok()) {
        LOG_INFO("created route for node {} {} with hint {}", node.name, c.cidr, node.uid);
        ++result.created;
        return;
      }
      ++result.create_failed;
      size_t i = 0;
      while (node.pod_cidrs[i] != c.cidr) ++i;
      created[c.node][i] = false;
      std::string msg =
          absl::StrCat("Could not create route ", node.uid, " ", c.cidr, " for node ", node.name,
                       " after ", absl::FormatDuration(clock_.Now() - start), ": ", s.message());
      LOG_WARN("{}", msg);
      if (recorder_) recorder_->Warning(NodeReference(node), "FailedToCreateRoute", msg);
    });
  }
  RunAll(std::move(jobs));
}

void RouteController::DeleteRoutes(const cloud::RoutePlan& plan, RoutePassResult& result) {
  absl::Mutex mu;
  std::vector<std::function<void()>> jobs;
  for (const auto& r : plan.remove) {
    jobs.push_back([&, r] {
      absl::Status s = routes_.DeleteRoute(options_.cluster_name, r);
      absl::MutexLock l(&mu);
      if (s.ok()) {
        LOG_INFO("deleted route {} {}", r.name, r.destination_cidr);
        ++result.deleted;
      } else {
        LOG_WARN("could not delete route {} {}: {}", r.name, r.destination_cidr, s);
        ++result.delete_failed;
      }
    });
  }
  RunAll(std::move(jobs));
}

bool RouteController::WriteCondition(const cloud::RouteNode& node, const std::string& status) {
  const bool created = status == "False";
  const std::string now = Rfc3339(clock_.Now());
  kube::Json condition = {{"type", "NetworkUnavailable"},
                          {"status", status},
                          {"reason", created ? "RouteCreated" : "NoRouteCreated"},
                          {"message", created ? "RouteController created a route"
                                              : "RouteController failed to create a route"},
                          {"lastTransitionTime", now},
                          {"lastHeartbeatTime", now}};
  kube::Json patch = {{"status", {{"conditions", kube::Json::array({condition})}}}};
  auto r = client_.Patch(kube::Nodes(), "", node.name, kube::PatchType::kStrategicMerge, patch,
                         "status");
  if (!r.ok()) {
    LOG_WARN("could not set NetworkUnavailable={} on node {}: {}", status, node.name, r.status());
    return false;
  }
  return true;
}

RoutePassResult RouteController::Reconcile() {
  RoutePassResult result;
  auto routes = routes_.ListRoutes(options_.cluster_name);
  result.listed = routes.status();
  if (!routes.ok()) {
    LOG_WARN("route controller: could not list the routes of cluster {}: {}", options_.cluster_name,
             routes.status());
  } else {
    const std::vector<cloud::RouteNode> nodes = Nodes();
    const cloud::RoutePlan plan = cloud::PlanRoutes(nodes, *routes, options_.cluster_cidrs);
    std::vector<std::vector<bool>> created;
    for (const auto& n : nodes) created.emplace_back(n.pod_cidrs.size(), true);
    CreateRoutes(nodes, plan, created, result);
    DeleteRoutes(plan, result);
    for (size_t i = 0; i < nodes.size(); ++i) {
      if (runner_.stopping().HasBeenNotified()) break;
      bool all = true;
      for (bool c : created[i]) all = all && c;
      auto update = cloud::NetworkConditionUpdate(nodes[i], all);
      if (update && WriteCondition(nodes[i], *update)) ++result.conditions_written;
    }
  }
  absl::MutexLock l(&mu_);
  ++passes_;
  last_ = result;
  return result;
}

int64_t RouteController::passes() const {
  absl::MutexLock l(&mu_);
  return passes_;
}

RoutePassResult RouteController::last() const {
  absl::MutexLock l(&mu_);
  return last_;
}

bool RouteController::WaitForPasses(int64_t n, absl::Duration timeout) const {
  absl::MutexLock l(&mu_);
  auto reached = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return passes_ >= n; };
  return mu_.AwaitWithTimeout(absl::Condition(&reached), timeout);
}

}  // namespace ccm::controllers
