// The inventory cache against the vCenter simulator fixture: initial load and look-ups, power-off
// and destroy seen within a second through WaitForUpdatesEx, guest changes, resync after session
// invalidation and dropped connections, Unavailable (never NotFound) while broken, prompt Stop().
#include "vsphere/inventory_cache.h"

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "fixtures/vcsim/sim_client_options.h"
#include "fixtures/vcsim/simulator_suite.h"
#include "fixtures/vcsim/vcsim_process.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/fake_clock.h"
#include "testing/static_credentials.h"
#include "vsphere/client.h"
#include "vsphere/property_collector.h"

namespace ccm::vsphere {
namespace {

constexpr char kSpec[] = R"({
  "datacenters": [{
    "name": "dc1",
    "clusters": [{"name": "c1", "hosts": 2}],
    "vms": [
      {"name": "node-1", "cluster": "c1", "uuid": "422E4956-AD22-1139-6D72-59CC8F26BC90",
       "hostname": "node-1", "nics": [{"network": "VM Network", "ips": ["10.0.0.11", "fd00::11"]}]},
      {"name": "node-2", "cluster": "c1", "hostname": "node-2",
       "nics": [{"network": "VM Network", "ips": ["10.0.0.12"]},
                {"network": "Storage", "ips": ["10.0.0.12"]}]},
      {"name": "node-3", "cluster": "c1", "hostname": "dup", "nics": [{"ips": ["10.0.0.13"]}]},
      {"name": "node-4", "cluster": "c1", "hostname": "DUP", "nics": [{"ips": ["10.0.0.14"]}]},
      {"name": "node-5", "cluster": "c1", "hostname": "node-5", "nics": [{"ips": ["10.0.0.15"]}]}
    ]
  }, {
    "name": "dc2",
    "clusters": [{"name": "c2", "hosts": 1}],
    "vms": [{"name": "other-1", "cluster": "c2", "hostname": "other-1"}]
  }]
})";

// Records listener events; tests wait on them with a timeout.
class Events {
 public:
  void Add(const std::string& moid, VmChangeKind kind) {
    absl::MutexLock l(&mu_);
    events_.push_back({moid, kind});
  }
  bool WaitFor(const std::string& moid, VmChangeKind kind, absl::Duration timeout) {
    absl::MutexLock l(&mu_);
    auto seen = [&]() ABSL_SHARED_LOCKS_REQUIRED(mu_) {
      for (const auto& e : events_) {
        if (e.first == moid && e.second == kind) return true;
      }
      return false;
    };
    return mu_.AwaitWithTimeout(absl::Condition(&seen), timeout);
  }
  void Clear() {
    absl::MutexLock l(&mu_);
    events_.clear();
  }

 private:
  absl::Mutex mu_;
  std::vector<std::pair<std::string, VmChangeKind>> events_ ABSL_GUARDED_BY(mu_);
};

class InventoryCacheTest : public ccm::testing::SimulatorSuite<InventoryCacheTest> {
 public:
  static std::vector<std::string> Specs() { return {kSpec}; }

 protected:
  void SetUpTest() override {
    ClientOptions o = ccm::testing::SimClientOptions(sim().info());
    o.retry_backoff = {absl::Milliseconds(20), absl::Milliseconds(100), 2.0, 0.0};
    client_ = std::make_unique<Client>(o, &creds_);
  }
  std::unique_ptr<InventoryCache> StartCache(InventoryCacheOptions o = {}) {
    o.max_wait_seconds = 1;
    o.resync_backoff = {absl::Milliseconds(50), absl::Milliseconds(200), 2.0, 0.0};
    auto cache = std::make_unique<InventoryCache>(*client_, o);
    cache->AddListener([this](const std::string& moid, VmChangeKind k) { events_.Add(moid, k); });
    cache->Start();
    EXPECT_TRUE(cache->WaitForSync(absl::Seconds(30)));
    return cache;
  }
  std::string Moid(const std::string& name) {
    for (const auto& vm : sim().info().vms) {
      if (vm.name == name) return vm.moid;
    }
    ADD_FAILURE() << "no VM " << name;
    return "";
  }

  StaticCredentialSource creds_{Credentials{"user", Secret("pass")}};
  std::unique_ptr<Client> client_;
  Events events_;
};

