#pragma once
// Keeps a vCenter that is otherwise quiet asked something (issue 43), so that a hang is seen even
// when nothing else talks to it: the inventory stream's long poll returns only every
// maxWaitSeconds (120 s), and an idle cluster makes no other request. When vCenter has answered
// nothing for `idle_after` and no ordinary request is waiting, one unauthenticated
// RetrieveServiceContent (Client::Probe) with `probe_timeout` goes out; its time-out makes the
// client's AnswerTracker say "not answering". A busy client sends no probe at all.
//
// Cost: at most one cheap request per `idle_after` per vCenter, only while nothing else is
// answered. Thread-safe; Stop() returns within the client's deadline (VCenter::Stop sets one).

#include <atomic>
#include <cstdint>
#include <thread>

#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "vsphere/client.h"

namespace ccm::vsphere {

struct HeartbeatOptions {
  absl::Duration idle_after = absl::Seconds(15);
  absl::Duration probe_timeout = absl::Seconds(15);
  absl::Duration check_period = absl::Seconds(1);
  // Half of `hang_timeout` each: a hang is seen within it (ClientOptions::answer_within being
  // `hang_timeout` too), plus `check_period`.
  static HeartbeatOptions For(absl::Duration hang_timeout);
};

class Heartbeat {
 public:
  // `client` must outlive the heartbeat.
  Heartbeat(Client& client, HeartbeatOptions options = {});
  ~Heartbeat();  // Stop()
  Heartbeat(const Heartbeat&) = delete;
  Heartbeat& operator=(const Heartbeat&) = delete;

  void Start();
  void Stop();
  uint64_t probes() const { return probes_.load(); }

 private:
  void Run();

  Client& client_;
  const HeartbeatOptions options_;
  absl::Notification stop_;
  std::thread thread_;
  std::atomic<uint64_t> probes_{0};
};

}  // namespace ccm::vsphere
