// The node lifecycle controller against the in-process API emulator, with FakeInstances and a
// FakeClock driving the monitor period.
#include "controllers/node_lifecycle_controller.h"

#include "absl/strings/match.h"
#include "controllers/node_update.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "integration/controllers/controllers_test_env.h"
#include "testing/fake_clock.h"

namespace ccm::controllers {
namespace {

using testing::Env;
using testing::Eventually;
using testing::VmMetadata;

constexpr absl::Duration kPeriod = absl::Seconds(5);
constexpr absl::Duration kWait = absl::Seconds(20);
// FakeInstances finds VMs by node name; the providerID only has to be a vSphere one.
constexpr char kOurProviderId[] = "vsphere://4237aaaa-0000-0000-0000-0000000000ff";

class NodeLifecycleControllerTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(env_.Init().ok()); }
  void TearDown() override {
    if (controller_) controller_->Stop();
  }

  // Starts the controller once the informer has every node created so far, and waits for the
  // first pass.
  NodeLifecycleController& Start(bool skip_deletion = false) {
    NodeLifecycleControllerOptions o;
    o.skip_node_deletion = skip_deletion;
    StartWithoutWaiting(o);
    EXPECT_TRUE(controller_->WaitForPasses(1, kWait));
    return *controller_;
  }
  void StartWithoutWaiting(NodeLifecycleControllerOptions o) {
    o.monitor_period = kPeriod;
    o.clock = &env_.clock;
    o.metrics = &env_.registry;
    controller_ = std::make_unique<NodeLifecycleController>(*env_.client, *env_.nodes,
                                                            env_.instances, env_.recorder.get(), o);
    controller_->Start();
  }
  // Once the controller sleeps until its next pass, moves the FakeClock one period and waits
  // for that pass.
  void NextPass() {
    ASSERT_TRUE(env_.clock.WaitForSleepers(1, kWait));
    int64_t n = controller_->passes();
    env_.clock.Advance(kPeriod);
    ASSERT_TRUE(controller_->WaitForPasses(n + 1, kWait));
  }
  kube::Json NotReadyNode(const std::string& name,
                          const std::string& provider_id = kOurProviderId) {
    kube::Json n = env_.CreateKubeletNode(name, /*ready=*/false, provider_id);
    EXPECT_TRUE(env_.StoreSees(name, [](const kube::Json&) { return true; }));
    return n;
  }
  double Actions(const std::string& action) {
    return env_.registry.Find("cloud_node_lifecycle_controller_actions_total")->Value({action});
  }
  double Skipped() {
    return env_.registry.Find("cloud_node_lifecycle_controller_skipped_passes_total")
        ->Value({"vcenter_not_synced"});
  }
  // NodeCheckFailed Warnings about `nodes`, repeats (aggregated into one Event's count) included.
  int CheckFailedEvents(const std::vector<std::string>& nodes, std::string* message = nullptr) {
    int n = 0;
    for (const std::string& node : nodes) {
      for (const auto& e : env_.EventsFor(node)) {
        if (e.type != "Warning" || e.reason != "NodeCheckFailed") continue;
        n += e.count;
        if (message) *message = e.message;
      }
    }
    return n;
  }
  static absl::Status NotSynced() {
    return absl::UnavailableError(
        "vCenter east: inventory not synced: Post \"https://east/sdk\": connection refused");
  }

  Env env_;
  std::unique_ptr<NodeLifecycleController> controller_;
};

TEST_F(NodeLifecycleControllerTest, ConfirmedGoneNodeIsDeletedWithUidPrecondition) {
  kube::Json node = NotReadyNode("gone", "vsphere://4237aaaa-0000-0000-0000-000000000001");
  Start();  // no VM for "gone": confirmed gone
  EXPECT_TRUE(env_.GetNode("gone").is_null());
  auto deletes = env_.client->deletes();
  ASSERT_EQ(deletes.size(), 1u);
  EXPECT_EQ(deletes[0].precondition_uid, kube::Uid(node));
  EXPECT_FALSE(kube::Uid(node).empty());
  bool event = false;
  for (const auto& e : env_.EventsFor("gone")) event |= e.reason == "DeletingNode";
  EXPECT_TRUE(event);
  EXPECT_EQ(Actions("deleted"), 1);
}

