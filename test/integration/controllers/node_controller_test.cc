// The node controller against the in-process API emulator, with FakeInstances and a FakeClock.
#include "controllers/node_controller.h"

#include <unistd.h>

#include <filesystem>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "controllers/node_update.h"
#include "controllers/node_writer.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "integration/controllers/controllers_test_env.h"
#include "kube/config.h"
#include "kube/event_recorder.h"
#include "kube/kube_event_sink.h"
#include "testing/fake_clock.h"

namespace ccm::controllers {
namespace {

using testing::Env;
using testing::Eventually;
using testing::VmMetadata;

constexpr char kUuid[] = "422e4956-ad22-1139-6d72-59cc8f26bc90";

class NodeControllerTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(env_.Init().ok()); }
  void TearDown() override {
    if (controller_) controller_->Stop();
  }

  NodeController& Controller(std::map<std::string, std::string> extra = {}) {
    NodeControllerOptions o;
    o.workers = 2;
    o.status_update_frequency = absl::Minutes(5);
    o.extra_labels = std::move(extra);
    o.clock = &env_.clock;
    o.metrics = &env_.registry;
    controller_ = std::make_unique<NodeController>(*env_.client, *env_.nodes, env_.instances,
                                                   env_.recorder.get(), std::move(o));
    return *controller_;
  }
  bool Initialised(const std::string& name) {
    return Eventually([&] {
      kube::Json n = env_.GetNode(name);
      return n.is_object() && !kube::ProviderId(n).empty() &&
             !kube::HasTaint(n, kUninitializedTaintKey);
    });
  }
  // Advances the FakeClock (work-queue backoff) until `cond` holds.
  // Each step waits (real time) until `cond` holds or the controller's two clock sleepers (the
  // queue's retry timer and the refresh loop) are asleep again, then moves the clock to the next
  // scheduled wake-up: retries happen exactly when their backoff says, however fast the machine.
  bool AdvanceUntil(const std::function<bool()>& cond, int max_steps = 100) {
    for (int step = 0; step < max_steps; ++step) {
      if (!Eventually([&] { return cond() || env_.clock.sleepers() >= 2; })) return false;
      if (cond()) return true;
      env_.clock.AdvanceToNextWakeup();
    }
    // Other sleepers (the informer's watch retry) can make the steps run out while a slow worker
    // (ThreadSanitizer) is still in its last, successful sync: give it real time to finish.
    return Eventually(cond);
  }
  double Syncs(const std::string& kind, const std::string& result) {
    return env_.registry.Find("cloud_node_controller_syncs_total")->Value({kind, result});
  }

  Env env_;
  std::unique_ptr<NodeController> controller_;
};

// The kubelet registers the Node without addresses (--cloud-provider=external): the stored Node
// must then hold exactly the provider's list (issue 41: a strategic merge patch's
// {"$patch":"replace"} element was stored as a fourth, empty address by kube-apiserver, and now by
// the emulator too).
TEST_F(NodeControllerTest, InitialisesKubeletNode) {
  env_.instances.SetVm("worker-1", {.metadata = VmMetadata("worker-1", kUuid, "10.0.0.5")});
  env_.CreateKubeletNode("worker-1", /*ready=*/true);
  Controller().Start();
  ASSERT_TRUE(Initialised("worker-1"));

  kube::Json n = env_.GetNode("worker-1");
  EXPECT_EQ(kube::ProviderId(n), std::string("vsphere://") + kUuid);
  EXPECT_THAT(kube::NodeAddresses(n),
              ::testing::ElementsAre(kube::NodeAddress{"Hostname", "worker-1"},
                                     kube::NodeAddress{"InternalIP", "10.0.0.5"},
                                     kube::NodeAddress{"ExternalIP", "10.0.0.5"}));
  auto labels = kube::Labels(n);
  EXPECT_EQ(labels["node.kubernetes.io/instance-type"], "vsphere-vm.cpu-2.mem-4gb.os-ubuntu");
  EXPECT_EQ(labels["beta.kubernetes.io/instance-type"], "vsphere-vm.cpu-2.mem-4gb.os-ubuntu");
  EXPECT_EQ(labels["topology.kubernetes.io/zone"], "zone-a");
  EXPECT_EQ(labels["failure-domain.beta.kubernetes.io/zone"], "zone-a");
  EXPECT_EQ(labels["topology.kubernetes.io/region"], "region-1");
  EXPECT_EQ(labels["failure-domain.beta.kubernetes.io/region"], "region-1");
  EXPECT_EQ(labels["kubernetes.io/hostname"], "worker-1");
  // Addresses (status PATCH) first, then one Node patch: nothing more.
  ASSERT_TRUE(Eventually([&] { return Syncs("initialize", "success") == 1; }));
  EXPECT_EQ(env_.emulator.RequestCount("patch nodes/status"), 1);
  EXPECT_EQ(env_.emulator.RequestCount("patch nodes"), 1);
  EXPECT_EQ(env_.emulator.RequestCount("get nodes"), 0);
  EXPECT_EQ(env_.registry.Find("cloud_node_controller_initialization_duration_seconds")->Count({}),
            1u);
  auto events = env_.EventsFor("worker-1");
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].reason, "Synced");
}

