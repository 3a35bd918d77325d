#include "vsphere/cns/vsan_config.h"

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "vsphere/soap.h"

namespace ccm::vsphere::cns {
namespace {

using ::testing::HasSubstr;

TEST(VsanConfigTest, Args) {
  EXPECT_EQ(VsanClusterGetConfigArgs({"ClusterComputeResource", "domain-c7"}),
            R"(<_this type="VsanVcClusterConfigSystem">vsan-cluster-config-system</_this>)"
            R"(<cluster type="ClusterComputeResource">domain-c7</cluster>)");
}

TEST(VsanConfigTest, ParsesTheAnswer) {
  struct Case {
    const char* name;
    const char* returnval;  // inner XML
    VsanClusterConfig want;
    const char* error;  // non-empty: Internal with this
  } cases[] = {
      {"vSAN with file services",
       "<enabled>true</enabled><fileServiceConfig><enabled>true</enabled>"
       "<fileServerMemoryMB>0</fileServerMemoryMB></fileServiceConfig>",
       {true, true},
       ""},
      {"vSAN, file services off",
       "<enabled>true</enabled><fileServiceConfig><enabled>false</enabled></fileServiceConfig>",
       {true, false},
       ""},
      {"vSAN, no file service config", "<enabled>true</enabled>", {true, false}, ""},
      {"not a vSAN cluster", "<enabled>false</enabled>", {false, false}, ""},
      {"no enabled", "<fileServiceConfig/>", {}, "VsanConfigInfoEx.enabled is \"\""},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    absl::StatusOr<SoapResponse> r = ParseSoapResponse(absl::StrCat(
        R"(<?xml version="1.0"?><soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/"><soapenv:Body>)",
        R"(<VsanClusterGetConfigResponse xmlns="urn:vsan"><returnval>)", c.returnval,
        "</returnval></VsanClusterGetConfigResponse></soapenv:Body></soapenv:Envelope>"));
    ASSERT_TRUE(r.ok()) << r.status();
    absl::StatusOr<VsanClusterConfig> got = ParseVsanClusterConfig(r->returnval());
    if (c.error[0] != '\0') {
      ASSERT_FALSE(got.ok());
      EXPECT_EQ(got.status().code(), absl::StatusCode::kInternal);
      EXPECT_THAT(got.status().message(), HasSubstr(c.error));
      continue;
    }
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(*got, c.want);
  }
  EXPECT_FALSE(ParseVsanClusterConfig(pugi::xml_node()).ok());
}

}  // namespace
}  // namespace ccm::vsphere::cns
