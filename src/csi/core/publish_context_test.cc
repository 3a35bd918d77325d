#include "csi/core/publish_context.h"

#include <gtest/gtest.h>

#include "csi/core/constants.h"

namespace ccm::csi {
namespace {

TEST(PublishContextTest, FormatDiskUuid) {
  struct Case {
    const char* in;
    const char* want;
  } cases[] = {
      // The reference's own example (common/util.go).
      {"42375390-71f9-43a3-a770-56803bcd7baa", "4237539071f943a3a77056803bcd7baa"},
      {"6000C298-595D-2D4F-9B8A-3C1E2F0A1B2C", "6000c298595d2d4f9b8a3c1e2f0a1b2c"},
      {"60 00 c2 98 59 5d 2d 4f-9b 8a 3c 1e 2f 0a 1b 2c", "6000c298595d2d4f9b8a3c1e2f0a1b2c"},
      {"", ""},
  };
  for (const Case& c : cases) EXPECT_EQ(FormatDiskUuid(c.in), c.want) << c.in;
}

TEST(PublishContextTest, Contexts) {
  EXPECT_EQ(BlockVolumeContext(), (StringMap{{"type", "vSphere CNS Block Volume"}}));
  absl::StatusOr<StringMap> pc = BlockPublishContext("6000C298-595D-2D4F-9B8A-3C1E2F0A1B2C");
  ASSERT_TRUE(pc.ok()) << pc.status();
  EXPECT_EQ(*pc, (StringMap{{"type", "vSphere CNS Block Volume"},
                            {"diskUUID", "6000c298595d2d4f9b8a3c1e2f0a1b2c"}}));
  EXPECT_EQ(BlockPublishContext("").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(BlockPublishContext("not-a-uuid").status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(PublishContextTest, DiskUuidFromPublishContext) {
  struct Case {
    const char* name;
    StringMap ctx;
    const char* want;  // nullptr = InvalidArgument
  } cases[] = {
      {"as the controller writes it",
       {{"diskUUID", "6000c298595d2d4f9b8a3c1e2f0a1b2c"}},
       "6000c298595d2d4f9b8a3c1e2f0a1b2c"},
      {"dashed and upper case (written by hand)",
       {{"diskUUID", "6000C298-595D-2D4F-9B8A-3C1E2F0A1B2C"}},
       "6000c298595d2d4f9b8a3c1e2f0a1b2c"},
      {"missing", {{"type", "vSphere CNS Block Volume"}}, nullptr},
      {"a path, not a UUID", {{"diskUUID", "../../sda"}}, nullptr},
      {"too short", {{"diskUUID", "6000c298"}}, nullptr},
  };
  for (const Case& c : cases) {
    absl::StatusOr<std::string> got = DiskUuidFromPublishContext(c.ctx);
    if (c.want == nullptr) {
      EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument) << c.name;
      continue;
    }
    ASSERT_TRUE(got.ok()) << c.name << ": " << got.status();
    EXPECT_EQ(*got, c.want) << c.name;
  }
}

TEST(PublishContextTest, DiskLinkPath) {
  EXPECT_EQ(DiskLinkPath(kDevDiskById, "6000c298595d2d4f9b8a3c1e2f0a1b2c"),
            "/dev/disk/by-id/wwn-0x6000c298595d2d4f9b8a3c1e2f0a1b2c");
  EXPECT_EQ(DiskLinkPath("/tmp/by-id/", "abc"), "/tmp/by-id/wwn-0xabc");
}

}  // namespace
}  // namespace ccm::csi