// The request budget of an initialisation, as the Go controller spends it: one status PATCH and
// one Node write per Node (the Go controller's is an update, ours a guarded patch), no GET (the
// informer's copy is current), all from the node controller's own client; Events go through another
// client whose budget is spent, and delay no Node. The node controller's budget is exactly 2
// requests per Node (burst 2N, and its clock never advances): a third request per Node, or an Event
// sent from this budget, would block the last Nodes forever.
TEST_F(NodeControllerTest, InitialisationIsTwoNodeWritesNoReadAndEventsNeverDelayIt) {
  constexpr int kNodes = 5;
  const std::string kubeconfig = (std::filesystem::temp_directory_path() /
                                  absl::StrCat("node-controller-test-", getpid(), ".kubeconfig"))
                                     .string();
  ASSERT_TRUE(env_.emulator.WriteKubeconfig(kubeconfig).ok());
  absl::StatusOr<kube::Config> config = kube::LoadKubeconfig(kubeconfig);
  std::filesystem::remove(kubeconfig);
  ASSERT_TRUE(config.ok()) << config.status();
  config->qps = 1;
  config->burst = 2 * kNodes;
  FakeClock api_clock;  // the client-side rate limiters' time; advanced only at the end
  absl::StatusOr<std::unique_ptr<kube::RestClient>> root =
      kube::RestClient::New(*config, {.clock = &api_clock});
  ASSERT_TRUE(root.ok()) << root.status();
  std::unique_ptr<kube::RestClient> node_client = (*root)->WithOwnRateLimit("node-controller");
  std::unique_ptr<kube::RestClient> events_client = (*root)->WithOwnRateLimit("events");
  for (int i = 0; i < 2 * kNodes; ++i) (void)events_client->Get(kube::Nodes(), "", "spent");
  kube::KubeEventSink sink(*events_client);
  auto recorder = std::make_unique<kube::EventRecorder>(sink);
  // Whatever happens below, unblock the rate limiters and stop the controller before the clients
  // it uses go away.
  struct StopFirst {
    FakeClock& clock;
    std::unique_ptr<NodeController>& controller;
    ~StopFirst() {
      clock.Advance(absl::Hours(1));
      if (controller) controller->Stop();
      controller.reset();
    }
  } stop_first{api_clock, controller_};

  for (int i = 0; i < kNodes; ++i) {
    const std::string name = absl::StrCat("worker-", i);
    env_.instances.SetVm(
        name, {.metadata = VmMetadata(name, absl::StrCat("422e4956-ad22-1139-6d72-59cc8f26bc9", i),
                                      absl::StrCat("10.0.0.", 10 + i))});
  }
  env_.emulator.ResetRequestCounts();
  NodeControllerOptions o;
  o.workers = 2;
  o.clock = &env_.clock;
  o.metrics = &env_.registry;
  controller_ = std::make_unique<NodeController>(*node_client, *env_.nodes, env_.instances,
                                                 recorder.get(), std::move(o));
  controller_->Start();
  for (int i = 0; i < kNodes; ++i) env_.CreateKubeletNode(absl::StrCat("worker-", i), true);
  for (int i = 0; i < kNodes; ++i) ASSERT_TRUE(Initialised(absl::StrCat("worker-", i)));
  ASSERT_TRUE(Eventually([&] { return Syncs("initialize", "success") == kNodes; }));

  EXPECT_EQ(env_.emulator.RequestCount("patch nodes/status"), kNodes);
  EXPECT_EQ(env_.emulator.RequestCount("patch nodes"), kNodes);
  EXPECT_EQ(env_.emulator.RequestCount("get nodes"), 0);
  EXPECT_EQ(node_client->own_requests_sent(), 2 * kNodes);
  EXPECT_EQ(env_.emulator.RequestCount("create events"), 0);  // all waiting for their budget
  std::map<std::string, int> writes_by_agent;
  for (const auto& r : env_.emulator.RequestLog()) {
    if (r.key == "patch nodes/status" || r.key == "patch nodes") ++writes_by_agent[r.user_agent];
  }
  EXPECT_EQ(writes_by_agent, (std::map<std::string, int>{{node_client->user_agent(), 2 * kNodes}}));

  // The Events' budget refills: every Node's "Synced" Event is sent, by the events client.
  ASSERT_TRUE(api_clock.WaitForSleepers(1));  // the recorder, waiting for a token
  api_clock.Advance(absl::Hours(1));
  recorder->Flush();
  EXPECT_EQ(env_.emulator.RequestCount("create events"), kNodes);
  for (const auto& r : env_.emulator.RequestLog()) {
    if (r.key == "create events") {
      EXPECT_EQ(r.user_agent, events_client->user_agent());
    }
  }
}

