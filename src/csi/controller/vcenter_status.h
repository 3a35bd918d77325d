#pragma once
// The controller's view of each vCenter (issue 20 item 2: a vCenter that is down affects its own
// volumes only). Probe reports the process's own health, so the livenessprobe sidecar never
// restarts the controller for an outage; what each vCenter's state is goes here instead:
//  - Current(): per vCenter OK, or why not (session, VM cache, datastore inventory), for the
//    /healthz checks "vcenter-<label>" (readiness, not liveness);
//  - the gauge vsphere_csi_vcenter_ready{vcenter} (1 usable, 0 not);
//  - on every change, a log line and, when the controller's Pod is known (POD_NAME and its
//    namespace), an Event on it: Warning VCenterUnavailable with the reason, Normal
//    VCenterAvailable when it is back. While the process starts, a vCenter that is still
//    connecting is not reported before `grace` has passed.
// Polls the backend's in-memory state every `period` (no vCenter request). Thread-safe.

#include <map>
#include <memory>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "common/metrics.h"
#include "kube/event_recorder.h"

namespace ccm::csi {

class ControllerBackend;

struct VCenterStatusOptions {
  metrics::Registry* registry = nullptr;  // optional
  kube::EventRecorder* events = nullptr;  // optional; with pod_name
  std::string pod_name, pod_namespace;
  absl::Duration period = absl::Seconds(5);
  absl::Duration grace = absl::Seconds(60);
};

class VCenterStatus {
 public:
  // `backend` must outlive this.
  VCenterStatus(ControllerBackend& backend, VCenterStatusOptions options);
  ~VCenterStatus();  // Stop()
  void Start();
  void Stop();
  // The last poll's states (polled at once when there was none yet).
  std::map<std::string, absl::Status> Current();
  // One poll now (tests, and Start's first).
  void Poll();

 private:
  void Report(const std::string& vcenter, const absl::Status& now);

  ControllerBackend& backend_;
  const VCenterStatusOptions options_;
  metrics::Family* gauge_ = nullptr;
  absl::Mutex mu_;
  std::map<std::string, absl::Status> last_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, bool> reported_ ABSL_GUARDED_BY(mu_);  // the state last reported
  bool polled_ ABSL_GUARDED_BY(mu_) = false;
  const absl::Time started_ = absl::Now();
  absl::Notification stop_;
  std::thread thread_;
};

}  // namespace ccm::csi
