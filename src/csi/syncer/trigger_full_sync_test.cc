#include "csi/syncer/trigger_full_sync.h"

#include "gtest/gtest.h"

namespace ccm::csi::syncer {
namespace {

using A = TriggerDecision::Action;

TEST(TriggerFullSyncTest, DecidesAsTheReference) {
  struct Case {
    const char* name;
    TriggerState state;
    A want;
    const char* message;  // a part of it
  };
  const std::vector<Case> cases = {
      {"initial instance", {"csifullsync", 0, 0, false}, A::kNone, ""},
      {"done already", {"csifullsync", 4, 4, false}, A::kNone, ""},
      {"next id", {"csifullsync", 5, 4, false}, A::kRun, ""},
      {"skipped ids",
       {"csifullsync", 7, 4, false},
       A::kRefuse,
       "TriggerSyncID: 7 is invalid. TriggerSyncID should be one greater than LastTriggerSyncID."},
      {"lower id", {"csifullsync", 3, 4, false}, A::kRefuse, "TriggerSyncID: 3 is invalid"},
      {"while one runs",
       {"csifullsync", 5, 4, true},
       A::kSkipRunning,
       "A full sync is already in progress. Ignoring this sync with triggersync ID: 5"},
      {"another name",
       {"mine", 1, 0, false},
       A::kRefuse,
       "Only \"csifullsync\" should be used to trigger full sync and not \"mine\""},
  };
  for (const Case& c : cases) {
    TriggerDecision d = DecideTrigger(c.state);
    EXPECT_EQ(d.action, c.want) << c.name;
    EXPECT_NE(d.message.find(c.message), std::string::npos) << c.name << ": " << d.message;
  }
}

TEST(TriggerFullSyncTest, StateFromTheObject) {
  TriggerState s = TriggerStateOf(nlohmann::json::parse(R"({
    "metadata": {"name": "csifullsync"},
    "spec": {"triggerSyncID": 3},
    "status": {"inProgress": true, "lastTriggerSyncID": 2}})"));
  EXPECT_EQ(s.name, "csifullsync");
  EXPECT_EQ(s.spec_id, 3u);
  EXPECT_EQ(s.last_id, 2u);
  EXPECT_TRUE(s.in_progress);
  // Missing or wrong types read as 0 / false.
  s = TriggerStateOf(nlohmann::json::parse(R"({"metadata": {"name": "x"},
    "spec": {"triggerSyncID": "3"}})"));
  EXPECT_EQ(s.spec_id, 0u);
  EXPECT_FALSE(s.in_progress);
}

}  // namespace
}  // namespace ccm::csi::syncer