TEST_F(NodeControllerTest, ExtraLabelsNeverOverwrite) {
  env_.instances.SetVm("worker-1", {.metadata = VmMetadata("worker-1", kUuid, "10.0.0.5")});
  kube::Json n = env_.CreateKubeletNode("worker-1", true);
  env_.EditNode("worker-1", [](kube::Json& n) { kube::SetLabel(n, "team", "blue"); });
  Controller({{"team", "red"}, {"env", "prod"}}).Start();
  ASSERT_TRUE(Initialised("worker-1"));
  auto labels = kube::Labels(env_.GetNode("worker-1"));
  EXPECT_EQ(labels["team"], "blue");
  EXPECT_EQ(labels["env"], "prod");
}

// An extra label someone else wrote after the informer's copy (seen by the informer or not) is
// kept, and the Node is initialised with its addresses: the Node's patch tests the label map it
// adds to (a failed test reads the Node again and recomputes the patch).
TEST_F(NodeControllerTest, ExtraLabelWrittenAfterTheInformersCopyIsKept) {
  env_.instances.SetVm("worker-1", {.metadata = VmMetadata("worker-1", kUuid, "10.0.0.5")});
  env_.CreateKubeletNode("worker-1", true);
  ASSERT_TRUE(env_.StoreSees("worker-1", [](const kube::Json& n) { return n.is_object(); }));
  NodeController& c = Controller({{"team", "red"}});  // not started: Sync is called directly
  env_.EditNode("worker-1", [](kube::Json& n) { kube::SetLabel(n, "team", "blue"); });
  env_.emulator.ResetRequestCounts();
  ASSERT_TRUE(c.Sync("worker-1").ok());

  kube::Json n = env_.GetNode("worker-1");
  EXPECT_EQ(kube::Label(n, "team"), "blue");
  EXPECT_EQ(kube::Label(n, "topology.kubernetes.io/zone"), "zone-a");
  EXPECT_FALSE(kube::HasTaint(n, kUninitializedTaintKey));
  EXPECT_EQ(kube::NodeAddresses(n).size(), 3u);
  EXPECT_EQ(env_.emulator.RequestCount("patch nodes/status"), 1);
}

