#include "csi/core/file_volume.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "csi/core/constants.h"

namespace ccm::csi {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

VolumeCapability Cap(AccessMode mode, AccessType type = AccessType::kMount, std::string fs = "",
                     std::vector<std::string> flags = {}) {
  VolumeCapability c;
  c.access_type = type;
  c.fs_type = std::move(fs);
  c.mount_flags = std::move(flags);
  c.has_access_mode = true;
  c.mode = mode;
  return c;
}

TEST(FileVolumeTest, WhichRequestsAreFileVolumes) {
  struct Case {
    const char* name;
    std::vector<VolumeCapability> caps;
    bool file;
  } cases[] = {
      {"RWO", {Cap(AccessMode::kSingleNodeWriter)}, false},
      {"single-node read-only", {Cap(AccessMode::kSingleNodeReaderOnly)}, false},
      {"RWX", {Cap(AccessMode::kMultiNodeMultiWriter)}, true},
      {"ROX", {Cap(AccessMode::kMultiNodeReaderOnly)}, true},
      {"multi-node single writer", {Cap(AccessMode::kMultiNodeSingleWriter)}, true},
      {"RWO and ROX",
       {Cap(AccessMode::kSingleNodeWriter), Cap(AccessMode::kMultiNodeReaderOnly)},
       true},
      {"none", {}, false},
  };
  for (const Case& c : cases) EXPECT_EQ(IsFileVolumeRequest(c.caps), c.file) << c.name;
}

TEST(FileVolumeTest, FsTypes) {
  struct Case {
    const char* fs;
    AccessType type;
    const char* want;  // nullptr: InvalidArgument
  } cases[] = {
      {"", AccessType::kMount, "nfs4"},     {"ext4", AccessType::kMount, "nfs4"},
      {"NFS4", AccessType::kMount, "nfs4"}, {"nfs", AccessType::kMount, "nfs"},
      {"xfs", AccessType::kMount, nullptr}, {"", AccessType::kBlock, nullptr},
      {"", AccessType::kUnset, nullptr},
  };
  for (const Case& c : cases) {
    absl::StatusOr<std::string> got =
        FileMountFsType(Cap(AccessMode::kMultiNodeMultiWriter, c.type, c.fs));
    if (c.want == nullptr) {
      EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument) << c.fs;
    } else {
      EXPECT_EQ(got.value_or("error"), c.want) << c.fs;
    }
  }
}

TEST(FileVolumeTest, MountOptions) {
  struct Case {
    const char* name;
    std::vector<std::string> flags;
    bool read_only;
    std::vector<std::string> want;
  } cases[] = {
      {"read-write", {}, false, {"hard", "sec=sys", "vers=4", "minorversion=1"}},
      {"read-only first", {}, true, {"ro", "hard", "sec=sys", "vers=4", "minorversion=1"}},
      {"the capability's flags before the defaults",
       {"noatime", "", "ro"},
       true,
       {"ro", "noatime", "hard", "sec=sys", "vers=4", "minorversion=1"}},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(
        FileMountOptions(Cap(AccessMode::kMultiNodeMultiWriter, AccessType::kMount, "", c.flags),
                         c.read_only),
        c.want)
        << c.name;
  }
}

TEST(FileVolumeTest, ShareAccessFromNetPermissions) {
  EXPECT_THAT(ShareAccessFrom({}), ElementsAre(ShareAccess{"*", "READ_WRITE", true}));
  EXPECT_THAT(ShareAccessFrom({{"10.20.0.0/16", "READ_ONLY", true}, {"", "", false}}),
              ElementsAre(ShareAccess{"10.20.0.0/16", "READ_ONLY", false},
                          ShareAccess{"*", "READ_WRITE", true}));
}

TEST(FileVolumeTest, PublishContext) {
  absl::StatusOr<StringMap> ok =
      FilePublishContext({{"NFSv3", "10.0.0.9:/share/a"}, {"NFSv4.1", "10.0.0.9:/vsanfs/a"}});
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ(*ok, (StringMap{{"type", "vSphere CNS File Volume"},
                            {"Nfsv4AccessPoint", "10.0.0.9:/vsanfs/a"}}));
  EXPECT_TRUE(IsFileVolumeContext(*ok));
  EXPECT_TRUE(IsFileVolumeContext(FileVolumeContext()));
  EXPECT_FALSE(IsFileVolumeContext({{"type", "vSphere CNS Block Volume"}}));

  absl::StatusOr<StringMap> v3 = FilePublishContext({{"NFSv3", "10.0.0.9:/share/a"}});
  EXPECT_EQ(v3.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(v3.status().message(), HasSubstr("no NFSv4.1 access point (it has: NFSv3)"));
}

TEST(FileVolumeTest, ExportFromPublishContext) {
  struct Case {
    const char* value;  // nullptr: key missing
    bool ok;
  } cases[] = {
      {"10.0.0.9:/vsanfs/a", true},
      {"fs.example.com:/a", true},
      {nullptr, false},
      {"", false},
      {"10.0.0.9/vsanfs", false},
      {":/vsanfs", false},
      {"10.0.0.9:/a b", false},
      {"10.0.0.9:/a,ro", false},
  };
  for (const Case& c : cases) {
    StringMap pc = {{"type", "vSphere CNS File Volume"}};
    if (c.value != nullptr) pc[std::string(kPublishNfsv4AccessPoint)] = c.value;
    absl::StatusOr<std::string> got = ExportFromPublishContext(pc);
    EXPECT_EQ(got.ok(), c.ok) << (c.value ? c.value : "(missing)") << ": " << got.status();
    if (!c.ok) {
      EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
    }
  }
}

}  // namespace
}  // namespace ccm::csi
