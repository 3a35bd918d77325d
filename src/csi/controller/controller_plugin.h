#pragma once
// Controller mode in one call, for the binary's BuildCsiServiceSet seam and the tests: the
// backend from csi-vsphere.conf, started, the Controller service on it, Probe's readiness (the
// process's own health: ready once started, whatever the vCenters do) and the per-vCenter state
// (vcenter_status.h) for /healthz, metrics and Events.

#include <functional>
#include <memory>

#include "absl/status/statusor.h"
#include "cloud/config/config.h"
#include "cloud/vsphere/vcenter_status.h"
#include "csi/controller/controller_backend.h"
#include "csi/proto/csi.grpc.pb.h"
#include "kube/event_recorder.h"

namespace ccm::csi {

struct ControllerPlugin {
  std::unique_ptr<::csi::v1::Controller::Service> service;
  // Probe: true once the backend has started. A vCenter that is down affects its own volumes
  // only (they answer Unavailable); with several vCenters the others keep serving, and the
  // livenessprobe sidecar does not restart the controller in a loop during an outage.
  std::function<absl::StatusOr<bool>()> ready;
  std::shared_ptr<ControllerBackend> backend;      // shared with `service` and `ready`
  std::shared_ptr<cloud::VCenterStatus> vcenters;  // started; per-vCenter state
  std::shared_ptr<kube::EventRecorder> events;     // its Events (null without an API)
};

// Errors: the configuration cannot be served (e.g. credentials from a Kubernetes Secret), with a
// message saying what to change. Connecting happens in the background: an unreachable vCenter
// is not an error here, Probe says not ready.
absl::StatusOr<ControllerPlugin> StartControllerPlugin(const cloud::Config& config,
                                                       BackendOptions options = {});

}  // namespace ccm::csi
