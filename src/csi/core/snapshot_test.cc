#include "csi/core/snapshot.h"

#include <gtest/gtest.h>

#include <string>

namespace ccm::csi {
namespace {

TEST(SnapshotIdTest, FormsAndParsesAsTheReference) {
  EXPECT_EQ(FormatSnapshotId("a296fbf5-1acd", "6e1b-77"), "a296fbf5-1acd+6e1b-77");
  EXPECT_EQ(*ParseSnapshotId("a296fbf5-1acd+6e1b-77"), (SnapshotRef{"a296fbf5-1acd", "6e1b-77"}));
  // A qualified volume ID (several vCenters) keeps its vCenter.
  EXPECT_EQ(*ParseSnapshotId("a296fbf5@vc-2.example.com+6e1b"),
            (SnapshotRef{"a296fbf5@vc-2.example.com", "6e1b"}));
  for (const std::string bad : {"", "no-plus", "+s", "v+", "a+b+c", "reallyfakesnapshotid"}) {
    absl::StatusOr<SnapshotRef> r = ParseSnapshotId(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find("\"" + bad + "\""), std::string::npos);
  }
}

TEST(SnapshotIdTest, DescriptionIsNameDashVolume) {
  EXPECT_EQ(SnapshotDescription("snapshot-7f1c", "a296fbf5"), "snapshot-7f1c-a296fbf5");
}

TEST(SnapshotLimitTest, GranularLimitsByDatastoreType) {
  struct Case {
    SnapshotLimits limits;
    std::string url;
    int max;
    std::string key;
  };
  const Case cases[] = {
      {{3, 0, 0}, "ds:///vmfs/volumes/vsan:52f7/", 3, "global-max-snapshots-per-block-volume"},
      {{3, 7, 0},
       "ds:///vmfs/volumes/vsan:52f7/",
       7,
       "granular-max-snapshots-per-block-volume-vsan"},
      {{3, 7, 0}, "ds:///vmfs/volumes/5f1e-aa/", 3, "global-max-snapshots-per-block-volume"},
      {{4, 7, 9},
       "ds:///vmfs/volumes/vvol:8a1/",
       9,
       "granular-max-snapshots-per-block-volume-vvol"},
      {{4, 7, 0}, "ds:///vmfs/volumes/vvol:8a1/", 4, "global-max-snapshots-per-block-volume"},
      {{5, 7, 9}, "", 5, "global-max-snapshots-per-block-volume"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.url);
    SnapshotLimit l = SnapshotLimitFor(c.limits, c.url);
    EXPECT_EQ(l.max, c.max);
    EXPECT_EQ(l.key, c.key);
  }
}

}  // namespace
}  // namespace ccm::csi
