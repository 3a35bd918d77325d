#include "vsphere/update_stream.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/chunking.h"
#include "vsphere/envelope_for_tests.h"

namespace ccm::vsphere {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string ObjectSet(const std::string& kind, const std::string& vm) {
  return absl::StrCat("<objectSet><kind>", kind, "</kind><obj type=\"VirtualMachine\">", vm,
                      "</obj><changeSet><name>name</name><op>assign</op>"
                      "<val xsi:type=\"xsd:string\">",
                      vm, "-name</val></changeSet></objectSet>");
}

std::string Answer(const std::string& filter_sets) {
  return TestEnvelope(absl::StrCat(
      R"(<WaitForUpdatesExResponse xmlns="urn:vim25"><returnval><version>12</version>)",
      filter_sets, "<truncated>true</truncated></returnval></WaitForUpdatesExResponse>"));
}

// Records every callback as a line; optionally fails on one object.
class Recorder : public UpdateHandler {
 public:
  absl::Status OnFilterSet(const std::string& filter) override {
    events.push_back("filterSet " + filter);
    return absl::OkStatus();
  }
  absl::Status OnObject(const std::string& filter, ObjectUpdate u) override {
    std::string line = absl::StrCat("object ", filter, " ", u.obj.value, " ", ToString(u.kind));
    for (const PropertyChange& c : u.changes) absl::StrAppend(&line, " ", c.val.text().get());
    events.push_back(line);
    fed_at.push_back(fed);
    if (u.obj.value == fail_on) return absl::AbortedError("handler says no");
    return absl::OkStatus();
  }
  absl::Status OnMissingObject(const std::string& filter, MissingObject m) override {
    events.push_back(absl::StrCat("missing ", filter, " ", m.obj.value, " ", m.fault_type));
    return absl::OkStatus();
  }
  std::vector<std::string> events;
  std::vector<size_t> fed_at;  // bytes fed when each object arrived
  size_t fed = 0;
  std::string fail_on;
};

absl::Status FeedAll(UpdateStreamParser& p, Recorder& r, absl::string_view xml,
                     const Chunking& chunking) {
  for (absl::string_view piece : Split(xml, chunking)) {
    r.fed += piece.size();
    absl::Status s = p.Feed(piece);
    if (!s.ok()) return s;
  }
  return p.Finish();
}

class UpdateStreamTest : public testing::TestWithParam<Chunking> {};

TEST_P(UpdateStreamTest, CallbacksInDocumentOrder) {
  const std::string xml =
      Answer(absl::StrCat("<filterSet><filter type=\"PropertyFilter\">f1</filter>",
                          ObjectSet("enter", "vm-1"), ObjectSet("modify", "vm-2"),
                          "<missingSet><obj type=\"VirtualMachine\">vm-9</obj><fault><fault "
                          "xsi:type=\"ManagedObjectNotFound\"/></fault></missingSet></filterSet>",
                          "<filterSet><filter>f2</filter>", ObjectSet("leave", "vm-3"),
                          "</filterSet>", "<filterSet><filter>f3</filter></filterSet>"));
  Recorder r;
  UpdateStreamParser p(r);
  ASSERT_TRUE(FeedAll(p, r, xml, GetParam()).ok());
  EXPECT_THAT(r.events, ElementsAre("filterSet f1", "object f1 vm-1 enter vm-1-name",
                                    "object f1 vm-2 modify vm-2-name",
                                    "missing f1 vm-9 ManagedObjectNotFound", "filterSet f2",
                                    "object f2 vm-3 leave vm-3-name", "filterSet f3"));
  EXPECT_TRUE(p.has_updates());
  EXPECT_EQ(p.version(), "12");
  EXPECT_TRUE(p.truncated());
  EXPECT_TRUE(p.emitted());
}

TEST_P(UpdateStreamTest, FaultIsItsTypedStatus) {
  const std::string xml = TestEnvelope(
      "<soapenv:Fault><faultcode>ServerFaultCode</faultcode><faultstring>session gone"
      "</faultstring><detail><NotAuthenticatedFault xmlns=\"urn:vim25\" "
      "xsi:type=\"NotAuthenticated\"><object type=\"SessionManager\">SessionManager</object>"
      "</NotAuthenticatedFault></detail></soapenv:Fault>");
  Recorder r;
  UpdateStreamParser p(r);
  absl::Status s = FeedAll(p, r, xml, GetParam());
  EXPECT_EQ(s.code(), absl::StatusCode::kUnauthenticated) << s;
  EXPECT_TRUE(IsNotAuthenticated(s)) << s;
  EXPECT_FALSE(p.emitted());
}

TEST_P(UpdateStreamTest, MalformedAfterObjectsKeepsWhatWasHandedOn) {
  const std::string xml =
      Answer(absl::StrCat("<filterSet><filter>f1</filter>", ObjectSet("enter", "vm-1"),
                          "\n<objectSet><kind>enter</kind><obj <</objectSet>"));
  Recorder r;
  UpdateStreamParser p(r);
  absl::Status s = FeedAll(p, r, xml, GetParam());
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("malformed WaitForUpdatesEx response: XML error at line 4, column"));
  EXPECT_THAT(r.events, ElementsAre("filterSet f1", "object f1 vm-1 enter vm-1-name"));
  EXPECT_TRUE(p.emitted());
}

