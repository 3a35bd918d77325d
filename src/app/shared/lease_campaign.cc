#include "app/shared/lease_campaign.h"

#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "common/clock.h"
#include "common/logging.h"
#include "common/random.h"

namespace ccm::app {
namespace {

std::string RandomSuffix() {
  static const char* kHex = "0123456789abcdef";
  std::string s;
  for (int i = 0; i < 8; ++i) s += kHex[static_cast<int>(Random::Real().Uniform() * 16) & 15];
  return s;
}

}  // namespace

std::string Hostname() {
  char buf[256] = {};
  gethostname(buf, sizeof(buf) - 1);
  return buf;
}

LeaseCampaign::LeaseCampaign(const kube::RestClient& client, const LeaseCampaignOptions& options)
    : options_(options),
      identity_(absl::StrCat(Hostname(), "_", RandomSuffix())),
      client_(client.WithOwnRateLimit("leader-election")),
      lock_(*client_, options.ns, options.name) {}

LeaseCampaign::~LeaseCampaign() {
  if (elector_) elector_->Shutdown();
}

absl::Status LeaseCampaign::MakeElector(kube::LeaderCallbacks callbacks) {
  kube::LeaderElectionConfig lc;
  lc.identity = identity_;
  lc.lease_duration = options_.lease_duration;
  lc.renew_deadline = options_.renew_deadline;
  lc.retry_period = options_.retry_period;
  auto e = kube::LeaderElector::New(lc, lock_, std::move(callbacks), Clock::Real(), Random::Real());
  if (!e.ok())
    return absl::Status(e.status().code(), absl::StrCat("leader election: ", e.status().message()));
  elector_ = *std::move(e);
  return absl::OkStatus();
}

bool LeaseCampaign::Run(const absl::Notification& stop) {
  LOG_INFO("attempting to acquire leader lease {}/{} as {}", options_.ns, options_.name, identity_);
  elector_->Run(stop);  // returns after stop (lease released) or loss
  const bool lost = elector_->Lost();
  elector_->Shutdown();
  return lost;
}

absl::Status LeaseCampaign::Check(absl::Duration tolerance) const {
  return elector_->Check(tolerance);
}

}  // namespace ccm::app
