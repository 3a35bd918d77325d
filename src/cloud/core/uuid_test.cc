#include "cloud/core/uuid.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace ccm::cloud {
namespace {

using ::testing::ElementsAre;

TEST(UuidTest, SwapMatchesReferenceExamples) {
  // The reference's own conversion examples, in both directions.
  EXPECT_EQ(*SwapUuidByteOrder("56492e42-22ad-3911-6d72-59cc8f26bc90"),
            "422e4956-ad22-1139-6d72-59cc8f26bc90");
  EXPECT_EQ(*SwapUuidByteOrder("422e4956-ad22-1139-6d72-59cc8f26bc90"),
            "56492e42-22ad-3911-6d72-59cc8f26bc90");
}

TEST(UuidTest, SwapNormalisesAndIsItsOwnInverse) {
  struct Case {
    const char* in;
    const char* want;
  } cases[] = {
      {"  56492E42-22AD-3911-6D72-59CC8F26BC90\n", "422e4956-ad22-1139-6d72-59cc8f26bc90"},
      {"00112233-4455-6677-8899-aabbccddeeff", "33221100-5544-7766-8899-aabbccddeeff"},
      {"00000000-0000-0000-0000-000000000000", "00000000-0000-0000-0000-000000000000"},
  };
  for (const Case& c : cases) {
    auto got = SwapUuidByteOrder(c.in);
    ASSERT_TRUE(got.ok()) << c.in;
    EXPECT_EQ(*got, c.want) << c.in;
    EXPECT_EQ(*SwapUuidByteOrder(*got), *NormalizeUuid(c.in)) << c.in;
  }
}

TEST(UuidTest, Validation) {
  struct Case {
    const char* in;
    bool valid;
  } cases[] = {
      {"422e4956-ad22-1139-6d72-59cc8f26bc90", true},
      {"422E4956-AD22-1139-6D72-59CC8F26BC90", true},
      {"", false},
      {"422e4956ad2211396d7259cc8f26bc90", false},
      {"422e4956-ad22-1139-6d72-59cc8f26bc9", false},
      {"422e4956-ad22-1139-6d72-59cc8f26bc900", false},
      {"422e4956-ad22-1139-6d72_59cc8f26bc90", false},
      {"g22e4956-ad22-1139-6d72-59cc8f26bc90", false},
      {" 422e4956-ad22-1139-6d72-59cc8f26bc90", false},  // IsValidUuid does not trim
  };
  for (const Case& c : cases) EXPECT_EQ(IsValidUuid(c.in), c.valid) << c.in;
}

TEST(UuidTest, NormalizeTrimsLowersAndRejects) {
  EXPECT_EQ(*NormalizeUuid(" 422E4956-AD22-1139-6D72-59CC8F26BC90\t"),
            "422e4956-ad22-1139-6d72-59cc8f26bc90");
  for (const char* bad : {"", "   ", "vsphere://422e4956-ad22-1139-6d72-59cc8f26bc90", "xyz"}) {
    auto s = NormalizeUuid(bad);
    EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument) << bad;
  }
  EXPECT_FALSE(SwapUuidByteOrder("nope").ok());
}

TEST(UuidTest, BothByteOrders) {
  EXPECT_THAT(
      *UuidBothByteOrders("56492E42-22ad-3911-6d72-59cc8f26bc90"),
      ElementsAre("56492e42-22ad-3911-6d72-59cc8f26bc90", "422e4956-ad22-1139-6d72-59cc8f26bc90"));
  // Palindromic groups: the swap is the same UUID, listed once.
  EXPECT_THAT(*UuidBothByteOrders("00000000-0000-0000-1234-56789abcdef0"),
              ElementsAre("00000000-0000-0000-1234-56789abcdef0"));
  EXPECT_FALSE(UuidBothByteOrders("").ok());
}

}  // namespace
}  // namespace ccm::cloud