TEST_F(NodeControllerTest, ConflictOnUpdateIsRetriedAndKeepsOthersLabels) {
  kube::Json md_node = env_.CreateKubeletNode("worker-1", true);
  // Addresses already right: the first write of the sync is the Node patch.
  env_.instances.SetVm("worker-1", {.metadata = VmMetadata("worker-1", kUuid, "10.0.0.5")});
  env_.EditNode("worker-1", [](kube::Json& n) {
    kube::SetNodeAddresses(
        n, {{"Hostname", "worker-1"}, {"InternalIP", "10.0.0.5"}, {"ExternalIP", "10.0.0.5"}});
  });
  ASSERT_TRUE(env_.StoreSees("worker-1",
                             [](const kube::Json& n) { return !kube::NodeAddresses(n).empty(); }));
  NodeController& c = Controller();  // not started: Sync is called directly
  // Someone else writes a label the informer may not have seen yet, and the server answers the
  // next Node write with 409 either way.
  env_.EditNode("worker-1", [](kube::Json& n) { kube::SetLabel(n, "written-by", "other"); });
  env_.emulator.ForceConflicts("nodes", "", "worker-1", 1);
  env_.emulator.ResetRequestCounts();
  ASSERT_TRUE(c.Sync("worker-1").ok());

  kube::Json n = env_.GetNode("worker-1");
  EXPECT_EQ(kube::Label(n, "written-by"), "other");
  EXPECT_EQ(kube::Label(n, "topology.kubernetes.io/zone"), "zone-a");
  EXPECT_FALSE(kube::HasTaint(n, kUninitializedTaintKey));
  EXPECT_EQ(env_.emulator.RequestCount("patch nodes"), 2);  // 409, then success
  EXPECT_EQ(env_.emulator.RequestCount("get nodes"), 1);    // the re-read
  EXPECT_EQ(env_.emulator.RequestCount("patch nodes/status"), 0);
}

TEST_F(NodeControllerTest, ConflictsThroughTheQueueAreRetriedWithBackoff) {
  env_.instances.SetVm("worker-1", {.metadata = VmMetadata("worker-1", kUuid, "10.0.0.5")});
  env_.CreateKubeletNode("worker-1", true);
  env_.EditNode("worker-1", [](kube::Json& n) { kube::SetLabel(n, "keep", "me"); });
  // The status PATCH and two Node patches answer 409: one failed sync, requeued with backoff.
  env_.emulator.ForceConflicts("nodes", "", "worker-1", 3);
  Controller().Start();
  ASSERT_TRUE(AdvanceUntil([&] {
    kube::Json n = env_.GetNode("worker-1");
    return !kube::HasTaint(n, kUninitializedTaintKey) && !kube::NodeAddresses(n).empty();
  }));
  EXPECT_EQ(kube::Label(env_.GetNode("worker-1"), "keep"), "me");
  EXPECT_GE(Syncs("initialize", "failure"), 1);
}

TEST_F(NodeControllerTest, FailingNodeGetsWarningEventAndIsRetried) {
  env_.instances.SetVm("worker-1", {.metadata = VmMetadata("worker-1", kUuid, "10.0.0.5")});
  env_.instances.SetNodeError(
      "worker-1", absl::FailedPreconditionError(
                      "no IPv4 address of VM worker-1 is in internal-network-subnet-cidr "
                      "192.168.0.0/16"));
  env_.CreateKubeletNode("worker-1", true);
  Controller().Start();
  ASSERT_TRUE(Eventually([&] {
    for (const auto& e : env_.EventsFor("worker-1")) {
      if (e.type == "Warning" && e.reason == "InitializationFailed" &&
          absl::StrContains(e.message, "internal-network-subnet-cidr 192.168.0.0/16")) {
        return true;
      }
    }
    return false;
  }));
  // Retried with backoff while it fails; the taint stays.
  ASSERT_TRUE(AdvanceUntil([&] { return Syncs("initialize", "failure") >= 3; }));
  EXPECT_TRUE(kube::HasTaint(env_.GetNode("worker-1"), kUninitializedTaintKey));
  // Fixed: the next retry initialises it.
  env_.instances.SetNodeError("worker-1", absl::OkStatus());
  ASSERT_TRUE(AdvanceUntil(
      [&] { return !kube::HasTaint(env_.GetNode("worker-1"), kUninitializedTaintKey); }));
}

