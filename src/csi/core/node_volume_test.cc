#include "csi/core/node_volume.h"

#include <gtest/gtest.h>

namespace ccm::csi {
namespace {

using Strings = std::vector<std::string>;

TEST(NodeVolumeTest, MaxVolumesPerNode) {
  struct Case {
    std::optional<absl::string_view> env;
    bool ok;
    int64_t want;
  } cases[] = {
      {std::nullopt, true, 59}, {"", true, 59},     {"0", true, 59},   {"59", true, 59},
      {"16", true, 16},         {"255", true, 255}, {"256", false, 0}, {"-1", false, 0},
      {"abc", false, 0},        {" 59", false, 0},  {"5x", false, 0},  {"+5", false, 0},
  };
  for (const Case& c : cases) {
    absl::StatusOr<int64_t> got = MaxVolumesPerNode(c.env);
    std::string label(c.env.value_or("<unset>"));
    ASSERT_EQ(got.ok(), c.ok) << label << ": " << got.status();
    if (got.ok()) {
      EXPECT_EQ(*got, c.want) << label;
    } else {
      EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument) << label;
      EXPECT_NE(got.status().message().find("MAX_VOLUMES_PER_NODE"), absl::string_view::npos);
    }
  }
}

TEST(NodeVolumeTest, DecideFormat) {
  struct Case {
    const char* name;
    const char* existing;
    const char* requested;
    bool read_only;
    bool ok;
    FormatAction action;
    const char* mount_fs;
  } cases[] = {
      {"blank disk: format", "", "ext4", false, true, FormatAction::kFormat, "ext4"},
      {"blank disk, xfs", "", "xfs", false, true, FormatAction::kFormat, "xfs"},
      {"blank read-only disk: refuse", "", "ext4", true, false, {}, ""},
      {"same filesystem: mount", "ext4", "ext4", false, true, FormatAction::kMount, "ext4"},
      {"same, read-only", "xfs", "xfs", true, true, FormatAction::kMount, "xfs"},
      {"blkid output with a newline", "ext4\n", "ext4", false, true, FormatAction::kMount, "ext4"},
      {"ext3 data under an ext4 request: mount as ext3", "ext3", "ext4", false, true,
       FormatAction::kMount, "ext3"},
      {"ext2 data under an ext4 request", "ext2", "ext4", false, true, FormatAction::kMount,
       "ext2"},
      {"ext4 data under an ext3 request: refuse", "ext4", "ext3", false, false, {}, ""},
      {"xfs data under an ext4 request: refuse", "xfs", "ext4", false, false, {}, ""},
      {"LVM member: refuse", "LVM2_member", "ext4", false, false, {}, ""},
      {"LUKS: refuse", "crypto_LUKS", "xfs", false, false, {}, ""},
      {"partition table only: refuse", "gpt", "ext4", false, false, {}, ""},
  };
  for (const Case& c : cases) {
    absl::StatusOr<FormatDecision> got = DecideFormat(c.existing, c.requested, c.read_only);
    ASSERT_EQ(got.ok(), c.ok) << c.name << ": " << got.status();
    if (!got.ok()) {
      EXPECT_EQ(got.status().code(), absl::StatusCode::kFailedPrecondition) << c.name;
      continue;
    }
    EXPECT_EQ(got->action, c.action) << c.name;
    EXPECT_EQ(got->mount_fs_type, c.mount_fs) << c.name;
  }
  absl::Status s = DecideFormat("xfs", "ext4", false).status();
  EXPECT_NE(s.message().find("xfs"), absl::string_view::npos) << s;
  EXPECT_NE(s.message().find("ext4"), absl::string_view::npos) << s;
}

TEST(NodeVolumeTest, MkfsArgv) {
  struct Case {
    const char* fs;
    const char* kernel;
    Strings want;
  } cases[] = {
      {"ext4", "4.18.0-513.el8.x86_64", {"mkfs.ext4", "-F", "/dev/sdb"}},
      {"ext3", "6.1.0-18-amd64", {"mkfs.ext3", "-F", "/dev/sdb"}},
      {"xfs", "6.1.0-18-amd64", {"mkfs.xfs", "/dev/sdb"}},
      {"xfs", "5.10.0-28-amd64", {"mkfs.xfs", "/dev/sdb"}},
      {"xfs", "5.15.0-91-generic", {"mkfs.xfs", "/dev/sdb"}},
      // Older kernels cannot mount bigtime/inobtcount filesystems.
      {"xfs",
       "5.4.0-150-generic",
       {"mkfs.xfs", "-m", "bigtime=0", "-m", "inobtcount=0", "/dev/sdb"}},
      {"xfs",
       "4.18.0-513.el8.x86_64",
       {"mkfs.xfs", "-m", "bigtime=0", "-m", "inobtcount=0", "/dev/sdb"}},
      {"xfs",
       "3.10.0-1160.el7.x86_64",
       {"mkfs.xfs", "-m", "bigtime=0", "-m", "inobtcount=0", "/dev/sdb"}},
      {"xfs", "garbage", {"mkfs.xfs", "-m", "bigtime=0", "-m", "inobtcount=0", "/dev/sdb"}},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(MkfsArgv(c.fs, "/dev/sdb", c.kernel), c.want) << c.fs << " " << c.kernel;
  }
  // The reference compares the minor alone (6.1 would count as old); here 6.x is new.
  EXPECT_TRUE(KernelAtLeast("6.1.0", 5, 10));
  EXPECT_TRUE(KernelAtLeast("5.10", 5, 10));
  EXPECT_FALSE(KernelAtLeast("5.9.16", 5, 10));
  EXPECT_FALSE(KernelAtLeast("", 5, 10));
}

TEST(NodeVolumeTest, MountOptions) {
  struct Case {
    const char* name;
    const char* fs;
    Strings flags;
    bool read_only;
    Strings stage;
    Strings publish;
  } cases[] = {
      {"ext4, no flags", "ext4", {}, false, {}, {"bind"}},
      {"xfs gets nouuid", "xfs", {"noatime"}, false, {"noatime", "nouuid"}, {"bind", "noatime"}},
      {"read-only", "ext4", {}, true, {"ro"}, {"bind", "ro"}},
      {"duplicates dropped",
       "xfs",
       {"nouuid", "ro", "ro", ""},
       true,
       {"nouuid", "ro"},
       {"bind", "nouuid", "ro"}},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(StageMountOptions(c.fs, c.flags, c.read_only), c.stage) << c.name;
    EXPECT_EQ(PublishMountOptions(c.flags, c.read_only), c.publish) << c.name;
  }
}

TEST(NodeVolumeTest, BlockPublish) {
  EXPECT_TRUE(CheckBlockPublish(false).ok());
  EXPECT_EQ(CheckBlockPublish(true).code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace ccm::csi
