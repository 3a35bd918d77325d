#include "vsphere/heartbeat.h"

#include <algorithm>

#include "common/logging.h"

namespace ccm::vsphere {

HeartbeatOptions HeartbeatOptions::For(absl::Duration hang_timeout) {
  HeartbeatOptions o;
  o.idle_after = o.probe_timeout = hang_timeout / 2;
  o.check_period = std::min(absl::Seconds(1), hang_timeout / 4);
  return o;
}

Heartbeat::Heartbeat(Client& client, HeartbeatOptions options)
    : client_(client), options_(options) {}

Heartbeat::~Heartbeat() { Stop(); }

void Heartbeat::Start() {
  if (thread_.joinable() || stop_.HasBeenNotified()) return;
  thread_ = std::thread([this] { Run(); });
}

void Heartbeat::Stop() {
  if (!stop_.HasBeenNotified()) stop_.Notify();
  if (thread_.joinable()) thread_.join();
}

void Heartbeat::Run() {
  absl::Time quiet_since = absl::Now();  // the last answer, or the last probe's end
  while (!stop_.WaitForNotificationWithTimeout(options_.check_period)) {
    quiet_since = std::max(quiet_since, client_.answers().last_answer());
    if (absl::Now() - quiet_since < options_.idle_after) continue;
    if (client_.answers().ordinary_in_flight() > 0) continue;  // that request tells already
    ++probes_;
    absl::Status s = client_.Probe(options_.probe_timeout);
    if (!s.ok()) VLOG(1, "vCenter {}: heartbeat: {}", client_.options().url, s);
    quiet_since = absl::Now();
  }
}

}  // namespace ccm::vsphere
