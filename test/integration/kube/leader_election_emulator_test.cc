// Two leader-election candidates over HTTPS against the Kubernetes API emulator, each with its own
// client and token, on the real clock with short durations (lease 4s, renew 2s, retry 0.5s).
#include <atomic>
#include <filesystem>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "fixtures/kube_emulator/kube_emulator.h"
#include "gtest/gtest.h"
#include "kube/client.h"
#include "kube/kube_lease_lock.h"
#include "kube/leader_election.h"
#include "testing/eventually.h"

namespace ccm::kube {
namespace {

constexpr char kNs[] = "kube-system";
constexpr char kLease[] = "cloud-controller-manager";
using ::ccm::testing::Eventually;

LeaderElectionConfig ShortConfig(const std::string& identity) {
  return {.identity = identity,
          .lease_duration = absl::Seconds(4),
          .renew_deadline = absl::Seconds(2),
          .retry_period = absl::Milliseconds(500)};
}

// One candidate process: its own kubeconfig (own token), client, lock and elector thread.
class Candidate {
 public:
  Candidate(testing::KubeEmulator& emulator, const std::string& dir, const std::string& identity)
      : identity_(identity) {
    const std::string path = absl::StrCat(dir, "/", identity, ".kubeconfig");
    testing::KubeconfigOptions ko;
    ko.token = "token-" + identity;
    EXPECT_TRUE(emulator.WriteKubeconfig(path, ko).ok());
    absl::StatusOr<Config> config = LoadKubeconfig(path);
    EXPECT_TRUE(config.ok()) << config.status();
    auto client = RestClient::New(*config);
    EXPECT_TRUE(client.ok()) << client.status();
    client_ = std::move(*client);
    lock_ = std::make_unique<KubeLeaseLock>(*client_, kNs, kLease);
    LeaderCallbacks cb;
    cb.on_started_leading = [this](const absl::Notification& stop) {
      started_at_ = absl::Now();
      stop.WaitForNotification();
    };
    cb.on_stopped_leading = [this] { stopped_at_ = absl::Now(); };
    auto elector =
        LeaderElector::New(ShortConfig(identity), *lock_, cb, Clock::Real(), Random::Real());
    EXPECT_TRUE(elector.ok()) << elector.status();
    elector_ = std::move(*elector);
    thread_ = std::thread([this] { elector_->Run(stop_); });
  }
  ~Candidate() { Stop(); }

  void Stop() {
    if (!stop_.HasBeenNotified()) stop_.Notify();
    if (thread_.joinable()) thread_.join();
  }
  bool leading() const { return elector_->IsLeader(); }
  bool lost() const { return elector_->Lost(); }
  // The holder of the lease as this candidate last read it ("" before its first attempt).
  std::string observed_leader() const { return elector_->GetLeader(); }
  const std::string& identity() const { return identity_; }
  std::optional<absl::Time> started_at() const { return started_at_; }
  std::optional<absl::Time> stopped_at() const { return stopped_at_; }

 private:
  std::string identity_;
  std::unique_ptr<RestClient> client_;
  std::unique_ptr<KubeLeaseLock> lock_;
  std::unique_ptr<LeaderElector> elector_;
  std::atomic<std::optional<absl::Time>> started_at_, stopped_at_;
  absl::Notification stop_;
  std::thread thread_;
};

// Samples both candidates and records whether both ever led at the same time.
class OverlapMonitor {
 public:
  OverlapMonitor(const Candidate& a, const Candidate& b)
      : thread_([this, &a, &b] {
          while (!done_.HasBeenNotified()) {
            if (a.leading() && b.leading()) overlap_ = true;
            done_.WaitForNotificationWithTimeout(absl::Milliseconds(5));
          }
        }) {}
  ~OverlapMonitor() { Finish(); }
  bool Finish() {
    if (!done_.HasBeenNotified()) done_.Notify();
    if (thread_.joinable()) thread_.join();
    return overlap_;
  }

 private:
  absl::Notification done_;
  std::atomic<bool> overlap_{false};
  std::thread thread_;
};

class LeaderElectionEmulatorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = absl::StrCat(::testing::TempDir(), "/leader_election_emulator_", getpid());
    std::filesystem::create_directories(dir_);
    testing::KubeEmulatorOptions o;
    o.tokens = {"token-a", "token-b"};
    absl::StatusOr<std::string> url = emulator_.Start(o);
    ASSERT_TRUE(url.ok()) << url.status();
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  nlohmann::json Lease() {
    absl::StatusOr<nlohmann::json> l = emulator_.Get("leases", kNs, kLease);
    EXPECT_TRUE(l.ok()) << l.status();
    return l.ok() ? *l : nlohmann::json();
  }

