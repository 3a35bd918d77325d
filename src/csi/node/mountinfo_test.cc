#include "csi/node/mountinfo.h"

#include "gtest/gtest.h"

namespace ccm::csi::node {
namespace {

constexpr char kTable[] =
    "22 27 0:21 / /proc rw,relatime - proc proc rw\n"
    "24 27 0:6 / /dev rw,relatime shared:2 - devtmpfs udev rw,size=123k,mode=755\n"
    "27 1 254:0 / / rw,relatime shared:1 master:3 - ext4 /dev/vda rw\n"
    "40 27 7:3 / /var/lib/kubelet/plugins/st\\040a ro,nosuid - xfs /dev/loop3 ro,nouuid\n"
    "41 27 7:3 / /var/lib/kubelet/pods/p/mount rw - xfs /dev/loop3 rw,nouuid\n"
    "42 27 0:6 /loop4 /var/lib/kubelet/pods/p/dev rw - devtmpfs udev rw\n"
    "43 27 7:3 / /var/lib/kubelet/pods/p/mount ro - xfs /dev/loop3 ro,nouuid\n";

TEST(MountInfoTest, ParsesFieldsOptionalTagsAndEscapes) {
  auto mounts = ParseMountInfo(kTable);
  ASSERT_TRUE(mounts.ok()) << mounts.status();
  ASSERT_EQ(mounts->size(), 7u);
  const MountInfo& dev = (*mounts)[1];
  EXPECT_EQ(dev.id, 24);
  EXPECT_EQ(dev.parent_id, 27);
  EXPECT_EQ(dev.major, 0u);
  EXPECT_EQ(dev.minor, 6u);
  EXPECT_EQ(dev.fs_type, "devtmpfs");  // after the optional "shared:2"
  EXPECT_EQ(dev.source, "udev");
  EXPECT_EQ(dev.super_options, "rw,size=123k,mode=755");
  EXPECT_EQ((*mounts)[2].fs_type, "ext4");  // two optional fields
  const MountInfo& staged = (*mounts)[3];
  EXPECT_EQ(staged.mount_point, "/var/lib/kubelet/plugins/st a");  // \040 is a space
  EXPECT_EQ(staged.major, 7u);
  EXPECT_EQ(staged.minor, 3u);
  EXPECT_TRUE(staged.read_only());
  EXPECT_TRUE(staged.HasOption("nouuid"));  // a superblock option
  EXPECT_TRUE(staged.HasOption("nosuid"));
  EXPECT_FALSE(staged.HasOption("nouuid,"));
  EXPECT_FALSE((*mounts)[4].read_only());
  EXPECT_EQ((*mounts)[5].root, "/loop4");  // a device node bind mount
}

TEST(MountInfoTest, FindMountAtTakesTheTopOfAStack) {
  auto mounts = ParseMountInfo(kTable);
  ASSERT_TRUE(mounts.ok());
  auto top = FindMountAt(*mounts, "/var/lib/kubelet/pods/p/mount");
  ASSERT_TRUE(top.has_value());
  EXPECT_EQ(top->id, 43);
  EXPECT_TRUE(top->read_only());
  EXPECT_FALSE(FindMountAt(*mounts, "/var/lib/kubelet/pods/p").has_value());
  EXPECT_FALSE(FindMountAt(*mounts, "/var/lib/kubelet/pods/p/mount/").has_value());
}

TEST(MountInfoTest, MountsOfDeviceListsStagingAndBinds) {
  auto mounts = ParseMountInfo(kTable);
  ASSERT_TRUE(mounts.ok());
  EXPECT_EQ(MountsOfDevice(*mounts, 7, 3).size(), 3u);
  EXPECT_EQ(MountsOfDevice(*mounts, 7, 4).size(), 0u);
}

TEST(MountInfoTest, EscapesAndEdgeCases) {
  struct Case {
    const char* line;
    const char* mount_point;
  } cases[] = {
      {"1 0 8:1 / /a\\011b rw - ext4 /dev/sda1 rw", "/a\tb"},
      {"1 0 8:1 / /a\\134b rw - ext4 /dev/sda1 rw", "/a\\b"},
      {"1 0 8:1 / /a\\012 rw - ext4 /dev/sda1 rw", "/a\n"},
      {"1 0 8:1 / /a\\9 rw - ext4 /dev/sda1 rw", "/a\\9"},  // not an octal escape: kept
      {"1 0 8:1 / /end\\ rw - ext4 /dev/sda1 rw", "/end\\"},
  };
  for (const Case& c : cases) {
    auto m = ParseMountInfo(c.line);
    ASSERT_TRUE(m.ok()) << c.line << ": " << m.status();
    ASSERT_EQ(m->size(), 1u);
    EXPECT_EQ((*m)[0].mount_point, c.mount_point) << c.line;
  }
  // No super options (older kernels print none for some filesystems).
  auto m = ParseMountInfo("1 0 0:5 / /x rw - tmpfs none");
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ((*m)[0].super_options, "");
  auto empty = ParseMountInfo("\n\n");
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->empty());
}

TEST(MountInfoTest, RejectsBrokenLines) {
  const char* bad[] = {
      "1 0 8:1 / /a rw ext4 /dev/sda1 rw",    // no separator
      "1 0 8:1 / /a rw - ext4",               // no source
      "x 0 8:1 / /a rw - ext4 /dev/sda1 rw",  // id not a number
      "1 0 8-1 / /a rw - ext4 /dev/sda1 rw",  // device not major:minor
      "1 0 8:1 /",
  };
  for (const char* line : bad) {
    auto m = ParseMountInfo(line);
    EXPECT_EQ(m.status().code(), absl::StatusCode::kInvalidArgument) << line;
    if (!m.ok()) {
      EXPECT_NE(m.status().message().find(line), std::string::npos);
    }
  }
}

}  // namespace
}  // namespace ccm::csi::node
