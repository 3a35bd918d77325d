#pragma once
// The reference's TriggerCsiFullSync (triggercsifullsyncs.cns.vmware.com, v1alpha1, cluster
// scoped), with the feature state trigger-csi-fullsync on: the one instance "csifullsync" asks
// for a full sync when its spec.triggerSyncID becomes status.lastTriggerSyncID + 1, and its
// status tells how the last one went (inProgress, lastTriggerSyncID, lastRun/lastSuccessful
// start and end times, error). Events TriggerCsiFullSyncSucceeded / TriggerCsiFullSyncFailed on
// the instance, as the reference records them.
//
// Pure decision (DecideTrigger) apart from the controller (TriggerFullSyncController): an
// informer on the resource wakes one worker thread, which reads the instance, decides, writes
// the status with a whole-object update (the CRD has no status subresource) and runs the sync.
// Differences: the periodic full sync keeps its own timer (the reference bumps the instance's
// triggerSyncID instead, so its status also reflects periodic passes).

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "kube/client.h"
#include "kube/event_recorder.h"
#include "kube/informer.h"

namespace ccm::csi::syncer {

inline constexpr char kTriggerCsiFullSyncName[] = "csifullsync";
const kube::Resource& TriggerCsiFullSyncs();

struct TriggerState {
  std::string name;
  uint64_t spec_id = 0;  // spec.triggerSyncID
  uint64_t last_id = 0;  // status.lastTriggerSyncID
  bool in_progress = false;
};
struct TriggerDecision {
  enum class Action {
    kNone,         // nothing asked
    kRefuse,       // a Warning Event with `message`, nothing else
    kSkipRunning,  // a sync runs: lastTriggerSyncID = spec, Warning Event with `message`
    kRun,          // lastTriggerSyncID = spec, inProgress, then the sync
  };
  Action action = Action::kNone;
  std::string message;
};
TriggerDecision DecideTrigger(const TriggerState& s);
TriggerState TriggerStateOf(const kube::Json& obj);

class TriggerFullSyncController {
 public:
  // `full_sync`: one full sync, its error for the status. `events` may be null.
  TriggerFullSyncController(kube::Client& client, std::function<absl::Status()> full_sync,
                            kube::EventRecorder* events);
  ~TriggerFullSyncController();  // Stop()
  // Makes sure "csifullsync" exists (created with triggerSyncID 0) and is not left inProgress by
  // an earlier process, then follows it.
  absl::Status Start();
  void Stop();

 private:
  void Work();
  void ReconcileOnce();
  absl::Status WriteStatus(kube::Json obj);
  void Event(const kube::Json& obj, bool ok, const std::string& message);

  kube::Client& client_;
  std::function<absl::Status()> full_sync_;
  kube::EventRecorder* events_;
  kube::Informer informer_;
  absl::Mutex mu_;
  bool pending_ ABSL_GUARDED_BY(mu_) = false;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread worker_;
};

}  // namespace ccm::csi::syncer