TEST_P(UpdateStreamTest, HandlerErrorStopsTheParse) {
  const std::string xml =
      Answer(absl::StrCat("<filterSet><filter>f1</filter>", ObjectSet("enter", "vm-1"),
                          ObjectSet("enter", "vm-2"), ObjectSet("enter", "vm-3"), "</filterSet>"));
  Recorder r;
  r.fail_on = "vm-2";
  UpdateStreamParser p(r);
  EXPECT_EQ(FeedAll(p, r, xml, GetParam()), absl::AbortedError("handler says no"));
  EXPECT_EQ(r.events.size(), 3u);  // filterSet, vm-1, vm-2
}

INSTANTIATE_TEST_SUITE_P(AllChunkings, UpdateStreamTest, testing::ValuesIn(AllChunkings()),
                         [](const testing::TestParamInfo<Chunking>& p) { return p.param.name(); });

// Streaming for real: each object arrives as soon as the byte closing its objectSet is fed,
// not when the answer ends.
TEST(UpdateStreamTest, HandsOnEachObjectWhenItsObjectSetCloses) {
  const std::string xml =
      Answer(absl::StrCat("<filterSet><filter>f1</filter>", ObjectSet("enter", "vm-1"),
                          ObjectSet("enter", "vm-2"), "</filterSet>"));
  Recorder r;
  UpdateStreamParser p(r);
  ASSERT_TRUE(FeedAll(p, r, xml, {Chunking::kBytes}).ok());
  std::vector<size_t> closes;
  for (size_t at = xml.find("</objectSet>"); at != std::string::npos;
       at = xml.find("</objectSet>", at + 1)) {
    closes.push_back(at + std::string("</objectSet>").size());
  }
  EXPECT_EQ(r.fed_at, closes);
}

// Each objectSet gets a document of its own, and the parser keeps none of them.
TEST(UpdateStreamTest, KeepsNoDocumentOfItsOwn) {
  struct Watcher : UpdateHandler {
    absl::Status OnObject(const std::string&, ObjectUpdate u) override {
      EXPECT_TRUE(previous.expired()) << "a document outlived its ObjectUpdate";
      EXPECT_EQ(LocalName(u.doc->document_element().name()), "objectSet");
      EXPECT_FALSE(u.doc->document_element().next_sibling());
      previous = u.doc;
      ++objects;
      return absl::OkStatus();
    }
    std::weak_ptr<const pugi::xml_document> previous;
    int objects = 0;
  } w;
  std::string sets = "<filterSet><filter>f1</filter>";
  for (int i = 0; i < 500; ++i) sets += ObjectSet("enter", absl::StrCat("vm-", i));
  sets += "</filterSet>";
  UpdateStreamParser p(w);
  ASSERT_TRUE(p.Feed(Answer(sets)).ok());
  ASSERT_TRUE(p.Finish().ok());
  EXPECT_EQ(w.objects, 500);
}

TEST(UpdateStreamTest, EveryTruncationFailsAtFinish) {
  const std::string xml = Answer(
      absl::StrCat("<filterSet><filter>f1</filter>", ObjectSet("enter", "vm-1"), "</filterSet>"));
  for (size_t n = 0; n < xml.size(); ++n) {
    Recorder r;
    UpdateStreamParser p(r);
    ASSERT_TRUE(p.Feed(absl::string_view(xml).substr(0, n)).ok()) << n;
    absl::Status s = p.Finish();
    ASSERT_EQ(s.code(), absl::StatusCode::kDataLoss) << n << ": " << s;
    EXPECT_THAT(std::string(s.message()),
                HasSubstr("malformed WaitForUpdatesEx response: XML error at line"));
  }
}

TEST(UpdateStreamTest, DecodeErrorsSayWhere) {
  const std::string xml = Answer(
      "<filterSet><filter>f1</filter>\n<objectSet><kind>move</kind><obj>vm-1</obj></objectSet>"
      "</filterSet>");
  Recorder r;
  UpdateStreamParser p(r);
  absl::Status s = p.Feed(xml);
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("unknown object update kind \"move\" (objectSet ending at line 4, column"));
}

TEST(UpdateStreamTest, ResetForgetsTheDocument) {
  const std::string xml = Answer(
      absl::StrCat("<filterSet><filter>f1</filter>", ObjectSet("enter", "vm-1"), "</filterSet>"));
  Recorder r;
  UpdateStreamParser p(r);
  ASSERT_TRUE(p.Feed(xml.substr(0, xml.find("</kind>"))).ok());  // inside the objectSet
  p.Reset();
  EXPECT_FALSE(p.emitted());
  ASSERT_TRUE(p.Feed(xml).ok());
  ASSERT_TRUE(p.Finish().ok());
  EXPECT_THAT(r.events, ElementsAre("filterSet f1", "object f1 vm-1 enter vm-1-name"));
  EXPECT_EQ(p.version(), "12");
}

TEST(UpdateStreamTest, ResponseWithoutReturnvalHasNoUpdates) {
  Recorder r;
  UpdateStreamParser p(r);
  ASSERT_TRUE(p.Feed(TestEnvelope("<WaitForUpdatesExResponse xmlns=\"urn:vim25\"/>")).ok());
  ASSERT_TRUE(p.Finish().ok());
  EXPECT_FALSE(p.has_updates());
  EXPECT_FALSE(p.emitted());
}

}  // namespace
}  // namespace ccm::vsphere
