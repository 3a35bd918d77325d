#include "app/shared/kube_metrics.h"

#include <gtest/gtest.h>

#include "absl/strings/match.h"
#include "absl/time/time.h"

namespace ccm::app {
namespace kube_metrics_test {

TEST(KubeMetricsTest, HostLabel) {
  struct Case {
    const char* url;
    const char* host;
  };
  for (const Case& c : std::vector<Case>{{"https://10.0.0.1:6443", "10.0.0.1:6443"},
                                         {"https://10.0.0.1:6443/", "10.0.0.1:6443"},
                                         {"https://api.example.com/prefix/", "api.example.com"},
                                         {"http://[fd00::1]:8080", "[fd00::1]:8080"},
                                         {"127.0.0.1:6443", "127.0.0.1:6443"}}) {
    EXPECT_EQ(HostLabel(c.url), c.host) << c.url;
  }
}

// client-go's names, labels and buckets: a dashboard built for the Go binary reads ours.
TEST(KubeMetricsTest, ObservesRequestsAndRateLimiterWaits) {
  metrics::Registry r;
  kube::RestClientOptions options;
  ObserveKubeRequests(r, "https://10.0.0.1:6443", &options);
  ASSERT_TRUE(options.on_request && options.on_rate_limiter_wait);
  options.on_request("PATCH", absl::Milliseconds(3));
  options.on_request("PATCH", absl::Milliseconds(30));
  options.on_rate_limiter_wait("GET", absl::ZeroDuration());
  const std::string text = r.Render();
  for (const char* line : {
           "rest_client_request_duration_seconds_count{verb=\"PATCH\",host=\"10.0.0.1:6443\"} 2",
           "rest_client_request_duration_seconds_bucket{verb=\"PATCH\",host=\"10.0.0.1:6443\","
           "le=\"0.005\"} 1",
           "rest_client_request_duration_seconds_bucket{verb=\"PATCH\",host=\"10.0.0.1:6443\","
           "le=\"0.1\"} 2",
           "rest_client_rate_limiter_duration_seconds_count{verb=\"GET\",host=\"10.0.0.1:6443\"} 1",
       }) {
    EXPECT_TRUE(absl::StrContains(text, line)) << line << "\n" << text;
  }
}

}  // namespace kube_metrics_test
}  // namespace ccm::app
