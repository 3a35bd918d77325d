#include "csi/node/mount_options.h"

#include <sys/mount.h>

#include "gtest/gtest.h"

namespace ccm::csi::node {
namespace {

TEST(MountOptionsTest, Table) {
  struct Case {
    std::vector<std::string> options;
    unsigned long flags;
    std::string data;
  } cases[] = {
      {{}, 0, ""},
      {{"defaults"}, 0, ""},
      {{"ro"}, MS_RDONLY, ""},
      {{"ro", "rw"}, 0, ""},  // the last one wins, as in mount(8)
      {{"rw", "ro"}, MS_RDONLY, ""},
      {{"nouuid", "ro"}, MS_RDONLY, "nouuid"},
      {{"noatime", "discard", "nosuid", "nodev", "noexec"},
       MS_NOATIME | MS_NOSUID | MS_NODEV | MS_NOEXEC,
       "discard"},
      {{"relatime", "strictatime"}, MS_STRICTATIME, ""},
      {{"strictatime", "relatime"}, MS_RELATIME, ""},
      {{"bind"}, MS_BIND, ""},
      {{"rbind"}, MS_BIND | MS_REC, ""},
      {{"_netdev", "nofail", "x-systemd.automount", "comment=x", "noauto", "loop=/dev/loop1"},
       0,
       ""},
      {{"data=ordered", "errors=remount-ro", ""}, 0, "data=ordered,errors=remount-ro"},
  };
  for (const Case& c : cases) {
    MountFlags f = ParseMountOptions(c.options);
    std::string name = ::testing::PrintToString(c.options);
    EXPECT_EQ(f.flags, c.flags) << name;
    EXPECT_EQ(f.data, c.data) << name;
    EXPECT_EQ(f.read_only, (c.flags & MS_RDONLY) != 0) << name;
    EXPECT_EQ(f.bind, (c.flags & MS_BIND) != 0) << name;
  }
}

TEST(MountOptionsTest, PerMountFlagsKeepsOnlyWhatABindRemountChanges) {
  EXPECT_EQ(PerMountFlags(MS_BIND | MS_RDONLY | MS_NOSUID | MS_SYNCHRONOUS), MS_RDONLY | MS_NOSUID);
  EXPECT_EQ(PerMountFlags(MS_BIND), 0u);
}

}  // namespace
}  // namespace ccm::csi::node
