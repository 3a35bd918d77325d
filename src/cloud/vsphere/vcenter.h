#pragma once
// One configured vCenter as the provider uses it: a SOAP session, the VM inventory cache kept
// current by WaitForUpdatesEx, the REST tagging session, and the topology cache (ancestors and
// their tags). Built from a VirtualCenterConfig; credentials come from the CredentialSource.

#include <memory>
#include <string>

#include "cloud/config/config.h"
#include "cloud/vsphere/topology_cache.h"
#include "common/clock.h"
#include "vsphere/client.h"
#include "vsphere/credential_source.h"
#include "vsphere/heartbeat.h"
#include "vsphere/inventory_cache.h"
#include "vsphere/tagging.h"

namespace ccm::cloud {

inline constexpr absl::Duration kDefaultHangTimeout = absl::Seconds(30);

struct VCenterOptions {
  vsphere::RequestObserver observer;  // metrics hook for SOAP round trips (optional)
  Clock* clock = nullptr;             // null: real clock
  int max_wait_seconds = vsphere::kStreamMaxWaitSeconds;  // the inventory stream's WaitForUpdatesEx
  absl::Duration tag_ttl = absl::Minutes(10);
  // A vCenter that answers nothing for this long is "not answering" in Health() (issue 43):
  // requests waiting longer (vsphere::AnswerTracker), a quiet vCenter probed (vsphere::Heartbeat).
  absl::Duration hang_timeout = kDefaultHangTimeout;
  // The inventory also follows the VMs' First Class Disks (the CSI controller's attachments).
  bool vm_disks = false;
  // The User-Agent of its SOAP and REST sessions; empty: the client's default (the CPI's).
  std::string user_agent;
};

class VCenter {
 public:
  VCenter(const VirtualCenterConfig& config, vsphere::CredentialSource* creds,
          VCenterOptions options = {});
  ~VCenter();  // Stop()
  VCenter(const VCenter&) = delete;
  VCenter& operator=(const VCenter&) = delete;

  // Starts the inventory cache (logs in on its thread). Returns at once.
  void Start();
  // Stops the cache and logs out of SOAP and REST, best effort and bounded whatever vCenter
  // does (issue 43): the clean-up gets kStopBudget, or what is left of an earlier SetDeadline.
  // Final: the object is not started again.
  void Stop();
  // Every vCenter call of this object (and of the clients that share its SOAP client, e.g. CNS)
  // ends by `deadline` from now on: for a process that stops, set on every vCenter before
  // stopping what uses them, so that no call on a hung vCenter holds the stop.
  void SetDeadline(absl::Time deadline);
  static constexpr absl::Duration kStopBudget = absl::Seconds(2);

  const VirtualCenterConfig& config() const { return config_; }
  const std::string& label() const { return config_.label; }
  vsphere::Client& client() { return *client_; }
  vsphere::InventoryCache& inventory() { return *inventory_; }
  vsphere::TaggingClient& tagging() { return *tagging_; }
  TopologyCache& topology() { return *topology_; }
  // OK when vCenter answers (vsphere::AnswerTracker: no request waited too long), the session
  // works and the inventory is synced; the error says what is wrong.
  absl::Status Health() const;

 private:
  VirtualCenterConfig config_;
  std::unique_ptr<vsphere::Client> client_;
  std::unique_ptr<vsphere::InventoryCache> inventory_;
  std::unique_ptr<vsphere::TaggingClient> tagging_;
  std::unique_ptr<vsphere::AncestryResolver> ancestry_;
  std::unique_ptr<TopologyCache> topology_;
  std::unique_ptr<vsphere::Heartbeat> heartbeat_;
  bool stopped_ = false;
  vsphere::CredentialSource* creds_ = nullptr;
  int creds_subscription_ = 0;
};

// "https://<server>:<port>/sdk", with IPv6 literals bracketed.
std::string SdkUrl(const VirtualCenterConfig& vc);

// The SOAP client options of a configured vCenter: URL, credential key, TLS, soap-roundtrip-count
// (every vCenter client of both binaries starts from these).
vsphere::ClientOptions ClientOptionsFor(const VirtualCenterConfig& vc);

}  // namespace ccm::cloud
