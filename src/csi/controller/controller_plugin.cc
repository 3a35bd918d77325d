#include "csi/controller/controller_plugin.h"

#include "common/logging.h"
#include "common/status_macros.h"
#include "csi/controller/controller_service.h"
#include "kube/kube_event_sink.h"

namespace ccm::csi {

absl::StatusOr<ControllerPlugin> StartControllerPlugin(const cloud::Config& config,
                                                       BackendOptions options) {
  cloud::VCenterStatusOptions so;
  so.registry = options.registry;
  const std::string pod_name = options.pod_name, pod_namespace = options.csi_namespace;
  std::shared_ptr<kube::Client> kube = options.kube;
  CCM_ASSIGN_OR_RETURN(std::unique_ptr<ControllerBackend> created,
                       ControllerBackend::Create(config, std::move(options)));
  std::shared_ptr<ControllerBackend> backend = std::move(created);
  CCM_RETURN_IF_ERROR(backend->Start());
  ControllerPlugin plugin;
  plugin.backend = backend;
  plugin.service = std::make_unique<ControllerService>(backend);
  plugin.ready = [backend]() -> absl::StatusOr<bool> { return true; };
  if (kube != nullptr && !pod_name.empty()) {
    auto sink = std::make_shared<kube::KubeEventSink>(*kube);
    kube::EventRecorderOptions eo;
    eo.component = "vsphere-csi-controller";
    // The recorder keeps the sink (and the client) alive as long as it lives.
    plugin.events = std::shared_ptr<kube::EventRecorder>(
        new kube::EventRecorder(*sink, eo), [sink, kube](kube::EventRecorder* r) { delete r; });
    so.events = plugin.events.get();
    so.object = {"Pod", pod_namespace, pod_name, "", "v1", "", ""};
  }
  so.source = [b = backend.get()] { return b->VCenterHealth(); };
  plugin.vcenters = std::make_shared<cloud::VCenterStatus>(so);
  plugin.vcenters->Start();
  return plugin;
}

}  // namespace ccm::csi
