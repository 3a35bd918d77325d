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

// The kernel's NFS client needs addr=<ip> in the data (mount.nfs's job, ours here).
TEST(MountOptionsTest, NfsMountData) {
  auto resolve = [](const std::string& host) -> absl::StatusOr<std::string> {
    if (host == "fs.example.com") return std::string("10.0.200.7");
    return absl::UnavailableError("resolve NFS server " + host + ": Name or service not known");
  };
  struct Case {
    const char* source;
    const char* data;
    const char* want;  // nullptr: error
  } cases[] = {
      {"10.0.200.1:/vsanfs/a", "hard,sec=sys,vers=4,minorversion=1",
       "hard,sec=sys,vers=4,minorversion=1,addr=10.0.200.1"},
      {"fs.example.com:/vsanfs/a", "vers=4", "vers=4,addr=10.0.200.7"},
      {"[fd00::5]:/vsanfs/a", "", "addr=fd00::5"},
      {"10.0.200.1:/a", "addr=10.0.0.9,vers=4", "addr=10.0.0.9,vers=4"},
      {"nowhere.example.com:/a", "", nullptr},
      {"10.0.200.1/vsanfs", "", nullptr},
  };
  for (const Case& c : cases) {
    absl::StatusOr<std::string> got = NfsMountData(c.source, c.data, resolve);
    if (c.want == nullptr) {
      EXPECT_FALSE(got.ok()) << c.source;
    } else {
      EXPECT_EQ(got.value_or("error: " + std::string(got.status().message())), c.want) << c.source;
    }
  }
  // What the node passes for a file volume: options as data, no flags but ro.
  MountFlags f = ParseMountOptions({"ro", "hard", "sec=sys", "vers=4", "minorversion=1"});
  EXPECT_TRUE(f.read_only);
  EXPECT_EQ(f.data, "hard,sec=sys,vers=4,minorversion=1");
}

}  // namespace
}  // namespace ccm::csi::node
