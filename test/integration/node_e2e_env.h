#pragma once
// The node controllers of vsphere-cloud-controller-manager wired in-process by the binary's own
// app::ControllerSet (VCenters + VSphereInstances + Node informer + EventRecorder +
// NodeController + NodeLifecycleController + the inventory listener that refreshes a Node's
// addresses when its VM changes), against the real vCenter simulator and an in-process API
// server emulator. The controllers run on a FakeClock so lifecycle periods, refresh periods and
// work-queue backoff move only when the test advances time; vCenter sessions, inventory caches,
// the informer and the recorder run on real time (they are I/O, not schedules under test).

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "app/ccm/controller_set.h"
#include "cloud/config/config.h"
#include "cloud/vsphere/vcenter.h"
#include "cloud/vsphere/vsphere_instances.h"
#include "common/clock.h"
#include "common/metrics.h"
#include "controllers/node_controller.h"
#include "controllers/node_lifecycle_controller.h"
#include "fixtures/kube_emulator/kube_emulator.h"
#include "fixtures/vcsim/vcsim_process.h"
#include "kube/client.h"
#include "kube/event_recorder.h"
#include "kube/informer.h"
#include "kube/objects.h"
#include "testing/eventually.h"
#include "testing/fake_clock.h"
#include "vsphere/credential_source.h"

namespace ccm::integration {

// Forwards to another Client; calls `after_patch` (if set) after every successful PATCH, on the
// caller's thread, so a test can act as another writer at an exact point of the controller's
// sequence (between its status PATCH and its PUT).
class HookClient final : public kube::Client {
 public:
  using PatchHook = std::function<void(absl::string_view name, absl::string_view subresource)>;
  explicit HookClient(kube::Client& inner) : inner_(inner) {}
  void SetAfterPatch(PatchHook hook);

  absl::StatusOr<kube::Json> Get(const kube::Resource& r, absl::string_view ns,
                                 absl::string_view name) override;
  absl::StatusOr<kube::ListResult> List(const kube::Resource& r, absl::string_view ns,
                                        const kube::ListOptions& o) override;
  absl::Status Watch(const kube::Resource& r, absl::string_view ns, const kube::WatchOptions& o,
                     const std::function<bool(kube::WatchEvent&)>& on_event,
                     const std::atomic<bool>* cancel) override;
  absl::StatusOr<kube::Json> Create(const kube::Resource& r, absl::string_view ns,
                                    const kube::Json& obj) override;
  absl::StatusOr<kube::Json> Update(const kube::Resource& r, const kube::Json& obj,
                                    absl::string_view sub) override;
  absl::StatusOr<kube::Json> Patch(const kube::Resource& r, absl::string_view ns,
                                   absl::string_view name, kube::PatchType type,
                                   const kube::Json& patch, absl::string_view sub) override;
  absl::Status Delete(const kube::Resource& r, absl::string_view ns, absl::string_view name,
                      const kube::DeleteOptions& opts) override;

 private:
  kube::Client& inner_;
  absl::Mutex mu_;
  PatchHook after_patch_ ABSL_GUARDED_BY(mu_);
};

struct CcmOptions {
  int concurrent_node_syncs = 2;
  absl::Duration node_status_update_frequency = absl::Minutes(5);
  absl::Duration node_monitor_period = absl::Seconds(5);
  // Short, so a silent fault (a blackhole, a session ended on the server) is noticed in seconds.
  int vcenter_max_wait_seconds = 2;
  // Short, so a hang is reported in seconds (--vcenter-hang-timeout).
  absl::Duration vcenter_hang_timeout = absl::Seconds(2);
};

// The kube side (emulator + client) and the controllers over the given vCenter config.
class NodeE2eEnv {
 public:
  NodeE2eEnv();
  ~NodeE2eEnv();  // Stop()

  // Starts the emulator, a client on it, every vCenter of `config` (waits for their inventory
  // caches to sync), the informer, recorder and both controllers.
  absl::Status Start(const cloud::Config& config, vsphere::CredentialSource& creds,
                     CcmOptions options = {});
  void Stop();  // idempotent; ControllerSet::Stop (Events flushed), then the emulator

