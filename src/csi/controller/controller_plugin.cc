#include "csi/controller/controller_plugin.h"

#include "common/logging.h"
#include "common/status_macros.h"
#include "csi/controller/controller_service.h"

namespace ccm::csi {

absl::StatusOr<ControllerPlugin> StartControllerPlugin(const cloud::Config& config,
                                                       BackendOptions options) {
  CCM_ASSIGN_OR_RETURN(std::unique_ptr<ControllerBackend> created,
                       ControllerBackend::Create(config, std::move(options)));
  std::shared_ptr<ControllerBackend> backend = std::move(created);
  CCM_RETURN_IF_ERROR(backend->Start());
  ControllerPlugin plugin;
  plugin.backend = backend;
  plugin.service = std::make_unique<ControllerService>(backend);
  plugin.ready = [backend]() -> absl::StatusOr<bool> {
    std::string why;
    if (backend->Ready(&why)) return true;
    VLOG(2, "controller not ready: {}", why);
    return false;
  };
  return plugin;
}

}  // namespace ccm::csi