TEST_F(InventoryCacheTest, LoadsAllDatacentersAndLooksUp) {
  auto cache = StartCache();
  EXPECT_TRUE(events_.WaitFor(Moid("other-1"), VmChangeKind::kAdded, absl::Seconds(5)));
  auto all = cache->Snapshot();
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_GE(all->size(), 5u);

  auto vm = cache->FindByUuid("422e4956-ad22-1139-6d72-59cc8f26bc90");
  ASSERT_TRUE(vm.ok()) << vm.status();
  EXPECT_EQ(vm->name, "node-1");
  EXPECT_EQ(vm->datacenter_name, "dc1");
  EXPECT_EQ(vm->moref.value, Moid("node-1"));
  EXPECT_TRUE(cache->FindByUuid("422E4956-AD22-1139-6D72-59CC8F26BC90").ok());

  auto dup = cache->FindByHostname("Dup");
  ASSERT_TRUE(dup.ok()) << dup.status();
  EXPECT_EQ(dup->size(), 2u);

  auto by_ip = cache->FindByIp("10.0.0.12");  // on two of node-2's NICs: still one VM
  ASSERT_TRUE(by_ip.ok()) << by_ip.status();
  ASSERT_EQ(by_ip->size(), 1u);
  EXPECT_EQ((*by_ip)[0].name, "node-2");
  EXPECT_TRUE(cache->FindByIp("FD00::11").ok());

  auto other = cache->FindByMoid(Moid("other-1"));
  ASSERT_TRUE(other.ok()) << other.status();
  EXPECT_EQ(other->datacenter_name, "dc2");

  EXPECT_EQ(cache->FindByUuid("00000000-0000-0000-0000-000000000000").status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(cache->FindByHostname("nope").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(cache->FindByIp("10.255.0.1").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(cache->stats().resyncs, 1u);
}

TEST_F(InventoryCacheTest, OnlyConfiguredDatacenters) {
  InventoryCacheOptions o;
  o.datacenters = {"dc2"};
  auto cache = StartCache(o);
  auto all = cache->Snapshot();
  ASSERT_TRUE(all.ok()) << all.status();
  ASSERT_EQ(all->size(), 1u);
  EXPECT_EQ((*all)[0].name, "other-1");
  EXPECT_EQ(cache->FindByMoid(Moid("node-1")).status().code(), absl::StatusCode::kNotFound);
}

TEST_F(InventoryCacheTest, PowerOffAndDestroyAreSeenWithinOneSecond) {
  auto cache = StartCache();
  const std::string moid = Moid("node-5");
  ASSERT_TRUE(cache->FindByMoid(moid)->powered_on());

  ASSERT_TRUE(sim().PowerVm("node-5", false).ok());
  ASSERT_TRUE(events_.WaitFor(moid, VmChangeKind::kModified, absl::Seconds(1)));
  auto vm = cache->FindByMoid(moid);
  ASSERT_TRUE(vm.ok()) << vm.status();
  EXPECT_EQ(vm->power_state, "poweredOff");

  ASSERT_TRUE(sim().DestroyVm("node-5").ok());
  ASSERT_TRUE(events_.WaitFor(moid, VmChangeKind::kRemoved, absl::Seconds(1)));
  EXPECT_EQ(cache->FindByMoid(moid).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(cache->FindByHostname("node-5").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(cache->FindByIp("10.0.0.15").status().code(), absl::StatusCode::kNotFound);
  EXPECT_GE(cache->stats().updates_applied, 2u);
}

TEST_F(InventoryCacheTest, GuestChangeIsApplied) {
  auto cache = StartCache();
  const std::string moid = Moid("node-2");
  ASSERT_TRUE(sim()
                  .SetGuest("node-2", R"({"hostname":"node-2b","nics":[{"network":"VM Network",
      "ips":["10.0.9.9"],"device_config_id":4000}]})")
                  .ok());
  ASSERT_TRUE(events_.WaitFor(moid, VmChangeKind::kModified, absl::Seconds(2)));
  // The guest fields may arrive in one or two updates: wait (on events) until the IP is there.
  absl::Time deadline = absl::Now() + absl::Seconds(5);
  while (!cache->FindByIp("10.0.9.9").ok() && absl::Now() < deadline) {
    events_.Clear();
    events_.WaitFor(moid, VmChangeKind::kModified, absl::Milliseconds(500));
  }
  auto by_ip = cache->FindByIp("10.0.9.9");
  ASSERT_TRUE(by_ip.ok()) << by_ip.status();
  EXPECT_EQ((*by_ip)[0].moref.value, moid);
  EXPECT_EQ(cache->FindByIp("10.0.0.12").status().code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(cache->FindByHostname("node-2b").ok());
}

TEST_F(InventoryCacheTest, ResyncsAfterSessionInvalidation) {
  auto cache = StartCache();
  ASSERT_TRUE(sim().InvalidateSessions().ok());
  ASSERT_TRUE(cache->WaitForStats(
      [](const InventoryCacheStats& s) { return s.resyncs >= 2 && s.synced; }, absl::Seconds(30)))
      << cache->stats().last_error;
  // The new stream works.
  ASSERT_TRUE(sim().PowerVm("node-3", false).ok());
  EXPECT_TRUE(events_.WaitFor(Moid("node-3"), VmChangeKind::kModified, absl::Seconds(2)));
  EXPECT_EQ(cache->FindByMoid(Moid("node-3"))->power_state, "poweredOff");
  ASSERT_TRUE(sim().PowerVm("node-3", true).ok());
}

TEST_F(InventoryCacheTest, UnavailableWhileBrokenThenResyncs) {
  auto cache = StartCache();
  ASSERT_TRUE(sim().SetFault("drop", -1, 0, "WaitForUpdatesEx").ok());
  ASSERT_TRUE(cache->WaitForStats([](const InventoryCacheStats& s) { return !s.synced; },
                                  absl::Seconds(30)));
  auto vm = cache->FindByUuid("422e4956-ad22-1139-6d72-59cc8f26bc90");
  EXPECT_EQ(vm.status().code(), absl::StatusCode::kUnavailable) << vm.status();
  EXPECT_THAT(std::string(vm.status().message()), ::testing::HasSubstr("not synced"));
  EXPECT_EQ(cache->Snapshot().status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(cache->FindByHostname("node-1").status().code(), absl::StatusCode::kUnavailable);
  EXPECT_FALSE(cache->stats().last_error.ok());

  ASSERT_TRUE(sim().SetFault("none").ok());
  ASSERT_TRUE(cache->WaitForStats(
      [](const InventoryCacheStats& s) { return s.synced && s.resyncs >= 2; }, absl::Seconds(30)));
  EXPECT_TRUE(cache->FindByUuid("422e4956-ad22-1139-6d72-59cc8f26bc90").ok());
}

TEST_F(InventoryCacheTest, ResyncBackoffRunsOnTheInjectedClock) {
  FakeClock clock;
  InventoryCacheOptions o;
  o.clock = &clock;
  o.max_wait_seconds = 1;
  o.resync_backoff = {absl::Seconds(10), absl::Seconds(60), 2.0, 0.0};
  InventoryCache cache(*client_, o);
  cache.Start();
  ASSERT_TRUE(cache.WaitForSync(absl::Seconds(30)));
  ASSERT_TRUE(sim().SetFault("drop", -1, 0, "WaitForUpdatesEx").ok());
  // The stream breaks; the cache then waits 10 s of *fake* time before resyncing.
  ASSERT_TRUE(clock.WaitForSleepers(1, absl::Seconds(30)));
  EXPECT_FALSE(cache.synced());
  ASSERT_TRUE(sim().SetFault("none").ok());
  EXPECT_EQ(cache.stats().resyncs, 1u);
  clock.Advance(absl::Seconds(10));
  ASSERT_TRUE(cache.WaitForStats(
      [](const InventoryCacheStats& s) { return s.synced && s.resyncs == 2; }, absl::Seconds(30)));
  EXPECT_EQ(cache.stats().last_sync, clock.Now());
  cache.Stop();
}

TEST_F(InventoryCacheTest, StopIsPromptAndCleansUp) {
  InventoryCacheOptions o;
  auto cache = std::make_unique<InventoryCache>(*client_, o);  // default maxWaitSeconds: minutes
  cache->Start();
  ASSERT_TRUE(cache->WaitForSync(absl::Seconds(30)));
  ASSERT_TRUE(sim().ResetCounters().ok());
  absl::Time start = absl::Now();
  cache->Stop();
  EXPECT_LT(absl::Now() - start, absl::Seconds(1));
  EXPECT_FALSE(cache->synced());
  EXPECT_EQ(cache->FindByMoid(Moid("node-1")).status().code(), absl::StatusCode::kUnavailable);
  auto counters = sim().SoapCounters();
  ASSERT_TRUE(counters.ok()) << counters.status();
  EXPECT_EQ((*counters)["DestroyPropertyCollector"], 1);
  EXPECT_EQ((*counters)["DestroyView"], 2);  // one view per datacenter
}

// New credentials end the stream's long wait (production's 120 s) at once: the cache sets itself
// up again with a new collector instead of waiting out maxWaitSeconds.
TEST_F(InventoryCacheTest, InterruptEndsTheLongWaitAndSetsUpAgain) {
  InventoryCache cache(*client_);  // default maxWaitSeconds: minutes
  cache.Start();
  ASSERT_TRUE(cache.WaitForSync(absl::Seconds(30)));
  ASSERT_TRUE(cache.WaitForStats([](const InventoryCacheStats& s) { return s.resyncs == 1; },
                                 absl::Seconds(5)));
  cache.Interrupt();
  EXPECT_TRUE(cache.WaitForStats(
      [](const InventoryCacheStats& s) { return s.synced && s.resyncs == 2; }, absl::Seconds(30)))
      << cache.stats().last_error;
  EXPECT_EQ(cache.stats().stream_errors, 1u);
  cache.Stop();
}

// The race Stop() must survive: its first CancelWaitForUpdates reaches vCenter before the stream
// thread's next WaitForUpdatesEx. The cancels repeat until the thread has left, so that wait ends
// with RequestCanceled instead of running for its whole maxWaitSeconds.
TEST_F(InventoryCacheTest, CancelsReachAWaitThatStartsAfterTheFirstCancel) {
  auto sc = client_->GetServiceContent();
  ASSERT_TRUE(sc.ok()) << sc.status();
  auto pc = client_->Call("CreatePropertyCollector", MorefXml("_this", sc->property_collector));
  ASSERT_TRUE(pc.ok()) << pc.status();
  const Moref collector = ParseMoref(pc->returnval());
  PropertyFilterSpec spec;
  spec.prop_set.push_back(PropertySpec{"Folder", {"name"}, false});
  spec.object_set.push_back({sc->root_folder, false, {}});
  ASSERT_TRUE(client_
                  ->Call("CreateFilter", absl::StrCat(MorefXml("_this", collector),
                                                      PropertyFilterSpecXml(spec, "spec"),
                                                      TextXml("partialUpdates", "false")))
                  .ok());
  auto first = client_->Call("WaitForUpdatesEx",
                             absl::StrCat(MorefXml("_this", collector), TextXml("version", "")));
  ASSERT_TRUE(first.ok()) << first.status();
  const std::string version = first->returnval().child_value("version");

  absl::Mutex mu;
  int asked = 0;  // how often the canceller looked for the waiting collector
  absl::Notification exited;
  absl::Status waited;
  std::thread waiter([&] {
    {
      absl::MutexLock l(&mu);
      mu.Await(absl::Condition(
          +[](int* n) { return *n >= 2; }, &asked));  // a cancel went first
    }
    waited = client_
                 ->Call("WaitForUpdatesEx",
                        absl::StrCat(MorefXml("_this", collector), TextXml("version", version),
                                     "<options><maxWaitSeconds>120</maxWaitSeconds></options>"))
                 .status();
    exited.Notify();
  });
  CancelWaitsUntilExited(
      *client_,
      [&] {
        absl::MutexLock l(&mu);
        ++asked;
        return collector;
      },
      exited, "test", absl::Milliseconds(100));
  waiter.join();
  EXPECT_THAT(std::string(waited.message()), ::testing::HasSubstr("RequestCanceled")) << waited;
  (void)client_->Call("DestroyPropertyCollector", MorefXml("_this", collector));
}

}  // namespace
}  // namespace ccm::vsphere
