#include "app/shared/vcenter_metrics.h"

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/time/time.h"

namespace ccm::app {

vsphere::RequestObserver VCenterRequestObserver(metrics::Registry& r, const std::string& vcenter) {
  auto* duration = r.Histogram("cloudprovider_vsphere_api_request_duration_seconds",
                               "Latency of vCenter SOAP requests.", {"vcenter", "request"},
                               metrics::LatencyBuckets());
  auto* total = r.Counter("cloudprovider_vsphere_api_requests_total",
                          "vCenter SOAP requests by method and outcome (status code name).",
                          {"vcenter", "request", "outcome"});
  auto* errors = r.Counter("cloudprovider_vsphere_api_request_errors",
                           "vCenter SOAP requests that failed.", {"vcenter", "request"});
  return [=](absl::string_view method, absl::StatusCode code, absl::Duration latency) {
    std::string m(method);
    duration->Observe({vcenter, m}, absl::ToDoubleSeconds(latency));
    total->Add({vcenter, m, absl::StatusCodeToString(code)});
    if (code != absl::StatusCode::kOk) errors->Add({vcenter, m});
  };
}

absl::string_view ReferenceClientOf(absl::string_view method) {
  if (absl::StartsWith(method, "Cns")) return "cns";
  if (absl::StartsWith(method, "Pbm")) return "pbm";
  return "soap";
}

vsphere::RequestObserver CsiRequestObserver(metrics::Registry& r, const std::string& vcenter) {
  vsphere::RequestObserver base = VCenterRequestObserver(r, vcenter);
  auto* ops = r.Histogram(
      "vsphere_request_ops_seconds", "Histogram vector for individual request to vCenter",
      {"request", "client", "status"}, {2, 5, 10, 15, 20, 25, 30, 60, 120, 180});
  return [base, ops](absl::string_view method, absl::StatusCode code, absl::Duration latency) {
    base(method, code, latency);
    ops->Observe({std::string(method), std::string(ReferenceClientOf(method)),
                  code == absl::StatusCode::kOk ? "success" : "fail-unknown"},
                 absl::ToDoubleSeconds(latency));
  };
}

std::function<void(absl::string_view optype, bool ok, absl::Duration elapsed)>
CnsOperationsObserver(metrics::Registry& r) {
  auto* ops =
      r.Histogram("vsphere_cns_volume_ops_histogram", "Histogram vector for CNS operations.",
                  {"optype", "status"}, {2, 5, 10, 15, 20, 25, 30, 60, 120, 180});
  return [ops](absl::string_view optype, bool ok, absl::Duration elapsed) {
    if (optype.empty()) return;
    ops->Observe({std::string(optype), ok ? "pass" : "fail"}, absl::ToDoubleSeconds(elapsed));
  };
}

}  // namespace ccm::app