TEST_F(NodeLifecycleControllerTest, ShutdownTaintAddedAndRemovedWhenReady) {
  NotReadyNode("sleepy");
  env_.instances.SetVm("sleepy", {.shutdown = true, .metadata = {}});
  Start();
  kube::Json n = env_.GetNode("sleepy");
  EXPECT_TRUE(kube::HasTaint(n, kShutdownTaintKey, "NoSchedule"));
  EXPECT_TRUE(kube::HasTaint(n, kUninitializedTaintKey)) << "other taints kept";
  EXPECT_TRUE(env_.client->deletes().empty());

  // Still shut down next period: no second write.
  ASSERT_TRUE(env_.StoreSees(
      "sleepy", [](const kube::Json& n) { return kube::HasTaint(n, kShutdownTaintKey); }));
  env_.emulator.ResetRequestCounts();
  NextPass();
  EXPECT_EQ(env_.emulator.RequestCount("patch nodes"), 0);

  // Powered on and Ready again: the taint goes.
  env_.instances.SetVm("sleepy", {});
  env_.EditNode("sleepy", [](kube::Json& n) { Env::SetReady(n, true); });
  ASSERT_TRUE(env_.StoreSees("sleepy", [](const kube::Json& n) { return kube::IsNodeReady(n); }));
  NextPass();
  n = env_.GetNode("sleepy");
  EXPECT_FALSE(kube::HasTaint(n, kShutdownTaintKey));
  EXPECT_TRUE(kube::HasTaint(n, kUninitializedTaintKey));
  EXPECT_EQ(Actions("shutdown_tainted"), 1);
  EXPECT_EQ(Actions("shutdown_untainted"), 1);
}

TEST_F(NodeLifecycleControllerTest, ShutdownTaintSurvivesConflict) {
  NotReadyNode("sleepy");
  env_.instances.SetVm("sleepy", {.shutdown = true, .metadata = {}});
  env_.emulator.ForceConflicts("nodes", "", "sleepy", 2);
  Start();
  EXPECT_TRUE(kube::HasTaint(env_.GetNode("sleepy"), kShutdownTaintKey, "NoSchedule"));
}

TEST_F(NodeLifecycleControllerTest, VcenterUnavailableFor30SecondsDeletesNothing) {
  NotReadyNode("worker-1");
  NotReadyNode("worker-2", "vsphere://4237aaaa-0000-0000-0000-000000000002");
  // Both VMs are gone, but vCenter cannot be asked: that must never become a deletion.
  env_.instances.SetError(absl::UnavailableError("vCenter vc1.example.com: connection refused"));
  Start();
  for (int i = 0; i < 7; ++i) NextPass();  // 35 simulated seconds
  EXPECT_TRUE(env_.GetNode("worker-1").is_object());
  EXPECT_TRUE(env_.GetNode("worker-2").is_object());
  EXPECT_TRUE(env_.client->deletes().empty());
  EXPECT_EQ(env_.emulator.RequestCount("delete nodes"), 0);
  EXPECT_EQ(Actions("check_failed"), 16);  // 2 nodes x 8 passes
  bool warned = false;
  for (const auto& e : env_.EventsFor("worker-1")) {
    warned |= e.type == "Warning" && e.reason == "NodeCheckFailed" &&
              absl::StrContains(e.message, "connection refused") &&
              absl::StrContains(e.message, "nothing is deleted");
  }
  EXPECT_TRUE(warned);

  // vCenter answers again and confirms the VMs are gone.
  env_.instances.SetError(absl::OkStatus());
  NextPass();
  EXPECT_TRUE(env_.GetNode("worker-1").is_null());
  EXPECT_TRUE(env_.GetNode("worker-2").is_null());
}

