#include "csi/core/capabilities.h"

#include <gtest/gtest.h>

namespace ccm::csi {
namespace {

VolumeCapability Mount(AccessMode mode, std::string fs = "") {
  VolumeCapability c;
  c.access_type = AccessType::kMount;
  c.fs_type = std::move(fs);
  c.has_access_mode = true;
  c.mode = mode;
  return c;
}

VolumeCapability Block(AccessMode mode) {
  VolumeCapability c;
  c.access_type = AccessType::kBlock;
  c.has_access_mode = true;
  c.mode = mode;
  return c;
}

TEST(CapabilitiesTest, ValidateCapability) {
  VolumeCapability no_type = Mount(AccessMode::kSingleNodeWriter);
  no_type.access_type = AccessType::kUnset;
  VolumeCapability no_mode = Mount(AccessMode::kSingleNodeWriter);
  no_mode.has_access_mode = false;
  struct Case {
    const char* name;
    VolumeCapability cap;
    bool multi_writer_capability;
    bool ok;
    const char* message_has;  // for errors
  } cases[] = {
      {"RWO mount, default fs", Mount(AccessMode::kSingleNodeWriter), false, true, ""},
      {"RWO ext4", Mount(AccessMode::kSingleNodeWriter, "ext4"), false, true, ""},
      {"RWO ext3", Mount(AccessMode::kSingleNodeWriter, "ext3"), false, true, ""},
      {"RWO xfs", Mount(AccessMode::kSingleNodeWriter, "xfs"), false, true, ""},
      {"fs type in capitals", Mount(AccessMode::kSingleNodeWriter, "XFS"), false, true, ""},
      {"RWO block", Block(AccessMode::kSingleNodeWriter), false, true, ""},
      {"single-node read-only", Mount(AccessMode::kSingleNodeReaderOnly), false, true, ""},
      {"nfs is for file volumes", Mount(AccessMode::kSingleNodeWriter, "nfs4"), false, false,
       "nfs4"},
      {"ntfs is for Windows nodes", Mount(AccessMode::kSingleNodeWriter, "ntfs"), false, false,
       "ntfs"},
      {"unknown fs", Mount(AccessMode::kSingleNodeWriter, "btrfs"), false, false, "btrfs"},
      {"multi-node writer: a file volume", Mount(AccessMode::kMultiNodeMultiWriter), false, true,
       ""},
      {"multi-node reader, nfs4", Mount(AccessMode::kMultiNodeReaderOnly, "nfs4"), false, true, ""},
      {"multi-node raw block", Block(AccessMode::kMultiNodeReaderOnly), false, false,
       "raw block volumes are not supported with ReadWriteMany"},
      {"multi-node xfs", Mount(AccessMode::kMultiNodeSingleWriter, "xfs"), false, false,
       "\"xfs\" is not supported for ReadWriteMany"},
      {"single-node single writer without the capability",
       Mount(AccessMode::kSingleNodeSingleWriter), false, false, "SINGLE_NODE_SINGLE_WRITER"},
      {"single-node multi writer without the capability", Block(AccessMode::kSingleNodeMultiWriter),
       false, false, "SINGLE_NODE_MULTI_WRITER"},
      {"single-node single writer with the capability", Mount(AccessMode::kSingleNodeSingleWriter),
       true, true, ""},
      {"single-node multi writer with the capability", Block(AccessMode::kSingleNodeMultiWriter),
       true, true, ""},
      {"unknown mode", Mount(AccessMode::kUnknown), false, false, "UNKNOWN"},
      {"mode out of the enum", Mount(static_cast<AccessMode>(42)), false, false, "mode 42"},
      {"missing access type", no_type, false, false, "access type"},
      {"missing access mode", no_mode, false, false, "access mode"},
  };
  for (const Case& c : cases) {
    absl::Status s = ValidateCapability(c.cap, {c.multi_writer_capability});
    EXPECT_EQ(s.ok(), c.ok) << c.name << ": " << s;
    if (c.ok) continue;
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << c.name;
    EXPECT_NE(s.message().find(c.message_has), absl::string_view::npos) << c.name << ": " << s;
  }
}

TEST(CapabilitiesTest, ValidateCapabilitiesNamesTheIndex) {
  EXPECT_EQ(ValidateCapabilities({}).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(ValidateCapabilities(
                  {Mount(AccessMode::kSingleNodeWriter), Block(AccessMode::kSingleNodeWriter)})
                  .ok());
  absl::Status s = ValidateCapabilities(
      {Mount(AccessMode::kMultiNodeReaderOnly), Block(AccessMode::kMultiNodeMultiWriter)});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("capability 1"), absl::string_view::npos) << s;
  // A file volume request: every capability must be multi-node (the reference's rule).
  s = ValidateCapabilities(
      {Mount(AccessMode::kSingleNodeWriter), Mount(AccessMode::kMultiNodeMultiWriter)});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("capability 0: access mode SINGLE_NODE_WRITER cannot be asked "
                             "together with a multi-node mode"),
            absl::string_view::npos)
      << s;
}

TEST(CapabilitiesTest, MountFsType) {
  struct Case {
    const char* fs;
    const char* want;  // nullptr = error
  } cases[] = {
      {"", "ext4"},     {"ext4", "ext4"},  {" Ext3 ", "ext3"}, {"xfs", "xfs"},
      {"nfs", nullptr}, {"ntfs", nullptr}, {"zfs", nullptr},
  };
  for (const Case& c : cases) {
    absl::StatusOr<std::string> got = MountFsType(Mount(AccessMode::kSingleNodeWriter, c.fs));
    if (c.want == nullptr) {
      EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument) << c.fs;
      continue;
    }
    ASSERT_TRUE(got.ok()) << c.fs << ": " << got.status();
    EXPECT_EQ(*got, c.want);
  }
  EXPECT_FALSE(MountFsType(Block(AccessMode::kSingleNodeWriter)).ok());
}

TEST(CapabilitiesTest, ReadOnlyModes) {
  EXPECT_TRUE(IsReadOnlyMode(AccessMode::kSingleNodeReaderOnly));
  EXPECT_TRUE(IsReadOnlyMode(AccessMode::kMultiNodeReaderOnly));
  EXPECT_FALSE(IsReadOnlyMode(AccessMode::kSingleNodeWriter));
  EXPECT_FALSE(IsReadOnlyMode(AccessMode::kSingleNodeMultiWriter));
}

TEST(CapabilitiesTest, Confirm) {
  Confirmation yes = ConfirmCapabilities({Block(AccessMode::kSingleNodeWriter)});
  EXPECT_TRUE(yes.confirmed);
  EXPECT_TRUE(yes.message.empty());
  Confirmation no = ConfirmCapabilities({Block(AccessMode::kMultiNodeMultiWriter)});
  EXPECT_FALSE(no.confirmed);
  EXPECT_NE(no.message.find("raw block"), std::string::npos) << no.message;
}

}  // namespace
}  // namespace ccm::csi