  // A Node as kubelet --cloud-provider=external registers it: name (= guest hostname),
  // systemUUID in SMBIOS byte order (from the VM's BIOS UUID), the uninitialized taint, a Ready
  // condition, kubernetes.io/hostname label and optional annotations.
  absl::StatusOr<kube::Json> RegisterKubeletNode(
      const std::string& name, const std::string& vm_bios_uuid, bool ready = true,
      const std::map<std::string, std::string>& annotations = {});
  kube::Json GetNode(const std::string& name) const;  // null Json when absent
  // Read-modify-write directly in the emulator (a kubelet or another writer).
  absl::Status EditNode(const std::string& name, const std::function<void(kube::Json&)>& edit);
  static void SetReady(kube::Json& node, bool ready);
  // Waits (real time) until the informer's store satisfies `pred` for `name`.
  bool StoreSees(const std::string& name, const std::function<bool(const kube::Json&)>& pred,
                 absl::Duration timeout = absl::Seconds(20)) const;
  // Waits (real time) until the emulator's copy satisfies `pred` (absent nodes are null Json).
  bool NodeBecomes(const std::string& name, const std::function<bool(const kube::Json&)>& pred,
                   absl::Duration timeout = absl::Seconds(20)) const;
  // Waits until the Node has a providerID and no uninitialized taint. Moves the FakeClock by 5 ms
  // per 5 ms poll, so a sync that failed on a transient error is retried after its backoff.
  bool Initialised(const std::string& name, absl::Duration timeout = absl::Seconds(20));

  // One node-monitor period on the FakeClock: waits for the previous pass, advances, waits for
  // the pass that the advance started. False if it did not complete within `timeout` (real).
  bool LifecyclePeriod(absl::Duration timeout = absl::Seconds(20));
  // Events about `node` in the emulator now.
  std::vector<kube::EventInfo> EventsFor(const std::string& node) const;
  // Waits (real time) until the emulator has an Event about `node` of `type` and `reason` whose
  // message contains `text`. Meanwhile advances the recorder's own FakeClock, so an Event whose
  // first POST failed is re-sent at once instead of after the recorder's 10 s retry interval.
  bool WaitForEvent(const std::string& node, const std::string& type, const std::string& reason,
                    const std::string& text, absl::Duration timeout = absl::Seconds(20));

  ccm::testing::KubeEmulator& emulator() { return emulator_; }
  HookClient& client() { return *client_; }
  kube::Informer& node_informer() { return set_->node_informer(); }
  FakeClock& clock() { return clock_; }
  metrics::Registry& registry() { return registry_; }
  cloud::VSphereInstances& instances() { return set_->instances(); }
  cloud::VCenter& vcenter(size_t i) { return *set_->vcenters()[i]; }
  controllers::NodeController& node_controller() { return *set_->node_controller(); }
  controllers::NodeLifecycleController& lifecycle() { return *set_->lifecycle(); }
  const CcmOptions& options() const { return options_; }

 private:
  std::string dir_;
  ccm::testing::KubeEmulator emulator_;
  FakeClock clock_;
  FakeClock recorder_clock_;  // apart from clock_: moving it must not start lifecycle passes
  metrics::Registry registry_;
  CcmOptions options_;
  cloud::Config config_;
  std::unique_ptr<kube::Client> rest_;
  std::unique_ptr<HookClient> client_;
  std::unique_ptr<app::ControllerSet> set_;
  bool stopped_ = false;
};

using ::ccm::testing::Eventually;  // test/testing/eventually.h

// A VirtualCenterConfig for the simulator (label, server, port, CA file).
cloud::VirtualCenterConfig VcConfig(const ccm::testing::VcsimProcess& sim,
                                    const std::string& label);
// The BIOS UUID of the simulator's VM `name` ("" if unknown).
std::string VmUuid(const ccm::testing::VcsimProcess& sim, const std::string& name);

}  // namespace ccm::integration
