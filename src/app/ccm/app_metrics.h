#pragma once
// Prometheus metrics of the binary: work queues (client-go names), vCenter requests (see
// vcenter_metrics.h), vCenter session,
// inventory and tag-cache state (read at scrape time), leader status and build info.

#include <memory>
#include <string>
#include <vector>

#include "app/ccm/live_vcenters.h"
#include "app/shared/vcenter_metrics.h"
#include "cloud/vsphere/vcenter.h"
#include "common/metrics.h"
#include "kube/work_queue.h"
#include "vsphere/client.h"

namespace ccm::app {

class QueueMetricsProvider final : public kube::WorkQueueMetricsProvider {
 public:
  explicit QueueMetricsProvider(metrics::Registry& r);
  std::unique_ptr<kube::WorkQueueMetrics> NewQueueMetrics(const std::string& name) override;

 private:
  metrics::Family *depth_, *adds_, *latency_, *work_, *retries_, *unfinished_, *longest_;
};

// Session/inventory/tag gauges of the live vCenters, refreshed at every scrape (under the
// LiveVCenters lock, so a vCenter being stopped is never read).
void RegisterVCenterGauges(metrics::Registry& r, std::shared_ptr<LiveVCenters> vcs);

void RegisterBuildInfo(metrics::Registry& r, const std::string& version);
metrics::Family* LeaderGauge(metrics::Registry& r);

}  // namespace ccm::app