TEST_F(NodeLifecycleControllerTest, NoPassBeforeEveryInventoryHasSynced) {
  NotReadyNode("gone", "vsphere://4237aaaa-0000-0000-0000-000000000001");  // its VM is gone
  env_.instances.SetReadyError(NotSynced());
  StartWithoutWaiting({});
  // The controller is polling Ready(), and neither that nor moving its clock starts a pass.
  ASSERT_TRUE(Eventually([&] { return env_.instances.ready_calls() >= 3; }));
  env_.clock.Advance(3 * kPeriod);
  const int asked = env_.instances.ready_calls();
  ASSERT_TRUE(Eventually([&] { return env_.instances.ready_calls() >= asked + 2; }));
  EXPECT_EQ(controller_->passes(), 0);
  EXPECT_EQ(env_.instances.calls(), 0) << "no Node looked up before the inventory synced";
  EXPECT_TRUE(env_.GetNode("gone").is_object());
  EXPECT_EQ(CheckFailedEvents({"gone"}), 0) << "no warning burst at start-up";
  EXPECT_EQ(Skipped(), 0) << "the start-up wait is not an outage";

  // Synced: the first pass runs at once and acts on the confirmed-gone VM.
  env_.instances.SetReadyError(absl::OkStatus());
  ASSERT_TRUE(controller_->WaitForPasses(1, kWait));
  EXPECT_TRUE(env_.GetNode("gone").is_null());
  EXPECT_EQ(Actions("deleted"), 1);
}

TEST_F(NodeLifecycleControllerTest, NotSyncedPassesDeleteAndTaintNothingAndWarnOnce) {
  Start();  // synced, no nodes yet
  env_.instances.SetReadyError(NotSynced());
  NotReadyNode("gone", "vsphere://4237aaaa-0000-0000-0000-000000000001");  // no VM
  NotReadyNode("sleepy");
  env_.instances.SetVm("sleepy", {.shutdown = true, .metadata = {}});
  // A Ready node still carrying the shutdown taint needs no provider answer: it is handled.
  env_.CreateKubeletNode("awake", /*ready=*/true);
  env_.EditNode("awake", [](kube::Json& n) {
    kube::AddTaint(n, kube::Taint{std::string(kShutdownTaintKey), "", "NoSchedule"});
  });
  ASSERT_TRUE(env_.StoreSees(
      "awake", [](const kube::Json& n) { return kube::HasTaint(n, kShutdownTaintKey); }));

  // The first pass removes the taint of "awake"; let the informer see that before the others.
  NextPass();
  ASSERT_TRUE(env_.StoreSees(
      "awake", [](const kube::Json& n) { return !kube::HasTaint(n, kShutdownTaintKey); }));
  for (int i = 1; i < 12; ++i) NextPass();  // a minute of outage
  EXPECT_TRUE(env_.GetNode("gone").is_object());
  EXPECT_FALSE(kube::HasTaint(env_.GetNode("sleepy"), kShutdownTaintKey));
  EXPECT_TRUE(env_.client->deletes().empty());
  EXPECT_EQ(env_.instances.calls(), 0) << "no per-node look-up while not synced";
  EXPECT_EQ(Skipped(), 12);
  EXPECT_EQ(Actions("check_failed"), 0);
  EXPECT_EQ(Actions("shutdown_tainted"), 0);
  EXPECT_FALSE(kube::HasTaint(env_.GetNode("awake"), kShutdownTaintKey));
  EXPECT_EQ(Actions("shutdown_untainted"), 1);
  // One Event for the whole outage, on the first NotReady node by name.
  std::string message;
  EXPECT_EQ(CheckFailedEvents({"gone"}, &message), 1);
  EXPECT_EQ(CheckFailedEvents({"sleepy", "awake"}), 0);
  EXPECT_THAT(message, ::testing::HasSubstr("and 1 other(s) are not checked"));
  EXPECT_THAT(message, ::testing::HasSubstr("nothing is deleted"));
  EXPECT_THAT(message, ::testing::HasSubstr("vCenter east: inventory not synced"));

  // Synced again: the next pass acts normally.
  env_.instances.SetReadyError(absl::OkStatus());
  NextPass();
  EXPECT_TRUE(env_.GetNode("gone").is_null());
  EXPECT_TRUE(kube::HasTaint(env_.GetNode("sleepy"), kShutdownTaintKey, "NoSchedule"));
  EXPECT_EQ(Actions("deleted"), 1);
  EXPECT_EQ(Actions("shutdown_tainted"), 1);
  EXPECT_EQ(Skipped(), 12);
}

