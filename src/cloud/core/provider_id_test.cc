#include "cloud/core/provider_id.h"

#include <gtest/gtest.h>

namespace ccm::cloud {
namespace {

TEST(ProviderIdTest, Format) {
  struct Case {
    const char* uuid;
    const char* want;  // nullptr = error
  } cases[] = {
      {"422e4956-ad22-1139-6d72-59cc8f26bc90", "vsphere://422e4956-ad22-1139-6d72-59cc8f26bc90"},
      {" 422E4956-AD22-1139-6D72-59CC8F26BC90 \n",
       "vsphere://422e4956-ad22-1139-6d72-59cc8f26bc90"},
      {"", nullptr},
      {"   ", nullptr},
      {"not-a-uuid", nullptr},
  };
  for (const Case& c : cases) {
    auto got = FormatProviderId(c.uuid);
    if (c.want == nullptr) {
      EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument) << c.uuid;
      continue;
    }
    ASSERT_TRUE(got.ok()) << c.uuid << ": " << got.status();
    EXPECT_EQ(*got, c.want);
  }
  EXPECT_NE(FormatProviderId("").status().message().find("empty"), absl::string_view::npos);
}

TEST(ProviderIdTest, Parse) {
  struct Case {
    const char* id;
    const char* want;  // nullptr = error
  } cases[] = {
      {"vsphere://422e4956-ad22-1139-6d72-59cc8f26bc90", "422e4956-ad22-1139-6d72-59cc8f26bc90"},
      {"vsphere://422E4956-AD22-1139-6D72-59CC8F26BC90", "422e4956-ad22-1139-6d72-59cc8f26bc90"},
      {"VSPHERE://422e4956-ad22-1139-6d72-59cc8f26bc90", "422e4956-ad22-1139-6d72-59cc8f26bc90"},
      {"  vsphere://422e4956-ad22-1139-6d72-59cc8f26bc90\n",
       "422e4956-ad22-1139-6d72-59cc8f26bc90"},
      {"vsphere:// 422e4956-ad22-1139-6d72-59cc8f26bc90", "422e4956-ad22-1139-6d72-59cc8f26bc90"},
      // The reference only strips the prefix when present: a bare UUID is accepted.
      {"422e4956-ad22-1139-6d72-59cc8f26bc90", "422e4956-ad22-1139-6d72-59cc8f26bc90"},
      {"", nullptr},
      {"vsphere://", nullptr},
      {"vsphere:///422e4956-ad22-1139-6d72-59cc8f26bc90", nullptr},
      {"aws:///us-east-1a/i-0123456789", nullptr},
      {"gce://project/zone/name", nullptr},
      {"vsphere://not-a-uuid", nullptr},
      {"kind://docker/kind/kind-worker", nullptr},
  };
  for (const Case& c : cases) {
    auto got = ParseProviderId(c.id);
    if (c.want == nullptr) {
      EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument) << c.id;
      continue;
    }
    ASSERT_TRUE(got.ok()) << c.id << ": " << got.status();
    EXPECT_EQ(*got, c.want) << c.id;
  }
}

TEST(ProviderIdTest, RoundTrip) {
  const char* uuid = "56492e42-22ad-3911-6d72-59cc8f26bc90";
  EXPECT_EQ(*ParseProviderId(*FormatProviderId(uuid)), uuid);
}

}  // namespace
}  // namespace ccm::cloud
