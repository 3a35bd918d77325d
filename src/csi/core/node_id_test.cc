#include "csi/core/node_id.h"

#include <gtest/gtest.h>

namespace ccm::csi {
namespace {

using Kind = NodeRef::Kind;

TEST(NodeIdTest, Parse) {
  struct Case {
    const char* id;
    bool ok;
    NodeRef want;
  } cases[] = {
      {"564d395e-d807-e18a-cb25-b79f65eb2b9f",
       true,
       {Kind::kVmUuid, "564d395e-d807-e18a-cb25-b79f65eb2b9f"}},
      {"564D395E-D807-E18A-CB25-B79F65EB2B9F",
       true,
       {Kind::kVmUuid, "564d395e-d807-e18a-cb25-b79f65eb2b9f"}},
      {"k8s-worker-1", true, {Kind::kNodeName, "k8s-worker-1"}},
      {"worker-1.lab.example.com", true, {Kind::kNodeName, "worker-1.lab.example.com"}},
      {"", false, {}},
  };
  for (const Case& c : cases) {
    absl::StatusOr<NodeRef> got = ParseNodeId(c.id);
    if (!c.ok) {
      EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument) << c.id;
      continue;
    }
    ASSERT_TRUE(got.ok()) << c.id << ": " << got.status();
    EXPECT_EQ(*got, c.want) << c.id;
  }
}

TEST(NodeIdTest, FromProviderId) {
  struct Case {
    const char* provider_id;
    const char* want;  // nullptr = InvalidArgument
  } cases[] = {
      {"vsphere://422e4956-ad22-1139-6d72-59cc8f26bc90", "422e4956-ad22-1139-6d72-59cc8f26bc90"},
      {"VSPHERE://422E4956-AD22-1139-6D72-59CC8F26BC90", "422e4956-ad22-1139-6d72-59cc8f26bc90"},
      {"", nullptr},
      {"vsphere://", nullptr},
      {"aws:///us-east-1a/i-0123", nullptr},
      {"422e4956-ad22-1139-6d72-59cc8f26bc90", nullptr},
  };
  for (const Case& c : cases) {
    absl::StatusOr<std::string> got = VmUuidFromProviderId(c.provider_id);
    if (c.want == nullptr) {
      EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument) << c.provider_id;
      continue;
    }
    ASSERT_TRUE(got.ok()) << c.provider_id << ": " << got.status();
    EXPECT_EQ(*got, c.want);
  }
}

TEST(NodeIdTest, FromProductSerial) {
  struct Case {
    const char* serial;
    const char* want;  // nullptr = InvalidArgument
  } cases[] = {
      // The form VMware writes: space-separated bytes, one dash in the middle.
      {"VMware-56 4d 39 5e d8 07 e1 8a-cb 25 b7 9f 65 eb 2b 9f\n",
       "564d395e-d807-e18a-cb25-b79f65eb2b9f"},
      {"VMware-42 1C 5E 0A 3B 6F 9D 21-8E 4A 77 10 C3 B2 9E 01",
       "421c5e0a-3b6f-9d21-8e4a-7710c3b29e01"},
      {"56 4d 39 5e d8 07 e1 8a-cb 25 b7 9f 65 eb 2b 9f", nullptr},            // no prefix
      {"VMware-56 4d 39 5e d8 07 e1 8a-cb 25 b7 9f 65 eb 2b", nullptr},        // too short
      {"VMware-56 4d 39 5e d8 07 e1 8a-cb 25 b7 9f 65 eb 2b 9f 00", nullptr},  // too long
      {"VMware-zz 4d 39 5e d8 07 e1 8a-cb 25 b7 9f 65 eb 2b 9f", nullptr},
      {"", nullptr},
  };
  for (const Case& c : cases) {
    absl::StatusOr<std::string> got = VmUuidFromProductSerial(c.serial);
    if (c.want == nullptr) {
      EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument) << c.serial;
      continue;
    }
    ASSERT_TRUE(got.ok()) << c.serial << ": " << got.status();
    EXPECT_EQ(*got, c.want);
  }
}

TEST(NodeIdTest, ProductSerialUuidIsANodeId) {
  std::string uuid =
      *VmUuidFromProductSerial("VMware-56 4d 39 5e d8 07 e1 8a-cb 25 b7 9f 65 eb 2b 9f");
  EXPECT_EQ(ParseNodeId(uuid)->kind, Kind::kVmUuid);
}

}  // namespace
}  // namespace ccm::csi