TEST_F(NodeLifecycleControllerTest, OutageEventsAreRateLimitedAcrossOutages) {
  NotReadyNode("flaky");
  env_.instances.SetVm("flaky", {});  // powered on: nothing to do while synced
  NodeLifecycleControllerOptions o;
  o.outage_event_interval = 4 * kPeriod;
  StartWithoutWaiting(o);
  ASSERT_TRUE(controller_->WaitForPasses(1, kWait));  // t = 0

  auto outage = [&](bool down) {
    env_.instances.SetReadyError(down ? NotSynced() : absl::OkStatus());
    NextPass();
  };
  outage(true);   // t = 5: outage 1 begins, Event 1
  outage(true);   // t = 10
  outage(false);  // t = 15
  outage(true);   // t = 20: outage 2, 15 s after Event 1: none
  EXPECT_EQ(CheckFailedEvents({"flaky"}), 1);
  outage(false);  // t = 25
  outage(true);   // t = 30: outage 3, 25 s after Event 1: Event 2
  outage(true);   // t = 35
  EXPECT_EQ(CheckFailedEvents({"flaky"}), 2);
  EXPECT_EQ(Skipped(), 5);
  EXPECT_EQ(Actions("check_failed"), 0);
  EXPECT_TRUE(env_.client->deletes().empty());
}

TEST_F(NodeLifecycleControllerTest, SkipNodeDeletionNeverDeletes) {
  NotReadyNode("gone");
  Start(/*skip_deletion=*/true);
  for (int i = 0; i < 3; ++i) NextPass();
  EXPECT_TRUE(env_.GetNode("gone").is_object());
  EXPECT_TRUE(env_.client->deletes().empty());
  EXPECT_EQ(Actions("delete_skipped"), 4);
}

TEST_F(NodeLifecycleControllerTest, ForeignAndReadyNodesAreLeftAlone) {
  NotReadyNode("aws-node", "aws:///us-east-1a/i-123");
  env_.CreateKubeletNode("ready-without-vm", /*ready=*/true);
  ASSERT_TRUE(env_.StoreSees("ready-without-vm", [](const kube::Json&) { return true; }));
  Start();
  NextPass();
  EXPECT_TRUE(env_.GetNode("aws-node").is_object());
  EXPECT_TRUE(env_.GetNode("ready-without-vm").is_object());
  EXPECT_TRUE(env_.client->deletes().empty());
  EXPECT_EQ(env_.instances.calls(), 0);
}

// A pass visits only the Nodes it acts on (the informer's selection): a Ready Node is not looked
// at, and the pass after it turns NotReady acts on it (here: its VM is gone, so it is deleted).
TEST_F(NodeLifecycleControllerTest, NodeTurningNotReadyIsCheckedAtTheNextPass) {
  env_.CreateKubeletNode("turns", /*ready=*/true, kOurProviderId);
  ASSERT_TRUE(env_.StoreSees("turns", [](const kube::Json&) { return true; }));
  Start();
  NextPass();
  EXPECT_EQ(env_.instances.calls(), 0);
  EXPECT_TRUE(env_.GetNode("turns").is_object());

  env_.EditNode("turns", [](kube::Json& n) { Env::SetReady(n, false); });
  ASSERT_TRUE(env_.StoreSees("turns", [](const kube::Json& n) { return !kube::IsNodeReady(n); }));
  NextPass();
  EXPECT_TRUE(env_.GetNode("turns").is_null());
  EXPECT_EQ(Actions("deleted"), 1);
}

