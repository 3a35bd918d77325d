// ServiceController, continued: one Service's load balancer made or removed, and the writes
// (finalizer, status, Events) around it.
#include "absl/strings/str_cat.h"
#include "common/logging.h"
#include "controllers/service_controller.h"
#include "kube/objects.h"
#include "kube/resource.h"

namespace ccm::controllers {
namespace {

std::vector<std::string> IngressOf(const kube::Json& s) {
  std::vector<std::string> out;
  const kube::Json::json_pointer at("/status/loadBalancer/ingress");
  if (!s.contains(at) || !s[at].is_array()) return out;
  for (const auto& i : s[at]) {
    if (i.is_object()) out.push_back(i.value("ip", ""));
  }
  return out;
}

}  // namespace

void ServiceController::Event(const kube::Json& service, bool warning, const std::string& reason,
                              const std::string& message) {
  if (recorder_ == nullptr) return;
  const kube::Json meta = service.value("metadata", kube::Json::object());
  kube::ObjectReference ref{.kind = "Service",
                            .ns = meta.value("namespace", ""),
                            .name = meta.value("name", ""),
                            .uid = meta.value("uid", ""),
                            .api_version = "v1"};
  recorder_->Record(ref, warning ? kube::EventType::kWarning : kube::EventType::kNormal, reason,
                    message);
}

absl::Status ServiceController::SetFinalizer(const kube::Json& service, bool present) {
  kube::Json finalizers = kube::Json::array();
  for (const auto& f :
       service.value("metadata", kube::Json::object()).value("finalizers", kube::Json::array())) {
    if (f != kLoadBalancerCleanupFinalizer) finalizers.push_back(f);
  }
  if (present) finalizers.push_back(kLoadBalancerCleanupFinalizer);
  // Conditional on the version read: a finalizer someone added meanwhile is not lost (409: the
  // Service is retried with what the informer has by then).
  kube::Json patch = {
      {"metadata",
       {{"finalizers", finalizers}, {"resourceVersion", kube::ResourceVersion(service)}}}};
  const kube::Json meta = service.value("metadata", kube::Json::object());
  return client_
      .Patch(kube::Services(), meta.value("namespace", ""), meta.value("name", ""),
             kube::PatchType::kMerge, patch)
      .status();
}

absl::StatusOr<kube::Json> ServiceController::SetStatus(const kube::Json& service,
                                                        const cloud::LoadBalancerStatus& status) {
  if (IngressOf(service) == status.ingress_ips) return service;
  kube::Json ingress = kube::Json::array();
  for (const auto& ip : status.ingress_ips) ingress.push_back({{"ip", ip}});
  kube::Json patch = {
      {"status", {{"loadBalancer", {{"ingress", ingress.empty() ? kube::Json() : ingress}}}}}};
  const kube::Json meta = service.value("metadata", kube::Json::object());
  return client_.Patch(kube::Services(), meta.value("namespace", ""), meta.value("name", ""),
                       kube::PatchType::kMerge, patch, "status");
}

absl::Status ServiceController::Ensure(const kube::Json& service) {
  const std::string key = kube::ObjectKey(service);
  if (!HasCleanupFinalizer(service)) {
    // First the finalizer: a Service deleted from now on waits for its load balancer to go.
    if (absl::Status s = SetFinalizer(service, true); !s.ok()) return s;
  }
  Event(service, false, "EnsuringLoadBalancer", "Ensuring load balancer");
  auto status = lb_.EnsureLoadBalancer(options_.cluster_name, service, LbNodes());
  if (!status.ok()) {
    Event(service, true, "SyncLoadBalancerFailed",
          absl::StrCat("Error syncing load balancer: failed to ensure load balancer: ",
                       status.status().message()));
    return status.status();
  }
  if (auto s = SetStatus(service, *status); !s.ok()) return s.status();
  Event(service, false, "EnsuredLoadBalancer", "Ensured load balancer");
  LOG_INFO("service controller: {}: load balancer at {}", key,
           status->ingress_ips.empty() ? std::string("(none)") : status->ingress_ips[0]);
  return absl::OkStatus();
}

absl::Status ServiceController::Delete(const kube::Json& service) {
  Event(service, false, "DeletingLoadBalancer", "Deleting load balancer");
  absl::Status s = lb_.EnsureLoadBalancerDeleted(options_.cluster_name, service);
  if (!s.ok()) {
    Event(
        service, true, "SyncLoadBalancerFailed",
        absl::StrCat("Error syncing load balancer: failed to delete load balancer: ", s.message()));
    return s;
  }
  auto cleared = SetStatus(service, {});
  if (!cleared.ok()) return cleared.status();
  // With the version the status write left, so the finalizer's write is not refused as stale.
  if (absl::Status f = SetFinalizer(*cleared, false); !f.ok()) return f;
  Event(service, false, "DeletedLoadBalancer", "Deleted load balancer");
  LOG_INFO("service controller: {}: load balancer deleted", kube::ObjectKey(service));
  return absl::OkStatus();
}

}  // namespace ccm::controllers
