#pragma once
// Kubernetes client metrics under client-go's names, as the Go binaries expose them through
// component-base: rest_client_request_duration_seconds and
// rest_client_rate_limiter_duration_seconds, both by verb (the HTTP method) and host.

#include <string>

#include "common/metrics.h"
#include "kube/client.h"

namespace ccm::app {

// The host label of an API server URL: "https://10.0.0.1:6443/" -> "10.0.0.1:6443".
std::string HostLabel(const std::string& server_url);

// Sets options->on_request and options->on_rate_limiter_wait to observe into `r`, with the
// server's HostLabel as the host label.
void ObserveKubeRequests(metrics::Registry& r, const std::string& server_url,
                         kube::RestClientOptions* options);

}  // namespace ccm::app
