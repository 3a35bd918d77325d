#include "app/shared/kube_metrics.h"

#include <vector>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace ccm::app {

namespace {
// client-go's buckets for both histograms (component-base/metrics/prometheus/restclient).
std::vector<double> RestClientBuckets() {
  return {0.005, 0.025, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 15.0, 30.0, 60.0};
}
}  // namespace

std::string HostLabel(const std::string& server_url) {
  absl::string_view s = server_url;
  if (size_t scheme = s.find("://"); scheme != absl::string_view::npos) s.remove_prefix(scheme + 3);
  return std::string(s.substr(0, s.find('/')));
}

void ObserveKubeRequests(metrics::Registry& r, const std::string& server_url,
                         kube::RestClientOptions* options) {
  const std::string host = HostLabel(server_url);
  auto* requests = r.Histogram("rest_client_request_duration_seconds",
                               "Request latency in seconds. Broken down by verb, and host.",
                               {"verb", "host"}, RestClientBuckets());
  auto* limiter = r.Histogram("rest_client_rate_limiter_duration_seconds",
                              "Client side rate limiter latency in seconds. Broken down by verb, "
                              "and host.",
                              {"verb", "host"}, RestClientBuckets());
  options->on_request = [requests, host](absl::string_view method, absl::Duration took) {
    requests->Observe({std::string(method), host}, absl::ToDoubleSeconds(took));
  };
  options->on_rate_limiter_wait = [limiter, host](absl::string_view method, absl::Duration d) {
    limiter->Observe({std::string(method), host}, absl::ToDoubleSeconds(d));
  };
}

}  // namespace ccm::app
