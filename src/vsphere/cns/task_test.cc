#include "vsphere/cns/task.h"

#include <string>

#include "gtest/gtest.h"
#include "vsphere/update_stream.h"

namespace ccm::vsphere::cns {
namespace {

// One task update as WaitForUpdatesEx sends it, with `changes` (changeSet elements).
ObjectUpdate TaskUpdate(const std::string& kind, const std::string& changes) {
  const std::string xml = R"(<WaitForUpdatesExResponse xmlns="urn:vim25"><returnval>
<version>3</version><filterSet><filter type="PropertyFilter">f1</filter>
<objectSet><kind>)" + kind +
                          R"(</kind><obj type="Task">task-7</obj>)" + changes +
                          "</objectSet></filterSet></returnval></WaitForUpdatesExResponse>";
  absl::StatusOr<UpdateSet> set = ParseUpdateSet(xml);
  EXPECT_TRUE(set.ok()) << set.status();
  return set.ok() ? set->filters.at(0).objects.at(0) : ObjectUpdate{};
}

std::string State(const std::string& s) {
  return "<changeSet><name>info.state</name><op>assign</op><val xsi:type=\"TaskInfoState\">" + s +
         "</val></changeSet>";
}

constexpr char kResult[] = R"(<changeSet><name>info.result</name><op>assign</op>
<val xsi:type="CnsVolumeOperationBatchResult"><volumeResults xsi:type="CnsVolumeCreateResult">
<volumeId><id>vol-1</id></volumeId></volumeResults></val></changeSet>)";
constexpr char kError[] = R"(<changeSet><name>info.error</name><op>assign</op>
<val xsi:type="LocalizedMethodFault"><fault xsi:type="CnsFault"><reason>r</reason></fault>
<localizedMessage>no room</localizedMessage></val></changeSet>)";
constexpr char kNoError[] = "<changeSet><name>info.error</name><op>assign</op></changeSet>";

TEST(DoneTaskInfoTest, Table) {
  struct Case {
    std::string name, kind, changes;
    bool ok, done;
    std::string state, fault, message;
    bool has_result;
  };
  const Case cases[] = {
      {"queued on entering", "enter", State("queued"), true, false, "", "", "", false},
      {"running", "modify", State("running"), true, false, "", "", "", false},
      {"no state change", "modify", kResult, true, false, "", "", "", false},
      {"success with its result", "modify", State("success") + kResult + kNoError, true, true,
       "success", "", "", true},
      {"entering already done", "enter", kResult + State("success"), true, true, "success", "", "",
       true},
      {"error with its fault", "modify", State("error") + kError, true, true, "error", "CnsFault",
       "no room", false},
      {"error without a fault", "modify", State("error"), true, true, "error", "UnknownFault", "",
       false},
      {"unknown state", "modify", State("paused"), false, false, "", "", "", false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    absl::StatusOr<std::optional<TaskInfo>> info = DoneTaskInfo(TaskUpdate(c.kind, c.changes));
    ASSERT_EQ(info.ok(), c.ok) << info.status();
    if (!c.ok) {
      EXPECT_NE(info.status().message().find("task-7"), absl::string_view::npos);
      continue;
    }
    ASSERT_EQ(info->has_value(), c.done);
    if (!c.done) continue;
    const TaskInfo& t = **info;
    EXPECT_EQ(t.state, c.state);
    EXPECT_EQ(t.error_fault, c.fault);
    EXPECT_EQ(t.error_message, c.message);
    EXPECT_EQ(static_cast<bool>(t.result), c.has_result);
    if (c.has_result) {
      auto results = ParseBatchResult(t.result);
      ASSERT_TRUE(results.ok()) << results.status();
      EXPECT_EQ(results->at(0).volume_id, "vol-1");
    }
  }
}

TEST(TaskVanishedTest, RecognisedOnlyWithItsPayload) {
  const absl::Status s = TaskVanishedError({"Task", "task-9"});
  EXPECT_TRUE(IsTaskVanished(s));
  EXPECT_TRUE(absl::IsUnavailable(s));
  EXPECT_FALSE(IsTaskVanished(absl::UnavailableError(s.message())));
}

}  // namespace
}  // namespace ccm::vsphere::cns
