#pragma once
// Controller mode in one call, for the binary's BuildCsiServiceSet seam and the tests: the
// backend from csi-vsphere.conf, started, the Controller service on it, and Probe's readiness
// ("every vCenter session up, its VM cache synced, the datastore inventory loaded").

#include <functional>
#include <memory>

#include "absl/status/statusor.h"
#include "cloud/config/config.h"
#include "csi/controller/controller_backend.h"
#include "csi/proto/csi.grpc.pb.h"

namespace ccm::csi {

struct ControllerPlugin {
  std::unique_ptr<::csi::v1::Controller::Service> service;
  // Probe: true when ready; false (the reason logged at -v 2) while vCenter sessions log in and
  // caches load, or while a vCenter is unreachable.
  std::function<absl::StatusOr<bool>()> ready;
  std::shared_ptr<ControllerBackend> backend;  // shared with `service` and `ready`
};

// Errors: the configuration cannot be served (e.g. credentials from a Kubernetes Secret), with a
// message saying what to change. Connecting happens in the background: an unreachable vCenter
// is not an error here, Probe says not ready.
absl::StatusOr<ControllerPlugin> StartControllerPlugin(const cloud::Config& config,
                                                       BackendOptions options = {});

}  // namespace ccm::csi
