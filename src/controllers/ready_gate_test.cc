#include "controllers/ready_gate.h"

#include "gtest/gtest.h"
#include "testing/fake_instances.h"

namespace ccm::controllers {
namespace {

TEST(ReadyGateTest, CountsSkippedPassesAndMarksEachOutageOnce) {
  cloud::FakeInstances instances;
  metrics::Registry registry;
  metrics::Family* skipped = registry.Counter("skipped_total", "test", {"reason"});
  ReadyGate gate(instances, "test", skipped);
  const absl::Status down = absl::UnavailableError("vCenter east: inventory not synced");

  // Each step: Ready() for that pass -> is the pass skipped, does an outage begin.
  struct Step {
    absl::Status ready;
    bool skip, began;
  };
  const Step steps[] = {
      {absl::OkStatus(), false, false},
      {down, true, true},  // outage 1
      {down, true, false},
      {down, true, false},
      {absl::OkStatus(), false, false},
      {down, true, true},  // outage 2
      {absl::OkStatus(), false, false},
  };
  int i = 0;
  for (const Step& s : steps) {
    instances.SetReadyError(s.ready);
    ReadyGate::Result r = gate.Check();
    EXPECT_EQ(!r.ready.ok(), s.skip) << "step " << i;
    EXPECT_EQ(r.outage_began, s.began) << "step " << i;
    EXPECT_EQ(gate.in_outage(), s.skip) << "step " << i;
    ++i;
  }
  EXPECT_EQ(skipped->Value({"vcenter_not_synced"}), 4);
  EXPECT_EQ(instances.calls(), 0) << "Ready() only, no per-node look-up";
}

TEST(ReadyGateTest, WaitUntilReadyReturnsAtOnceWhenReadyAndFalseWhenStopped) {
  cloud::FakeInstances instances;
  ReadyGate gate(instances, "test", nullptr);
  absl::Notification stop;
  EXPECT_TRUE(gate.WaitUntilReady(stop, absl::Milliseconds(1)));
  instances.SetReadyError(absl::UnavailableError("vCenter east: inventory not synced"));
  stop.Notify();
  EXPECT_FALSE(gate.WaitUntilReady(stop, absl::Milliseconds(1)));
  EXPECT_FALSE(gate.in_outage()) << "the start-up wait is not an outage";
}

}  // namespace
}  // namespace ccm::controllers
