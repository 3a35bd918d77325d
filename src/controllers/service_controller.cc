#include "controllers/service_controller.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/logging.h"
#include "kube/objects.h"
#include "kube/rate_limiter.h"
#include "kube/resource.h"

namespace ccm::controllers {
namespace {

constexpr char kNodeSyncKey[] = "";  // a queue item that is not a Service: sync the backends

kube::WorkQueueOptions QueueOptions(const ServiceControllerOptions& o, Clock& clock) {
  kube::WorkQueueOptions q;
  q.name = "service";
  q.clock = &clock;
  q.limiter = std::make_unique<kube::ItemExponentialRateLimiter>(o.retry_base, o.retry_max);
  q.metrics = o.queue_metrics;
  return q;
}

kube::Json Finalizers(const kube::Json& s) {
  return s.value("metadata", kube::Json::object()).value("finalizers", kube::Json::array());
}

// What a Service sync depends on (not its status, which the sync itself writes).
kube::Json Relevant(const kube::Json& s) {
  const kube::Json meta = s.value("metadata", kube::Json::object());
  return {s.value("spec", kube::Json::object()), meta.value("annotations", kube::Json::object()),
          meta.value("finalizers", kube::Json::array()),
          meta.value("deletionTimestamp", kube::Json())};
}

}  // namespace

bool WantsLoadBalancer(const kube::Json& s) {
  const kube::Json spec = s.value("spec", kube::Json::object());
  return spec.value("type", "") == "LoadBalancer" && !spec.contains("loadBalancerClass");
}

bool NeedsCleanup(const kube::Json& s) {
  const bool deleting = s.value("metadata", kube::Json::object()).contains("deletionTimestamp");
  return HasCleanupFinalizer(s) && (deleting || !WantsLoadBalancer(s));
}

bool HasCleanupFinalizer(const kube::Json& s) {
  for (const auto& f : Finalizers(s)) {
    if (f == kLoadBalancerCleanupFinalizer) return true;
  }
  return false;
}

bool CarriesTraffic(const kube::Json& node) {
  if (kube::Labels(node).count("node.kubernetes.io/exclude-from-external-load-balancers"))
    return false;
  if (kube::HasTaint(node, "ToBeDeletedByClusterAutoscaler")) return false;
  return kube::IsNodeReady(node);
}

ServiceController::ServiceController(kube::Client& client, kube::Informer& services,
                                     kube::Informer& nodes, cloud::LoadBalancer& lb,
                                     kube::EventRecorder* recorder,
                                     ServiceControllerOptions options)
    : client_(client),
      services_(services),
      nodes_(nodes),
      lb_(lb),
      recorder_(recorder),
      options_(std::move(options)),
      clock_(options_.clock != nullptr ? *options_.clock : Clock::Real()),
      queue_(QueueOptions(options_, clock_)),
      runner_(clock_) {
  services_.AddEventHandler({[this](const kube::Json& s) { queue_.Add(kube::ObjectKey(s)); },
                             [this](const kube::Json& old, const kube::Json& s) {
                               if (Relevant(old) != Relevant(s)) queue_.Add(kube::ObjectKey(s));
                             },
                             [this](const kube::Json& s) { queue_.Add(kube::ObjectKey(s)); }});
  nodes_.AddEventHandler({[this](const kube::Json&) { OnNodeChange(); },
                          [this](const kube::Json&, const kube::Json&) { OnNodeChange(); },
                          [this](const kube::Json&) { OnNodeChange(); }});
}

ServiceController::~ServiceController() { Stop(); }

void ServiceController::Start() {
  runner_.Start({.name = "service controller",
                 .informers = {&services_, &nodes_},
                 .workers = std::max(1, options_.workers),
                 .process_next_item = [this] { return ProcessNextItem(); },
                 .shut_down_queue = [this] { queue_.ShutDown(); },
                 .period = options_.node_sync_period,
                 .pass_at_start = true,
                 .pass =
                     [this] {
                       bool first;
                       {
                         absl::MutexLock l(&mu_);
                         first = !cleaned_up_;
                         cleaned_up_ = true;
                       }
                       if (first && options_.cleanup) {
                         std::set<std::string> wanted;
                         for (const auto& s : services_.List())
                           if (WantsLoadBalancer(*s)) wanted.insert(kube::ObjectKey(*s));
                         if (absl::Status c = options_.cleanup(wanted); !c.ok())
                           LOG_WARN("service controller: cleanup of orphaned load balancers: {}",
                                    c);
                       }
                       queue_.Add(kNodeSyncKey);
                     }});
}

void ServiceController::Stop() {
  runner_.Stop();
  queue_.ShutDown();
}

void ServiceController::OnNodeChange() {
  std::string fingerprint;
  for (const auto& n : LbNodes()) {
    absl::StrAppend(&fingerprint, kube::Name(n), "=",
                    n.value("status", kube::Json::object()).value("addresses", kube::Json()).dump(),
                    ";");
  }
  absl::MutexLock l(&mu_);
  if (fingerprint == node_fingerprint_) return;
  node_fingerprint_ = fingerprint;
  queue_.Add(kNodeSyncKey);
}

std::vector<kube::Json> ServiceController::LbNodes() const {
  std::vector<kube::Json> out;
  for (const auto& n : nodes_.List()) {
    if (CarriesTraffic(*n)) out.push_back(*n);
  }
  return out;
}

bool ServiceController::ProcessNextItem() {
  std::optional<std::string> item = queue_.Get();
  if (!item) return false;
  absl::Status s =
      item->empty()
          ? (SyncNodes() == 0 ? absl::OkStatus() : absl::UnavailableError("backends not updated"))
          : SyncService(*item);
  if (s.ok()) {
    queue_.Forget(*item);
  } else {
    LOG_WARN("service controller: {}: {} (retried with backoff)",
             item->empty() ? "node sync" : *item, s);
    queue_.AddRateLimited(*item);
  }
  queue_.Done(*item);
  return true;
}

absl::Status ServiceController::SyncService(const std::string& key) {
  kube::ObjectPtr service = services_.Get(key);
  absl::Status s = absl::OkStatus();
  if (service && NeedsCleanup(*service)) {
    s = Delete(*service);
  } else if (service && WantsLoadBalancer(*service)) {
    s = Ensure(*service);
  }
  if (s.ok()) {
    absl::MutexLock l(&mu_);
    ++synced_;
  }
  return s;
}

int ServiceController::SyncNodes() {
  const std::vector<kube::Json> nodes = LbNodes();
  int failed = 0;
  for (const auto& s : services_.List()) {
    if (!WantsLoadBalancer(*s) || !HasCleanupFinalizer(*s)) continue;
    absl::Status u = lb_.UpdateLoadBalancer(options_.cluster_name, *s, nodes);
    if (!u.ok()) {
      ++failed;
      Event(*s, true, "UpdateLoadBalancerFailed",
            absl::StrCat("Error updating load balancer with new hosts: ", u.message()));
    }
  }
  return failed;
}

int64_t ServiceController::synced() const {
  absl::MutexLock l(&mu_);
  return synced_;
}

bool ServiceController::WaitForSynced(int64_t n, absl::Duration timeout) const {
  absl::MutexLock l(&mu_);
  auto reached = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return synced_ >= n; };
  return mu_.AwaitWithTimeout(absl::Condition(&reached), timeout);
}

}  // namespace ccm::controllers
