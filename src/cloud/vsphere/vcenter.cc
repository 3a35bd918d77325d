#include "cloud/vsphere/vcenter.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace ccm::cloud {

std::string SdkUrl(const VirtualCenterConfig& vc) {
  std::string host = vc.server;
  if (absl::StrContains(host, ':') && !absl::StartsWith(host, "["))
    host = absl::StrCat("[", host, "]");
  return absl::StrCat("https://", host, ":", vc.port, "/sdk");
}

vsphere::ClientOptions ClientOptionsFor(const VirtualCenterConfig& vc) {
  vsphere::ClientOptions co;
  co.url = SdkUrl(vc);
  co.server = vc.server;
  co.tls.insecure = vc.insecure_flag;
  co.tls.ca_file = vc.ca_file;
  co.tls.thumbprint = vc.thumbprint;
  co.soap_roundtrip_count = vc.soap_roundtrip_count;
  return co;
}

VCenter::VCenter(const VirtualCenterConfig& config, vsphere::CredentialSource* creds,
                 VCenterOptions options)
    : config_(config), creds_(creds) {
  vsphere::ClientOptions co = ClientOptionsFor(config);
  co.observer = options.observer;
  co.clock = options.clock;
  co.answer_within = options.hang_timeout;
  if (!options.user_agent.empty()) co.user_agent = options.user_agent;
  client_ = std::make_unique<vsphere::Client>(co, creds);

  vsphere::InventoryCacheOptions io;
  io.datacenters = config.datacenters;
  io.max_wait_seconds = options.max_wait_seconds;
  io.clock = options.clock;
  io.vm_disks = options.vm_disks;
  inventory_ = std::make_unique<vsphere::InventoryCache>(*client_, io);

  vsphere::TaggingOptions to;
  to.server = config.server;
  to.url = co.url;
  to.http.tls = co.tls;
  to.http.user_agent = co.user_agent;
  tagging_ = std::make_unique<vsphere::TaggingClient>(to, *creds);
  ancestry_ =
      std::make_unique<vsphere::AncestryResolver>(*client_, absl::Minutes(10), options.clock);
  topology_ = std::make_unique<TopologyCache>(*ancestry_, *tagging_, *inventory_, options.tag_ttl,
                                              options.clock);
  heartbeat_ = std::make_unique<vsphere::Heartbeat>(
      *client_, vsphere::HeartbeatOptions::For(options.hang_timeout));
}

VCenter::~VCenter() { Stop(); }

void VCenter::Start() {
  inventory_->Start();
  heartbeat_->Start();
  // New credentials: the stream's long wait runs on the old session; end it so the cache logs in
  // with the new ones now.
  if (creds_ != nullptr && creds_subscription_ == 0) {
    creds_subscription_ = creds_->Subscribe([this] { inventory_->Interrupt(); });
  }
}

void VCenter::SetDeadline(absl::Time deadline) {
  client_->SetDeadline(deadline);
  tagging_->SetDeadline(deadline);
}

void VCenter::Stop() {
  if (stopped_) return;
  stopped_ = true;
  SetDeadline(absl::Now() + kStopBudget);
  if (creds_subscription_ != 0) creds_->Unsubscribe(creds_subscription_);
  heartbeat_->Stop();
  inventory_->Stop();
  (void)tagging_->Logout();
  (void)client_->Logout();
}

absl::Status VCenter::Health() const {
  if (absl::Status answering = client_->Answering(); !answering.ok()) return answering;
  auto session = client_->session_status();
  if (session.state == vsphere::SessionState::kLoginFailed) {
    return absl::UnavailableError(absl::StrCat(
        "vCenter ", config_.server, ": login failed: ", session.last_login_error.message()));
  }
  auto stats = inventory_->stats();
  if (!stats.synced) {
    return absl::UnavailableError(
        absl::StrCat("vCenter ", config_.server, ": inventory not synced",
                     stats.last_error.ok() ? "" : absl::StrCat(": ", stats.last_error.message())));
  }
  return absl::OkStatus();
}

}  // namespace ccm::cloud