TEST_F(NodeControllerTest, VmNotFoundIsRetriedNotDeleted) {
  env_.CreateKubeletNode("ghost", true);
  Controller().Start();
  ASSERT_TRUE(AdvanceUntil([&] { return Syncs("initialize", "failure") >= 2; }));
  EXPECT_TRUE(env_.GetNode("ghost").is_object());
  auto events = env_.EventsFor("ghost");
  ASSERT_FALSE(events.empty());
  EXPECT_THAT(events[0].message, ::testing::HasSubstr("no VM found for node ghost"));
  EXPECT_TRUE(env_.client->deletes().empty());
}

TEST_F(NodeControllerTest, AddressesRefreshedOnlyWhenChanged) {
  env_.instances.SetVm("worker-1", {.metadata = VmMetadata("worker-1", kUuid, "10.0.0.5")});
  env_.CreateKubeletNode("worker-1", true);
  NodeController& c = Controller();
  c.Start();
  ASSERT_TRUE(Initialised("worker-1"));
  ASSERT_TRUE(env_.StoreSees("worker-1", [](const kube::Json& n) {
    return !kube::HasTaint(n, kUninitializedTaintKey) && !kube::NodeAddresses(n).empty();
  }));
  ASSERT_TRUE(Eventually([&] { return Syncs("initialize", "success") == 1; }));
  const double r0 = Syncs("refresh", "success");
  env_.emulator.ResetRequestCounts();

  // Nothing changed: a refresh pass asks the provider and writes nothing.
  env_.clock.Advance(absl::Minutes(5));
  ASSERT_TRUE(c.WaitForRefreshPasses(1, absl::Seconds(20)));
  ASSERT_TRUE(Eventually([&] { return Syncs("refresh", "success") == r0 + 1; }));
  EXPECT_EQ(env_.emulator.RequestCount("patch nodes/status"), 0);
  EXPECT_EQ(env_.emulator.RequestCount("patch nodes"), 0);

  // The VM's IP changed: the next pass patches the addresses once.
  env_.instances.SetVm("worker-1", {.metadata = VmMetadata("worker-1", kUuid, "10.0.0.9")});
  env_.clock.Advance(absl::Minutes(5));
  ASSERT_TRUE(c.WaitForRefreshPasses(2, absl::Seconds(20)));
  ASSERT_TRUE(Eventually([&] { return Syncs("refresh", "success") == r0 + 2; }));
  EXPECT_EQ(env_.emulator.RequestCount("patch nodes/status"), 1);
  // Exactly the new list as stored (issue 41: nothing left of the old one, no empty entry).
  EXPECT_THAT(kube::NodeAddresses(env_.GetNode("worker-1")),
              ::testing::ElementsAre(kube::NodeAddress{"Hostname", "worker-1"},
                                     kube::NodeAddress{"InternalIP", "10.0.0.9"},
                                     kube::NodeAddress{"ExternalIP", "10.0.0.9"}));

  // A VM change reported by the inventory cache: refreshed without waiting for the period.
  env_.instances.SetVm("worker-1", {.metadata = VmMetadata("worker-1", kUuid, "10.0.0.7")});
  ASSERT_TRUE(env_.StoreSees("worker-1", [](const kube::Json& n) {
    return kube::NodeAddresses(n).size() == 3 && kube::NodeAddresses(n)[1].address == "10.0.0.9";
  }));
  c.EnqueueAddressRefresh("worker-1");
  ASSERT_TRUE(Eventually(
      [&] { return kube::NodeAddresses(env_.GetNode("worker-1"))[1].address == "10.0.0.7"; }));
  EXPECT_TRUE(Eventually([&] {
    return env_.registry.Find("cloud_node_controller_address_updates_total")->Value({}) == 2;
  }));
  EXPECT_EQ(env_.emulator.RequestCount("patch nodes/status"), 2);
}