  testing::KubeEmulator emulator_;
  std::string dir_;
};

TEST_F(LeaderElectionEmulatorTest, OneLeadsAndTheOtherTakesOverWhenItStopsRenewing) {
  auto a = std::make_unique<Candidate>(emulator_, dir_, "a");
  auto b = std::make_unique<Candidate>(emulator_, dir_, "b");
  OverlapMonitor monitor(*a, *b);
  ASSERT_TRUE(Eventually([&] { return a->leading() || b->leading(); }));
  // Several renewals (one per 0.5s retry period): the lease's renewTime moves, its holder stays.
  const std::string holder = a->leading() ? a->identity() : b->identity();
  std::set<std::string> renew_times;
  bool holder_changed = false;
  ASSERT_TRUE(Eventually(
      [&] {
        const nlohmann::json spec = Lease().value("spec", nlohmann::json::object());
        if (spec.value("holderIdentity", "") != holder) holder_changed = true;
        renew_times.insert(spec.value("renewTime", ""));
        return renew_times.size() >= 4;  // the first one seen and three renewals after it
      },
      absl::Seconds(20), absl::Milliseconds(50)));
  EXPECT_FALSE(holder_changed);
  Candidate& leader = a->leading() ? *a : *b;
  Candidate& other = a->leading() ? *b : *a;
  ASSERT_TRUE(leader.leading());
  ASSERT_FALSE(other.leading());
  EXPECT_EQ(Lease()["spec"]["holderIdentity"], leader.identity());
  EXPECT_EQ(Lease()["spec"]["leaseDurationSeconds"], 4);
  EXPECT_EQ(Lease()["spec"]["leaseTransitions"], 0);

  // Cut the leader off the API server (its token is revoked): it cannot renew any more.
  const absl::Time cut = absl::Now();
  emulator_.SetTokens({"token-" + other.identity()});
  ASSERT_TRUE(Eventually([&] { return leader.lost(); }));
  ASSERT_TRUE(leader.stopped_at().has_value());
  // Lost after RenewDeadline of failed renewals (2s, + up to one retry period before it).
  EXPECT_LE(*leader.stopped_at() - cut,
            absl::Seconds(2) + absl::Milliseconds(500) + absl::Seconds(2));  // scheduling slack
  // started_at is set on the leading thread, just after the elector reports leading.
  ASSERT_TRUE(Eventually([&] { return other.started_at().has_value(); }));
  // The other waits for the lease to expire on its own clock (4s after it last saw a renewal),
  // and takes it within a lease duration plus a jittered retry period of the last renewal.
  EXPECT_GE(*other.started_at(), *leader.stopped_at());
  EXPECT_LE(*other.started_at() - cut,
            absl::Seconds(4) + absl::Milliseconds(500) * 2.2 + absl::Seconds(2));
  EXPECT_FALSE(monitor.Finish()) << "two candidates led at the same time";
  const nlohmann::json lease = Lease();
  EXPECT_EQ(lease["spec"]["holderIdentity"], other.identity());
  EXPECT_EQ(lease["spec"]["leaseTransitions"], 1);
}

TEST_F(LeaderElectionEmulatorTest, ReleaseOnShutdownHandsOverAtOnce) {
  auto a = std::make_unique<Candidate>(emulator_, dir_, "a");
  ASSERT_TRUE(Eventually([&] { return a->leading(); }));
  auto b = std::make_unique<Candidate>(emulator_, dir_, "b");
  // b has tried at least once and found the lease held by a: without a release it would wait
  // for the 4s lease duration to pass.
  ASSERT_TRUE(Eventually([&] { return b->observed_leader() == "a"; }));
  ASSERT_FALSE(b->leading());
  const absl::Time stop = absl::Now();
  a->Stop();  // releases: empty holder, 1s lease
  ASSERT_TRUE(Eventually([&] { return b->leading(); }));
  // Well before the 4s lease duration: the free lease is taken at b's next retry.
  EXPECT_LT(absl::Now() - stop, absl::Seconds(3));
  const nlohmann::json lease = Lease();
  EXPECT_EQ(lease["spec"]["holderIdentity"], "b");
  EXPECT_EQ(lease["spec"]["leaseTransitions"], 1);
}

}  // namespace
}  // namespace ccm::kube
