#pragma once
// Each vCenter's state as an operator sees it (issue 20 item 2, issue 43): the process's own
// liveness never depends on vCenter (a restart cures no outage), so what each vCenter's state is
// goes here instead:
//  - Current(): per vCenter OK, or why not (not answering, session, caches), for the /healthz
//    checks "vcenter-<label>" (readiness, not liveness);
//  - a gauge `<gauge>{vcenter}` (1 usable, 0 not);
//  - on every change, a log line and, when an object is given (the controller's Pod, the CCM's
//    config object), an Event on it: Warning VCenterUnavailable with the reason, Normal
//    VCenterAvailable when it is back. While the process starts, a vCenter that is still
//    connecting is not reported before `grace` has passed (one that does not answer is).
// Polls `source` (in-memory state, no vCenter request) every `period`: a hung vCenter is
// reported within its AnswerTracker's bound plus `period`. Thread-safe.

#include <functional>
#include <map>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "common/metrics.h"
#include "kube/event_recorder.h"

namespace ccm::cloud {

struct VCenterStatusOptions {
  // Each vCenter's state by label (required).
  std::function<std::map<std::string, absl::Status>()> source;
  metrics::Registry* registry = nullptr;  // optional
  std::string gauge = "vsphere_csi_vcenter_ready";
  std::string gauge_help =
      "1 when the vCenter answers, its session is up, its VM cache synced and its datastores "
      "loaded.";
  kube::EventRecorder* events = nullptr;  // optional; with object.name
  kube::ObjectReference object;           // what the Events are about
  // What a vCenter that is not usable means for the rest, in the log and the Warning.
  std::string effect = "volumes of other vCenters are not affected";
  absl::Duration period = absl::Seconds(5);
  absl::Duration grace = absl::Seconds(60);
};

class VCenterStatus {
 public:
  explicit VCenterStatus(VCenterStatusOptions options);
  ~VCenterStatus();  // Stop()
  void Start();
  void Stop();
  // The last poll's states (polled at once when there was none yet).
  std::map<std::string, absl::Status> Current();
  // One poll now (tests, and Start's first).
  void Poll();

 private:
  void Report(const std::string& vcenter, const absl::Status& now);

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

}  // namespace ccm::cloud