TEST_F(NodeControllerTest, AddressRefreshSkippedWhileInventoryNotSynced) {
  env_.instances.SetVm("worker-1", {.metadata = VmMetadata("worker-1", kUuid, "10.0.0.5")});
  env_.CreateKubeletNode("worker-1", true);
  NodeController& c = Controller();
  c.Start();
  ASSERT_TRUE(Initialised("worker-1"));
  ASSERT_TRUE(env_.StoreSees("worker-1", [](const kube::Json& n) {
    return !kube::HasTaint(n, kUninitializedTaintKey) && !kube::NodeAddresses(n).empty();
  }));
  ASSERT_TRUE(Eventually([&] { return Syncs("initialize", "success") == 1; }));
  auto skipped = [&] {
    return env_.registry.Find("cloud_node_controller_skipped_refresh_passes_total")
        ->Value({"vcenter_not_synced"});
  };

  // Not synced; the VM's IP changes meanwhile. Three refresh periods queue nothing and ask the
  // provider nothing.
  env_.instances.SetReadyError(absl::UnavailableError("vCenter east: inventory not synced"));
  env_.instances.SetVm("worker-1", {.metadata = VmMetadata("worker-1", kUuid, "10.0.0.9")});
  env_.emulator.ResetRequestCounts();
  const int calls = env_.instances.calls();
  for (int i = 1; i <= 3; ++i) {
    env_.clock.Advance(absl::Minutes(5));
    ASSERT_TRUE(c.WaitForRefreshPasses(i, absl::Seconds(20)));
  }
  EXPECT_EQ(skipped(), 3);
  // A refresh already queued (or queued by an inventory change) is dropped, not retried.
  EXPECT_TRUE(c.Sync("worker-1").ok());
  EXPECT_EQ(env_.instances.calls(), calls);
  EXPECT_EQ(Syncs("refresh", "success") + Syncs("refresh", "failure"), 0);
  EXPECT_EQ(env_.emulator.RequestCount("patch nodes/status"), 0);
  EXPECT_THAT(kube::NodeAddresses(env_.GetNode("worker-1")),
              ::testing::Contains(kube::NodeAddress{"InternalIP", "10.0.0.5"}));
  EXPECT_EQ(env_.EventsFor("worker-1").size(), 1u) << "only the initialisation's Synced";

  // Synced again: the next pass refreshes the addresses.
  env_.instances.SetReadyError(absl::OkStatus());
  env_.clock.Advance(absl::Minutes(5));
  ASSERT_TRUE(c.WaitForRefreshPasses(4, absl::Seconds(20)));
  ASSERT_TRUE(Eventually([&] { return Syncs("refresh", "success") == 1; }));
  EXPECT_THAT(kube::NodeAddresses(env_.GetNode("worker-1")),
              ::testing::Contains(kube::NodeAddress{"InternalIP", "10.0.0.9"}));
  EXPECT_EQ(env_.emulator.RequestCount("patch nodes/status"), 1);
  EXPECT_EQ(skipped(), 3);
}

TEST_F(NodeControllerTest, InitialisationIsNotGatedOnReady) {
  // The initialisation path keeps its own retry through the queue: the gate is not applied.
  env_.instances.SetVm("worker-1", {.metadata = VmMetadata("worker-1", kUuid, "10.0.0.5")});
  env_.instances.SetReadyError(absl::UnavailableError("vCenter west: inventory not synced"));
  env_.CreateKubeletNode("worker-1", true);
  Controller().Start();
  ASSERT_TRUE(Initialised("worker-1"));
}

