#include "vsphere/update_set.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/chunking.h"
#include "vsphere/envelope_for_tests.h"
#include "vsphere/update_stream.h"

namespace ccm::vsphere {
namespace {

// Every case runs through the streaming parser fed in every chunking; "Whole" goes through
// ParseUpdateSet itself.
class UpdateSetTest : public testing::TestWithParam<Chunking> {
 protected:
  static absl::StatusOr<UpdateSet> Parse(absl::string_view xml) {
    if (GetParam().kind == Chunking::kWhole) return ParseUpdateSet(xml);
    UpdateSetCollector collector;
    UpdateStreamParser parser(collector);
    for (absl::string_view piece : Split(xml, GetParam())) {
      absl::Status s = parser.Feed(piece);
      if (!s.ok()) return s;
    }
    absl::Status s = parser.Finish();
    if (!s.ok()) return s;
    return collector.Take(parser);
  }
};

const char kFull[] = R"(<WaitForUpdatesExResponse xmlns="urn:vim25"><returnval>
<version>7</version>
<filterSet><filter type="PropertyFilter">session[52a]1</filter>
 <objectSet><kind>enter</kind><obj type="VirtualMachine">vm-42</obj>
  <changeSet><name>summary.runtime.powerState</name><op>assign</op>
   <val xsi:type="VirtualMachinePowerState">poweredOn</val></changeSet>
  <changeSet><name>guest.net</name><op>assign</op><val xsi:type="ArrayOfGuestNicInfo">
   <GuestNicInfo><network>VM Network</network><ipAddress>10.0.0.11</ipAddress></GuestNicInfo>
  </val></changeSet>
  <missingSet><path>config.extraConfig</path><fault><fault xsi:type="NoPermission"></fault>
   <localizedMessage>denied</localizedMessage></fault></missingSet>
 </objectSet>
 <objectSet><kind>modify</kind><obj type="VirtualMachine">vm-43</obj>
  <changeSet><name>guest.hostName</name><op>remove</op></changeSet>
  <changeSet><name>config.hardware.device</name><op>add</op><val>x</val></changeSet>
  <changeSet><name>guest.ipAddress</name><op>indirectRemove</op></changeSet>
 </objectSet>
 <objectSet><kind>leave</kind><obj type="VirtualMachine">vm-44</obj></objectSet>
 <missingSet><obj type="VirtualMachine">vm-45</obj><fault><fault xsi:type="ManagedObjectNotFound"/></fault></missingSet>
</filterSet>
<truncated>true</truncated>
</returnval></WaitForUpdatesExResponse>)";

TEST_P(UpdateSetTest, ParsesFullEnvelope) {
  auto set = Parse(TestEnvelope(kFull));
  ASSERT_TRUE(set.ok()) << set.status();
  EXPECT_TRUE(set->has_updates);
  EXPECT_EQ(set->version, "7");
  EXPECT_TRUE(set->truncated);
  ASSERT_EQ(set->filters.size(), 1u);
  const FilterUpdate& f = set->filters[0];
  EXPECT_EQ(f.filter, "session[52a]1");
  ASSERT_EQ(f.objects.size(), 3u);

  const ObjectUpdate& enter = f.objects[0];
  EXPECT_EQ(enter.kind, ObjectUpdateKind::kEnter);
  EXPECT_EQ(enter.obj, (Moref{"VirtualMachine", "vm-42"}));
  ASSERT_EQ(enter.changes.size(), 2u);
  EXPECT_EQ(enter.changes[0].name, "summary.runtime.powerState");
  EXPECT_EQ(enter.changes[0].op, PropertyChangeOp::kAssign);
  EXPECT_STREQ(enter.changes[0].val.text().get(), "poweredOn");
  EXPECT_EQ(enter.changes[1].name, "guest.net");
  EXPECT_STREQ(enter.changes[1].val.child("GuestNicInfo").child("ipAddress").text().get(),
               "10.0.0.11");
  ASSERT_EQ(enter.missing.size(), 1u);
  EXPECT_EQ(enter.missing[0].path, "config.extraConfig");
  EXPECT_EQ(enter.missing[0].fault_type, "NoPermission");
  EXPECT_EQ(enter.missing[0].message, "denied");

  const ObjectUpdate& modify = f.objects[1];
  EXPECT_EQ(modify.kind, ObjectUpdateKind::kModify);
  ASSERT_EQ(modify.changes.size(), 3u);
  EXPECT_EQ(modify.changes[0].op, PropertyChangeOp::kRemove);
  EXPECT_FALSE(modify.changes[0].val);
  EXPECT_EQ(modify.changes[1].op, PropertyChangeOp::kAdd);
  EXPECT_EQ(modify.changes[2].op, PropertyChangeOp::kIndirectRemove);

  EXPECT_EQ(f.objects[2].kind, ObjectUpdateKind::kLeave);
  EXPECT_EQ(f.objects[2].obj.value, "vm-44");
  EXPECT_TRUE(f.objects[2].changes.empty());

  ASSERT_EQ(f.missing_objects.size(), 1u);
  EXPECT_EQ(f.missing_objects[0].obj.value, "vm-45");
  EXPECT_EQ(f.missing_objects[0].fault_type, "ManagedObjectNotFound");
}

TEST_P(UpdateSetTest, ValuesOutliveTheParseCall) {
  PropertyChange change;
  {
    auto set = Parse(kFull);
    ASSERT_TRUE(set.ok()) << set.status();
    UpdateSet copy = *set;  // shares the document
    set = absl::UnknownError("drop the original");
    change = copy.filters[0].objects[0].changes[0];
    EXPECT_STREQ(change.val.text().get(), "poweredOn");
  }
}

TEST_P(UpdateSetTest, EmptyResponseMeansNoUpdates) {
  for (const std::string& xml :
       {TestEnvelope(R"(<WaitForUpdatesExResponse xmlns="urn:vim25"/>)"),
        std::string(
            R"(<WaitForUpdatesExResponse xmlns="urn:vim25"></WaitForUpdatesExResponse>)")}) {
    auto set = Parse(xml);
    ASSERT_TRUE(set.ok()) << set.status();
    EXPECT_FALSE(set->has_updates);
    EXPECT_TRUE(set->filters.empty());
  }
}

TEST_P(UpdateSetTest, PrefixedElementsAndBareReturnval) {
  auto set = Parse(R"(<v:returnval xmlns:v="urn:vim25"><v:version>-</v:version>
    <v:filterSet><v:filter>f1</v:filter><v:objectSet><v:kind>leave</v:kind>
    <v:obj type="VirtualMachine">vm-1</v:obj></v:objectSet></v:filterSet></v:returnval>)");
  ASSERT_TRUE(set.ok()) << set.status();
  EXPECT_EQ(set->version, "-");
  EXPECT_FALSE(set->truncated);
  ASSERT_EQ(set->filters.size(), 1u);
  ASSERT_EQ(set->filters[0].objects.size(), 1u);
  EXPECT_EQ(set->filters[0].objects[0].kind, ObjectUpdateKind::kLeave);
}

struct BadCase {
  const char* name;
  std::string xml;
  absl::StatusCode code;
  const char* message_part;
};

TEST_P(UpdateSetTest, RejectsBrokenDocuments) {
  std::string full = TestEnvelope(kFull);
  const BadCase cases[] = {
      {"empty", "", absl::StatusCode::kDataLoss, "XML error"},
      {"truncated", full.substr(0, full.size() / 2), absl::StatusCode::kDataLoss, "XML error"},
      {"garbage", "<<<not xml", absl::StatusCode::kDataLoss, "XML error"},
      {"other element", "<RetrievePropertiesExResponse/>", absl::StatusCode::kDataLoss,
       "no WaitForUpdatesExResponse"},
      {"no version", "<returnval><filterSet/></returnval>", absl::StatusCode::kDataLoss,
       "without version"},
      {"no kind",
       "<returnval><version>1</version><filterSet><objectSet><obj>vm-1</obj></objectSet>"
       "</filterSet></returnval>",
       absl::StatusCode::kDataLoss, "without kind"},
      {"bad kind",
       "<returnval><version>1</version><filterSet><objectSet><kind>move</kind><obj>vm-1</obj>"
       "</objectSet></filterSet></returnval>",
       absl::StatusCode::kDataLoss, "unknown object update kind \"move\""},
      {"no obj",
       "<returnval><version>1</version><filterSet><objectSet><kind>enter</kind></objectSet>"
       "</filterSet></returnval>",
       absl::StatusCode::kDataLoss, "without obj"},
      {"bad op",
       "<returnval><version>1</version><filterSet><objectSet><kind>modify</kind><obj>vm-1</obj>"
       "<changeSet><name>a</name><op>set</op></changeSet></objectSet></filterSet></returnval>",
       absl::StatusCode::kDataLoss, "unknown property change op \"set\""},
      {"change without name",
       "<returnval><version>1</version><filterSet><objectSet><kind>modify</kind><obj>vm-1</obj>"
       "<changeSet><op>assign</op></changeSet></objectSet></filterSet></returnval>",
       absl::StatusCode::kDataLoss, "without name or op"},
      // A fault is its typed status, as the Client gets it (before: Unavailable here).
      {"soap fault",
       TestEnvelope("<soapenv:Fault><faultcode>ServerFaultCode</faultcode>"
                    "<faultstring>The session is not authenticated.</faultstring></soapenv:Fault>"),
       absl::StatusCode::kUnknown, "UnknownFault: The session is not authenticated."},
      {"typed soap fault",
       TestEnvelope("<soapenv:Fault><faultcode>ServerFaultCode</faultcode>"
                    "<faultstring>The session is not authenticated.</faultstring><detail>"
                    "<NotAuthenticatedFault xmlns=\"urn:vim25\" xsi:type=\"NotAuthenticated\"/>"
                    "</detail></soapenv:Fault>"),
       absl::StatusCode::kUnauthenticated, "NotAuthenticated: The session is not authenticated."},
      {"junk after the document", TestEnvelope(kFull) + "<x/>", absl::StatusCode::kDataLoss,
       "junk after document element"},
      {"doctype", "<!DOCTYPE x [<!ENTITY a \"b\">]><returnval/>", absl::StatusCode::kDataLoss,
       "DOCTYPE is not allowed"},
  };
  for (const BadCase& c : cases) {
    auto set = Parse(c.xml);
    ASSERT_FALSE(set.ok()) << c.name;
    EXPECT_EQ(set.status().code(), c.code) << c.name << ": " << set.status();
    EXPECT_THAT(std::string(set.status().message()), testing::HasSubstr(c.message_part)) << c.name;
  }
}

TEST(UpdateSetEnumTest, Names) {
  EXPECT_EQ(ToString(ObjectUpdateKind::kLeave), "leave");
  EXPECT_EQ(ToString(PropertyChangeOp::kIndirectRemove), "indirectRemove");
}

INSTANTIATE_TEST_SUITE_P(AllChunkings, UpdateSetTest, testing::ValuesIn(AllChunkings()),
                         [](const testing::TestParamInfo<Chunking>& p) { return p.param.name(); });

}  // namespace
}  // namespace ccm::vsphere
