#include "app/csi/syncer_topology.h"

#include <thread>

#include "cloud/vsphere/vcenter.h"
#include "common/logging.h"
#include "csi/controller/controller_backend.h"
#include "csi/controller/host_topology.h"

namespace ccm::app {

SyncerNodeTopology::SyncerNodeTopology(const cloud::Config& config,
                                       std::vector<vsphere::Client*> vim,
                                       const vsphere::CredentialSource& credentials,
                                       kube::Client& client) {
  const csi::TopologyConfig topology = csi::TopologyOf(config);
  const bool tags = !csi::CategoriesOf(topology).empty();
  std::vector<csi::NodeVmVCenter> vcenters;
  std::vector<csi::DatastoreSource> sources;
  for (size_t i = 0; i < config.vcenters.size() && i < vim.size(); ++i) {
    const cloud::VirtualCenterConfig& vc = config.vcenters[i];
    vsphere::InventoryCacheOptions io;
    io.datacenters = vc.datacenters;
    vms_.push_back(std::make_unique<vsphere::InventoryCache>(*vim[i], io));
    vcenters.push_back({vc.label, vms_.back().get()});
    if (!tags) continue;
    const vsphere::ClientOptions co = cloud::ClientOptionsFor(vc);
    vsphere::TaggingOptions to;
    to.server = vc.server;
    to.url = co.url;
    to.http.tls = co.tls;
    to.http.user_agent = vim[i]->options().user_agent;  // the syncer's
    tagging_.push_back(std::make_unique<vsphere::TaggingClient>(to, credentials));
    sources.push_back({vc.label, vim[i], tagging_.back().get(), vc.datacenters, nullptr});
  }
  if (tags) {
    csi::DatastoreInventoryOptions dio;
    dio.topology = topology;
    dio.interval =
        absl::Minutes(std::max(1, config.global.csi_fetch_preferred_datastores_interval_minutes));
    hosts_ = std::make_unique<csi::DatastoreInventory>(std::move(sources), dio);
  }
  source_ = std::make_unique<csi::NodeVmTopologyFromVCenter>(std::move(vcenters), hosts_.get());
  sink_ = std::make_unique<kube::KubeEventSink>(client);
  kube::EventRecorderOptions eo;
  eo.component = "cns.vmware.com";
  events_ = std::make_unique<kube::EventRecorder>(*sink_, eo);
  csi::syncer::NodeTopologyControllerOptions no;
  no.topology = topology;
  no.events = events_.get();
  controller_ = std::make_unique<csi::syncer::NodeTopologyController>(client, *source_, no);
}

SyncerNodeTopology::~SyncerNodeTopology() { Stop(); }

void SyncerNodeTopology::Start() {
  for (auto& v : vms_) v->Start();
  if (hosts_) hosts_->Start();
  controller_->Start();
  LOG_INFO("CSINodeTopology controller running ({} vCenter(s), topology {})", vms_.size(),
           hosts_ ? "from tags" : "not configured");
}

void SyncerNodeTopology::SetDeadline(absl::Time deadline) {
  for (auto& t : tagging_) t->SetDeadline(deadline);
}

void SyncerNodeTopology::Stop() {
  if (stopped_) return;
  stopped_ = true;
  // In parallel: the informer, the streams and the inventory each end within about a second.
  std::vector<std::thread> stops;
  stops.emplace_back([this] { controller_->Stop(); });
  for (auto& v : vms_) stops.emplace_back([c = v.get()] { c->Stop(); });
  if (hosts_) stops.emplace_back([this] { hosts_->Stop(); });
  for (std::thread& t : stops) t.join();
  events_->Shutdown(absl::Seconds(1));
}

}  // namespace ccm::app
