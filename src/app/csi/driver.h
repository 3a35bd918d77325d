#pragma once
// vsphere-csi-driver's wiring: options -> the services one process serves -> the gRPC server
// (and, in controller mode, the HTTP /metrics + /healthz server) -> run until told to stop.
//
// The seam for the Controller and Node services is BuildCsiServiceSet: it is the one place that
// decides, per mode, what is served and how readiness is judged (the syncer mode does not serve
// CSI: csi_syncer.h).

#include <functional>
#include <map>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/synchronization/notification.h"
#include "app/csi/feature_states_watch.h"
#include "app/csi/options.h"
#include "cloud/config/config.h"
#include "cloud/credentials/credential_store.h"
#include "cloud/vsphere/vcenter_status.h"
#include "common/metrics.h"
#include "csi/proto/csi.grpc.pb.h"

namespace ccm::app {

inline constexpr char kCsiVersion[] = CCM_VERSION;
// On SIGTERM, how long vCenter calls under way (and new ones) may still take.
inline constexpr absl::Duration kVCenterStopBudget = absl::Milliseconds(1500);

// What one mode contributes besides Identity.
struct CsiServiceSet {
  std::unique_ptr<::csi::v1::Controller::Service> controller;
  std::unique_ptr<::csi::v1::Node::Service> node;
  // Probe's answer (identity_service.h); null = ready once serving.
  std::function<absl::StatusOr<bool>()> ready;
  // Controller mode: each vCenter's state (the /healthz checks "vcenter-<label>") and the
  // recorder of its Events; null in node mode.
  std::shared_ptr<cloud::VCenterStatus> vcenters;
  std::shared_ptr<kube::EventRecorder> events;
  // Controller mode: the credentials of its vCenter sessions (passwords rotate through them).
  std::shared_ptr<cloud::CredentialStore> credentials;
  // Controller mode: bounds every vCenter call from now on (for the stop; issue 43).
  std::function<void(absl::Time)> set_vcenter_deadline;
  // Controller mode: bounds every Kubernetes request from now on (for the stop: an RPC writing
  // its operation record to a hung API server, an informer's list).
  std::function<void(absl::Time)> set_kube_deadline;
  // Node mode: the feature-state ConfigMap's watch (null without API access).
  std::shared_ptr<FeatureStateWatch> feature_watch;
  // Whether volumes and nodes carry topology (VOLUME_ACCESSIBILITY_CONSTRAINTS): only when
  // csi-vsphere.conf configures topology. Announced without it, the external-provisioner (v5+,
  // topology always on) fails every Immediate claim with "no available topology found", as no
  // node registers topology keys.
  bool accessibility_constraints = false;
};

// `config` is set in controller mode (csi-vsphere.conf, parsed), null in node mode (the node
// plugin holds no vCenter credentials). `env`: the process environment (node mode reads its
// variables, csi_node.h).
absl::StatusOr<CsiServiceSet> BuildCsiServiceSet(const CsiOptions& options,
                                                 const cloud::Config* config,
                                                 metrics::Registry* registry,
                                                 const std::map<std::string, std::string>& env);

// Runs the driver until `stop` is notified. Returns the process exit code: 0 after a clean
// stop, 1 when start-up fails (the reason is logged, naming what to fix) or when a changed
// csi-vsphere.conf needs a new process (config_reload.h).
int RunCsiDriver(const CsiOptions& options, const std::map<std::string, std::string>& env,
                 absl::Notification& stop);

}  // namespace ccm::app