TEST_F(NodeControllerTest, UpdateGivesUpAfterAttemptsAndTheQueueRetries) {
  kube::Json n = env_.CreateKubeletNode("busy", true);
  env_.emulator.ForceConflicts("nodes", "", "busy", 100);
  absl::StatusOr<NodeWriteResult> r = UpdateNodeWithRetry(
      *env_.client, n, [](kube::Json& n) { return kube::SetLabel(n, "x", "y"), true; }, 3);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kAborted);
  EXPECT_THAT(r.status().message(), ::testing::HasSubstr("after 3 attempts"));
  EXPECT_EQ(env_.emulator.RequestCount("patch nodes"), 3);
  env_.emulator.ClearFaults();
  r = UpdateNodeWithRetry(*env_.client, n, [](kube::Json& n) { return false; });
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->written);
}

TEST_F(NodeControllerTest, ForeignNodesAreLeftAlone) {
  env_.CreateKubeletNode("aws-node", true, "aws:///us-east-1a/i-123");
  ASSERT_TRUE(env_.StoreSees("aws-node", [](const kube::Json&) { return true; }));
  NodeController& c = Controller();
  ASSERT_TRUE(c.Sync("aws-node").ok());
  EXPECT_TRUE(kube::HasTaint(env_.GetNode("aws-node"), kUninitializedTaintKey));
  EXPECT_EQ(env_.instances.calls(), 0);
}

// Issue 10 item 4: after initialisation, GA labels follow their beta labels as in
// cloud-provider's reconcileNodeLabels, on the Node's update event (no refresh period needed).
TEST_F(NodeControllerTest, InitialisedNodeGaLabelsAreReconciledFromBetaLabels) {
  env_.instances.SetVm("worker-1", {.metadata = VmMetadata("worker-1", kUuid, "10.0.0.5")});
  env_.CreateKubeletNode("worker-1", true);
  NodeController& c = Controller();
  c.Start();
  ASSERT_TRUE(Initialised("worker-1"));
  ASSERT_TRUE(Eventually([&] { return Syncs("initialize", "success") == 1; }));

  // Someone drops the GA zone label and edits the GA instance type; the beta ones stay.
  env_.EditNode("worker-1", [](kube::Json& n) {
    n["metadata"]["labels"].erase("topology.kubernetes.io/zone");
    kube::SetLabel(n, "node.kubernetes.io/instance-type", "hand-edited");
    kube::SetLabel(n, "failure-domain.beta.kubernetes.io/region", "region-9");
  });
  ASSERT_TRUE(Eventually([&] {
    auto l = kube::Labels(env_.GetNode("worker-1"));
    return l["topology.kubernetes.io/zone"] == "zone-a" &&
           l["node.kubernetes.io/instance-type"] == "vsphere-vm.cpu-2.mem-4gb.os-ubuntu" &&
           l["topology.kubernetes.io/region"] == "region-9";
  })) << env_.GetNode("worker-1")["metadata"]["labels"].dump();
  auto l = kube::Labels(env_.GetNode("worker-1"));
  EXPECT_EQ(l["failure-domain.beta.kubernetes.io/zone"], "zone-a");
  EXPECT_EQ(l["failure-domain.beta.kubernetes.io/region"], "region-9") << "beta is the source";
  EXPECT_EQ(c.refresh_passes(), 0) << "fixed on the update event, not by a refresh period";

  // Consistent labels: a refresh pass writes nothing.
  ASSERT_TRUE(env_.StoreSees("worker-1", [](const kube::Json& n) {
    return kube::Label(n, "topology.kubernetes.io/zone").value_or("") == "zone-a";
  }));
  env_.emulator.ResetRequestCounts();
  env_.clock.Advance(absl::Minutes(5));
  ASSERT_TRUE(c.WaitForRefreshPasses(1, absl::Seconds(20)));
  ASSERT_TRUE(Eventually([&] { return Syncs("refresh", "success") >= 1; }));
  EXPECT_EQ(env_.emulator.RequestCount("patch nodes"), 0);
}

}  // namespace
}  // namespace ccm::controllers
