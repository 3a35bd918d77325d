#include "vsphere/pbm/wire.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "vsphere/soap.h"

namespace ccm::vsphere::pbm {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// The method's response element of a SOAP answer, parsed the way the client does.
SoapResponse Answer(const std::string& method, const std::string& body) {
  auto r = ParseSoapResponse(absl::StrCat(
      R"(<?xml version="1.0" encoding="UTF-8"?><soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"><soapenv:Body><)",
      method, R"(Response xmlns="urn:pbm">)", body, "</", method,
      "Response></soapenv:Body></soapenv:Envelope>"));
  EXPECT_TRUE(r.ok()) << r.status();
  return *r;
}

TEST(PbmWireTest, Arguments) {
  const Moref pm{"PbmProfileProfileManager", "ProfileManager"};
  EXPECT_EQ(RetrieveServiceContentArgs(),
            R"(<_this type="PbmServiceInstance">ServiceInstance</_this>)");
  EXPECT_EQ(QueryProfileArgs(pm),
            R"(<_this type="PbmProfileProfileManager">ProfileManager</_this>)"
            "<resourceType><resourceType>STORAGE</resourceType></resourceType>");
  EXPECT_EQ(RetrieveContentArgs(pm, {"a", "b&c"}),
            R"(<_this type="PbmProfileProfileManager">ProfileManager</_this>)"
            "<profileIds><uniqueId>a</uniqueId></profileIds>"
            "<profileIds><uniqueId>b&amp;c</uniqueId></profileIds>");
  const std::string check =
      CheckCompatibilityArgs({"PbmPlacementSolver", "placementSolver"},
                             {{"Datastore", "datastore-1"}, {"StoragePod", "group-p2"}}, "id-1");
  EXPECT_EQ(check,
            R"(<_this type="PbmPlacementSolver">placementSolver</_this>)"
            "<hubsToSearch><hubType>Datastore</hubType><hubId>datastore-1</hubId></hubsToSearch>"
            "<hubsToSearch><hubType>StoragePod</hubType><hubId>group-p2</hubId></hubsToSearch>"
            "<profile><uniqueId>id-1</uniqueId></profile>");
}

TEST(PbmWireTest, ServiceContent) {
  SoapResponse r =
      Answer("PbmRetrieveServiceContent",
             R"(<returnval><aboutInfo><name>PBM</name></aboutInfo>)"
             R"(<sessionManager type="PbmSessionManager">SessionManager</sessionManager>)"
             R"(<profileManager type="PbmProfileProfileManager">ProfileManager</profileManager>)"
             R"(<placementSolver type="PbmPlacementSolver">placementSolver</placementSolver>)"
             R"(</returnval>)");
  auto sc = ParseServiceContent(r.body);
  ASSERT_TRUE(sc.ok()) << sc.status();
  EXPECT_EQ(sc->profile_manager, (Moref{"PbmProfileProfileManager", "ProfileManager"}));
  EXPECT_EQ(sc->placement_solver, (Moref{"PbmPlacementSolver", "placementSolver"}));

  auto missing = ParseServiceContent(Answer("PbmRetrieveServiceContent", "<returnval/>").body);
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kInternal);
  EXPECT_THAT(missing.status().message(), HasSubstr("placementSolver"));
}

TEST(PbmWireTest, ProfilesAndIds) {
  SoapResponse ids = Answer("PbmQueryProfile",
                            "<returnval><uniqueId>a</uniqueId></returnval>"
                            "<returnval><uniqueId>b</uniqueId></returnval><returnval/>");
  EXPECT_THAT(ParseProfileIds(ids.body), ElementsAre("a", "b"));
  SoapResponse content = Answer(
      "PbmRetrieveContent",
      R"(<returnval xsi:type="PbmCapabilityProfile"><profileId><uniqueId>a</uniqueId></profileId>)"
      R"(<name>vSAN Default Storage Policy</name><profileCategory>REQUIREMENT</profileCategory>)"
      R"(</returnval><returnval xsi:type="PbmCapabilityProfile"><name>no id</name></returnval>)");
  std::vector<Profile> p = ParseProfiles(content.body);
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].id, "a");
  EXPECT_EQ(p[0].name, "vSAN Default Storage Policy");
  EXPECT_EQ(p[0].category, "REQUIREMENT");
}

TEST(PbmWireTest, Compatibility) {
  SoapResponse r = Answer(
      "PbmCheckCompatibility",
      "<returnval><hub><hubType>Datastore</hubType><hubId>datastore-1</hubId></hub></returnval>"
      "<returnval><hub><hubType>Datastore</hubType><hubId>datastore-2</hubId></hub>"
      R"(<error><fault xsi:type="PbmNonExistentHubs"/><localizedMessage>not vSAN</localizedMessage></error>)"
      "</returnval>"
      "<returnval><hub><hubType>Datastore</hubType><hubId>datastore-3</hubId></hub>"
      R"(<error><fault xsi:type="PbmFault"/></error></returnval>)");
  std::vector<HubCompatibility> h = ParseCompatibility(r.body);
  ASSERT_EQ(h.size(), 3u);
  EXPECT_EQ(h[0].hub, (Moref{"Datastore", "datastore-1"}));
  EXPECT_TRUE(h[0].compatible);
  EXPECT_FALSE(h[1].compatible);
  EXPECT_EQ(h[1].reason, "not vSAN");
  EXPECT_FALSE(h[2].compatible);
  EXPECT_EQ(h[2].reason, "PbmFault");
}

}  // namespace
}  // namespace ccm::vsphere::pbm
