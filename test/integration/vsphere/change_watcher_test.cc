// ChangeWatcher against the vCenter simulator: a datastore mounted on or taken away from a host
// is reported with its type; nothing is reported while nothing changes; after a lost session or a
// dropped stream it watches again and reports every type (what changed meanwhile is unknown);
// Stop() is prompt and removes what it made in vCenter.
#include "vsphere/change_watcher.h"

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "fixtures/vcsim/sim_client_options.h"
#include "fixtures/vcsim/simulator_suite.h"
#include "fixtures/vcsim/vcsim_process.h"
#include "gtest/gtest.h"
#include "testing/eventually.h"
#include "testing/static_credentials.h"
#include "vsphere/client.h"

namespace ccm::vsphere {
namespace {

constexpr char kSpec[] = R"({
  "datacenters": [{
    "name": "dc1",
    "clusters": [{"name": "c1", "hosts": 2}],
    "datastores": [{"name": "ds-shared", "clusters": ["c1"]},
                   {"name": "ds-one", "hosts": ["c1-host-0"]}]
  }]
})";

// The reports, in order; tests wait on them.
class Reports {
 public:
  void Add(const std::set<std::string>& types) {
    absl::MutexLock l(&mu_);
    all_.push_back(types);
  }
  // Waits for a report (after the first `skip`) naming exactly `types`.
  bool WaitFor(size_t skip, const std::set<std::string>& types) {
    absl::MutexLock l(&mu_);
    auto seen = [&]() ABSL_SHARED_LOCKS_REQUIRED(mu_) {
      for (size_t i = skip; i < all_.size(); ++i) {
        if (all_[i] == types) return true;
      }
      return false;
    };
    return mu_.AwaitWithTimeout(absl::Condition(&seen), absl::Seconds(20));
  }
  size_t size() {
    absl::MutexLock l(&mu_);
    return all_.size();
  }

 private:
  absl::Mutex mu_;
  std::vector<std::set<std::string>> all_ ABSL_GUARDED_BY(mu_);
};

class ChangeWatcherTest : public ccm::testing::SimulatorSuite<ChangeWatcherTest> {
 public:
  static std::vector<std::string> Specs() { return {kSpec}; }

 protected:
  void SetUpTest() override {
    ClientOptions o = ccm::testing::SimClientOptions(sim().info());
    o.retry_backoff = {absl::Milliseconds(20), absl::Milliseconds(100), 2.0, 0.0};
    client_ = std::make_unique<Client>(o, &creds_);
    ChangeWatcherOptions w;
    w.name = "test watcher";
    w.watched = {{"Datastore", {"host", "summary.accessible"}, false},
                 {"HostSystem", {"parent"}, false}};
    w.max_wait_seconds = 1;
    w.resync_backoff = {absl::Milliseconds(50), absl::Milliseconds(200), 2.0, 0.0};
    watcher_ = std::make_unique<ChangeWatcher>(
        *client_, w, [this](const std::set<std::string>& t) { reports_.Add(t); });
    watcher_->Start();
    ASSERT_TRUE(watcher_->WaitUntilWatching(absl::Seconds(30)));
  }
  void TearDown() override { watcher_->Stop(); }

  StaticCredentialSource creds_{Credentials{"user", Secret("pass")}};
  std::unique_ptr<Client> client_;
  Reports reports_;
  std::unique_ptr<ChangeWatcher> watcher_;
};

TEST_F(ChangeWatcherTest, MountChangesAreReportedAndQuietIsQuiet) {
  EXPECT_EQ(reports_.size(), 0u);  // the current state is not a change
  ASSERT_TRUE(sim().MountDatastore("ds-one", "c1-host-1", true).ok());
  EXPECT_TRUE(reports_.WaitFor(0, {"Datastore"}));
  const size_t after_mount = reports_.size();
  ASSERT_TRUE(sim().MountDatastore("ds-one", "c1-host-1", false).ok());
  EXPECT_TRUE(reports_.WaitFor(after_mount, {"Datastore"}));
  // Quiet: a few empty waits, no report.
  const size_t reported = reports_.size();
  const uint64_t waits = watcher_->stats().waits;
  ASSERT_TRUE(sim().ResetCounters().ok());
  ASSERT_TRUE(ccm::testing::Eventually([&] { return watcher_->stats().waits >= waits + 2; }));
  EXPECT_EQ(reports_.size(), reported);
  auto soap = sim().SoapCounters();
  ASSERT_TRUE(soap.ok());
  EXPECT_EQ(soap->size(), 1u) << "only WaitForUpdatesEx while idle";
}

TEST_F(ChangeWatcherTest, WatchesAgainAfterALostSessionAndReportsEverything) {
  ASSERT_TRUE(sim().InvalidateSessions().ok());
  EXPECT_TRUE(reports_.WaitFor(0, {"Datastore", "HostSystem"}));
  ASSERT_TRUE(watcher_->WaitUntilWatching(absl::Seconds(30)));
  EXPECT_GE(watcher_->stats().setups, 2u);
  const size_t before = reports_.size();
  ASSERT_TRUE(sim().MountDatastore("ds-one", "c1-host-1", true).ok());
  EXPECT_TRUE(reports_.WaitFor(before, {"Datastore"}));
  ASSERT_TRUE(sim().MountDatastore("ds-one", "c1-host-1", false).ok());
}

TEST_F(ChangeWatcherTest, WatchesAgainAfterADroppedStream) {
  ASSERT_TRUE(sim().SetFault("drop", -1, 0, "WaitForUpdatesEx").ok());
  EXPECT_TRUE(ccm::testing::Eventually([&] { return watcher_->stats().stream_errors >= 1; }));
  ASSERT_TRUE(sim().SetFault("none").ok());
  EXPECT_TRUE(reports_.WaitFor(0, {"Datastore", "HostSystem"}));
  EXPECT_TRUE(watcher_->WaitUntilWatching(absl::Seconds(30)));
}

TEST_F(ChangeWatcherTest, StopIsPromptAndCleansUp) {
  ASSERT_TRUE(sim().ResetCounters().ok());
  const absl::Time start = absl::Now();
  watcher_->Stop();
  EXPECT_LT(absl::Now() - start, absl::Seconds(1));
  auto soap = sim().SoapCounters();
  ASSERT_TRUE(soap.ok());
  EXPECT_EQ((*soap)["DestroyPropertyCollector"], 1);
  EXPECT_EQ((*soap)["DestroyView"], 2);  // one view per watched type
}

}  // namespace
}  // namespace ccm::vsphere