// Issue 10 item 1: deletion (and the shutdown taint) needs a vsphere:// providerID. A NotReady
// Node without one (bare metal in a mixed cluster, never initialised) or with a foreign one is
// never looked up, deleted or tainted, even when the provider would call its VM gone or off.
TEST_F(NodeLifecycleControllerTest, NodesWithoutOurProviderIdAreNeverDeletedOrTainted) {
  NotReadyNode("bare-metal", "");  // no VM by that name: "gone" if asked
  NotReadyNode("no-id-off", "");   // a VM by that name, powered off
  env_.instances.SetVm("no-id-off", {.shutdown = true, .metadata = {}});
  NotReadyNode("aws-off", "aws:///us-east-1a/i-9");  // foreign, and "off" if asked
  env_.instances.SetVm("aws-off", {.shutdown = true, .metadata = {}});
  NotReadyNode("ours-gone");  // the control: ours and gone
  Start();
  // The next pass reads the informer's copy: let it see the deletion first, or it would look
  // the deleted Node up (and try to delete it) once more.
  ASSERT_TRUE(Eventually([&] { return env_.nodes->Get("ours-gone") == nullptr; }));
  NextPass();
  EXPECT_TRUE(env_.GetNode("bare-metal").is_object());
  EXPECT_TRUE(env_.GetNode("ours-gone").is_null());
  EXPECT_FALSE(kube::HasTaint(env_.GetNode("no-id-off"), kShutdownTaintKey));
  EXPECT_FALSE(kube::HasTaint(env_.GetNode("aws-off"), kShutdownTaintKey));
  EXPECT_EQ(env_.client->deletes().size(), 1u);
  EXPECT_EQ(env_.instances.calls(), 1) << "only the node with a vsphere:// providerID is looked up";
  EXPECT_EQ(Actions("deleted"), 1);
  EXPECT_EQ(Actions("shutdown_tainted"), 0);

  // During an outage they are not "waiting" either: the Event counts only ours.
  NotReadyNode("ours-waiting");
  env_.instances.SetVm("ours-waiting", {});
  env_.instances.SetReadyError(NotSynced());
  NextPass();
  std::string message;
  EXPECT_EQ(CheckFailedEvents({"ours-waiting"}, &message), 1);
  EXPECT_EQ(CheckFailedEvents({"aws-off", "bare-metal", "no-id-off"}), 0);
  EXPECT_THAT(message, ::testing::HasSubstr("this NotReady node is not checked"));
}

// The informer's copy can be behind a write made by another writer or an earlier pass: the
// controller must not count (or report) an action the fresh Node shows as done already.
TEST_F(NodeLifecycleControllerTest, ActionsAlreadyDoneOnTheServerAreNotCountedAgain) {
  env_.CreateKubeletNode("awake", /*ready=*/true);
  env_.EditNode("awake", [](kube::Json& n) {
    kube::AddTaint(n, kube::Taint{std::string(kShutdownTaintKey), "", "NoSchedule"});
  });
  ASSERT_TRUE(env_.StoreSees(
      "awake", [](const kube::Json& n) { return kube::HasTaint(n, kShutdownTaintKey); }));
  NotReadyNode("gone");  // ours, and its VM does not exist
  env_.nodes->Stop();    // the informer's copies stay as they are now: stale from here on
  env_.EditNode("awake",
                [](kube::Json& n) { kube::RemoveTaint(n, kShutdownTaintKey, "NoSchedule"); });
  ASSERT_TRUE(env_.emulator.Delete("nodes", "", "gone").ok());
  Start();
  EXPECT_EQ(Actions("shutdown_untainted"), 0) << "the fresh Node had no taint: nothing written";
  EXPECT_EQ(Actions("deleted"), 0) << "the Node was gone already: DELETE found nothing";
  EXPECT_EQ(Actions("write_failed"), 0);
  EXPECT_EQ(env_.client->deletes().size(), 1u);  // it did ask, and took NotFound as done
}

}  // namespace
}  // namespace ccm::controllers
