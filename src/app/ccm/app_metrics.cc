#include "app/ccm/app_metrics.h"

#include "absl/synchronization/mutex.h"

namespace ccm::app {
namespace {

class QueueMetrics final : public kube::WorkQueueMetrics {
 public:
  QueueMetrics(std::string name, metrics::Family* depth, metrics::Family* adds,
               metrics::Family* latency, metrics::Family* work, metrics::Family* retries,
               metrics::Family* unfinished, metrics::Family* longest)
      : l_{std::move(name)},
        depth_(depth),
        adds_(adds),
        latency_(latency),
        work_(work),
        retries_(retries),
        unfinished_(unfinished),
        longest_(longest) {}
  void SetDepth(int64_t d) override { depth_->Set(l_, static_cast<double>(d)); }
  void IncAdds() override { adds_->Add(l_); }
  void ObserveQueueLatency(absl::Duration d) override {
    latency_->Observe(l_, absl::ToDoubleSeconds(d));
  }
  void ObserveWorkDuration(absl::Duration d) override {
    work_->Observe(l_, absl::ToDoubleSeconds(d));
  }
  void IncRetries() override { retries_->Add(l_); }
  void SetUnfinishedWorkSeconds(double s) override { unfinished_->Set(l_, s); }
  void SetLongestRunningProcessorSeconds(double s) override { longest_->Set(l_, s); }

 private:
  metrics::Labels l_;
  metrics::Family *depth_, *adds_, *latency_, *work_, *retries_, *unfinished_, *longest_;
};

std::vector<double> QueueBuckets() {  // client-go: 1e-8 .. 10s, factor 10
  return {1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1, 10};
}

}  // namespace

QueueMetricsProvider::QueueMetricsProvider(metrics::Registry& r)
    : depth_(r.Gauge("workqueue_depth", "Current depth of workqueue.", {"name"})),
      adds_(r.Counter("workqueue_adds_total", "Total number of adds handled by workqueue.",
                      {"name"})),
      latency_(r.Histogram("workqueue_queue_duration_seconds",
                           "How long in seconds an item stays in workqueue before being requested.",
                           {"name"}, QueueBuckets())),
      work_(r.Histogram("workqueue_work_duration_seconds",
                        "How long in seconds processing an item from workqueue takes.", {"name"},
                        QueueBuckets())),
      retries_(r.Counter("workqueue_retries_total", "Total number of retries handled by workqueue.",
                         {"name"})),
      unfinished_(r.Gauge("workqueue_unfinished_work_seconds",
                          "How many seconds of work has been done that is in progress.", {"name"})),
      longest_(
          r.Gauge("workqueue_longest_running_processor_seconds",
                  "How many seconds has the longest running processor for workqueue been running.",
                  {"name"})) {}

std::unique_ptr<kube::WorkQueueMetrics> QueueMetricsProvider::NewQueueMetrics(
    const std::string& name) {
  return std::make_unique<QueueMetrics>(name, depth_, adds_, latency_, work_, retries_, unfinished_,
                                        longest_);
}

void RegisterVCenterGauges(metrics::Registry& r, std::shared_ptr<LiveVCenters> vcs) {
  auto* session =
      r.Gauge("cloudprovider_vsphere_session_state",
              "1 for the current SOAP session state of each vCenter.", {"vcenter", "state"});
  auto* logins = r.Gauge("cloudprovider_vsphere_session_generation",
                         "Number of successful (re)logins of the SOAP session.", {"vcenter"});
  auto* synced = r.Gauge("cloudprovider_vsphere_inventory_synced",
                         "1 when the VM inventory cache is current.", {"vcenter"});
  auto* vms =
      r.Gauge("cloudprovider_vsphere_inventory_vms", "VMs in the inventory cache.", {"vcenter"});
  auto* updates = r.Gauge("cloudprovider_vsphere_inventory_updates_total",
                          "Object updates applied from WaitForUpdatesEx.", {"vcenter"});
  auto* resyncs = r.Gauge("cloudprovider_vsphere_inventory_resyncs_total",
                          "Full inventory loads (the first included).", {"vcenter"});
  auto* hits = r.Gauge("cloudprovider_vsphere_tag_cache_hits_total",
                       "Tag and category look-ups answered from the cache.", {"vcenter"});
  auto* misses = r.Gauge("cloudprovider_vsphere_tag_cache_misses_total",
                         "Tag and category look-ups that needed a vCenter request.", {"vcenter"});
  auto* topo_hits = r.Gauge("cloudprovider_vsphere_zone_cache_hits_total",
                            "Zone look-ups answered from the topology cache.", {"vcenter"});
  auto* topo_batches =
      r.Gauge("cloudprovider_vsphere_zone_tag_batches_total",
              "Batched tag requests (list-attached-tags-on-objects).", {"vcenter"});
  r.OnScrape([=] {
    vcs->ForEach([&](cloud::VCenter& v) {
      cloud::VCenter* vc = &v;
      const std::string& l = vc->label();
      auto s = vc->client().session_status();
      for (auto st : {vsphere::SessionState::kLoggedOut, vsphere::SessionState::kLoggedIn,
                      vsphere::SessionState::kLoginFailed})
        session->Set({l, std::string(vsphere::ToString(st))}, s.state == st ? 1 : 0);
      logins->Set({l}, static_cast<double>(s.generation));
      auto inv = vc->inventory().stats();
      synced->Set({l}, inv.synced ? 1 : 0);
      vms->Set({l}, static_cast<double>(inv.vms));
      updates->Set({l}, static_cast<double>(inv.updates_applied));
      resyncs->Set({l}, static_cast<double>(inv.resyncs));
      auto t = vc->tagging().stats();
      hits->Set({l}, static_cast<double>(t.cache_hits));
      misses->Set({l}, static_cast<double>(t.cache_misses));
      auto topo = vc->topology().stats();
      topo_hits->Set({l}, static_cast<double>(topo.hits));
      topo_batches->Set({l}, static_cast<double>(topo.batch_fetches));
    });
  });
}

void RegisterBuildInfo(metrics::Registry& r, const std::string& version) {
  r.Gauge("vsphere_ccm_build_info", "Build information; the value is always 1.",
          {"version", "language"})
      ->Set({version, "c++20"}, 1);
}

metrics::Family* LeaderGauge(metrics::Registry& r) {
  return r.Gauge("leader_election_master_status",
                 "1 when this process holds the leader lease, 0 otherwise.", {"name"});
}

}  // namespace ccm::app
