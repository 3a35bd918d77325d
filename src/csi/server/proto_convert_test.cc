#include "csi/server/proto_convert.h"

#include "gtest/gtest.h"

namespace ccm::csi {
namespace {

TEST(ProtoConvertTest, MountCapability) {
  ::csi::v1::VolumeCapability cap;
  cap.mutable_mount()->set_fs_type("xfs");
  cap.mutable_mount()->add_mount_flags("noatime");
  cap.mutable_access_mode()->set_mode(::csi::v1::VolumeCapability::AccessMode::SINGLE_NODE_WRITER);
  VolumeCapability c = FromProto(cap);
  EXPECT_EQ(c.access_type, AccessType::kMount);
  EXPECT_EQ(c.fs_type, "xfs");
  EXPECT_EQ(c.mount_flags, (std::vector<std::string>{"noatime"}));
  EXPECT_TRUE(c.has_access_mode);
  EXPECT_EQ(c.mode, AccessMode::kSingleNodeWriter);
}

TEST(ProtoConvertTest, BlockAndUnsetCapability) {
  ::csi::v1::VolumeCapability block;
  block.mutable_block();
  EXPECT_EQ(FromProto(block).access_type, AccessType::kBlock);
  EXPECT_FALSE(FromProto(block).has_access_mode);
  EXPECT_EQ(FromProto(::csi::v1::VolumeCapability()).access_type, AccessType::kUnset);
}

TEST(ProtoConvertTest, TopologyBothWays) {
  ::csi::v1::TopologyRequirement req;
  (*req.add_requisite()->mutable_segments())["zone"] = "b";
  (*req.add_preferred()->mutable_segments())["zone"] = "a";
  TopologyRequirement r = FromProto(req);
  EXPECT_EQ(r.requisite, (std::vector<Segments>{{{"zone", "b"}}}));
  EXPECT_EQ(r.preferred, (std::vector<Segments>{{{"zone", "a"}}}));
  ::csi::v1::Topology t;
  ToProto(Segments{{"zone", "b"}, {"region", "r"}}, &t);
  EXPECT_EQ(FromProto(t), (Segments{{"zone", "b"}, {"region", "r"}}));
}

TEST(ProtoConvertTest, CapacityRange) {
  ::csi::v1::CapacityRange r;
  r.set_required_bytes(5);
  r.set_limit_bytes(7);
  CapacityRange c = FromProto(r);
  EXPECT_EQ(c.required_bytes, 5);
  EXPECT_EQ(c.limit_bytes, 7);
}

}  // namespace
}  // namespace ccm::csi
