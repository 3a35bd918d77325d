#pragma once
// Test environment for the controllers: the in-process API emulator, a RestClient on it (wrapped
// to record delete options), the shared Node informer, an event recorder writing to the
// emulator, FakeInstances and a FakeClock for the controllers' schedules and backoff.

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "common/metrics.h"
#include "fixtures/kube_emulator/kube_emulator.h"
#include "kube/client.h"
#include "kube/event_recorder.h"
#include "kube/informer.h"
#include "kube/kube_event_sink.h"
#include "kube/objects.h"
#include "testing/eventually.h"
#include "testing/fake_clock.h"
#include "testing/fake_instances.h"

namespace ccm::controllers::testing {

// Forwards to another Client and remembers the options of every Delete.
class RecordingClient final : public kube::Client {
 public:
  explicit RecordingClient(kube::Client& inner) : inner_(inner) {}
  absl::StatusOr<kube::Json> Get(const kube::Resource& r, absl::string_view ns,
                                 absl::string_view name) override {
    return inner_.Get(r, ns, name);
  }
  absl::StatusOr<kube::ListResult> List(const kube::Resource& r, absl::string_view ns,
                                        const kube::ListOptions& o) override {
    return inner_.List(r, ns, o);
  }
  absl::Status Watch(const kube::Resource& r, absl::string_view ns, const kube::WatchOptions& o,
                     const std::function<bool(kube::WatchEvent&)>& on_event,
                     const std::atomic<bool>* cancel) override {
    return inner_.Watch(r, ns, o, on_event, cancel);
  }
  absl::StatusOr<kube::Json> Create(const kube::Resource& r, absl::string_view ns,
                                    const kube::Json& obj) override {
    return inner_.Create(r, ns, obj);
  }
  absl::StatusOr<kube::Json> Update(const kube::Resource& r, const kube::Json& obj,
                                    absl::string_view sub) override {
    return inner_.Update(r, obj, sub);
  }
  absl::StatusOr<kube::Json> Patch(const kube::Resource& r, absl::string_view ns,
                                   absl::string_view name, kube::PatchType type,
                                   const kube::Json& patch, absl::string_view sub) override {
    return inner_.Patch(r, ns, name, type, patch, sub);
  }
  absl::Status Delete(const kube::Resource& r, absl::string_view ns, absl::string_view name,
                      const kube::DeleteOptions& opts) override {
    {
      absl::MutexLock l(&mu_);
      deletes_.push_back(opts);
    }
    return inner_.Delete(r, ns, name, opts);
  }
  std::vector<kube::DeleteOptions> deletes() const {
    absl::MutexLock l(&mu_);
    return deletes_;
  }

 private:
  kube::Client& inner_;
  mutable absl::Mutex mu_;
  std::vector<kube::DeleteOptions> deletes_ ABSL_GUARDED_BY(mu_);
};

class Env {
 public:
  Env();
  ~Env();
  // Starts the emulator, the client, the informer (synced) and the recorder.
  absl::Status Init();

  // A Node as a kubelet with --cloud-provider=external registers it: uninitialized taint,
  // systemUUID, Ready condition as given. Created through the emulator.
  kube::Json CreateKubeletNode(const std::string& name, bool ready,
                               const std::string& provider_id = "");
  kube::Json GetNode(const std::string& name);  // null Json when absent
  // Read-modify-write of a Node directly in the emulator (another writer).
  void EditNode(const std::string& name, const std::function<void(kube::Json&)>& edit);
  static void SetReady(kube::Json& node, bool ready);
  // Events about `node_name` in the emulator, after flushing the recorder.
  std::vector<kube::EventInfo> EventsFor(const std::string& node_name);
  // Waits (real time) until the informer's store satisfies `pred` for the node.
  bool StoreSees(const std::string& name, const std::function<bool(const kube::Json&)>& pred);

  ccm::testing::KubeEmulator emulator;
  cloud::FakeInstances instances;
  FakeClock clock;
  metrics::Registry registry;
  std::unique_ptr<kube::Client> rest;
  std::unique_ptr<RecordingClient> client;
  std::unique_ptr<kube::SharedInformerFactory> factory;
  kube::Informer* nodes = nullptr;
  std::unique_ptr<kube::KubeEventSink> sink;
  std::unique_ptr<kube::EventRecorder> recorder;

 private:
  std::string dir_;
};

// The shared real-time wait for results produced by other threads (test/testing/eventually.h).
using ::ccm::testing::Eventually;

// Metadata a VM of `name` with UUID `uuid` yields.
cloud::InstanceMetadata VmMetadata(const std::string& name, const std::string& uuid,
                                   const std::string& ip);

}  // namespace ccm::controllers::testing
