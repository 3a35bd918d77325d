// ControllerPublishVolume, ControllerUnpublishVolume, ControllerExpandVolume and GetCapacity
// over the real gRPC socket, on the simulator's CNS.
#include <map>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "csi/core/constants.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "integration/csi/controller_fixture.h"
#include "testing/eventually.h"

namespace ccm::csi::testing {
namespace {

constexpr int64_t kMiB = 1024 * 1024;
constexpr char kUnknownVolume[] = "0f2e8c8a-3333-4a4a-9b9b-123456789abc";
constexpr char kUnknownNode[] = "4230aaaa-bbbb-cccc-dddd-eeeeffff0000";

class ControllerPublishTest : public ControllerFixture<ControllerPublishTest> {
 protected:
  grpc::Status Expand(const std::string& id, int64_t required, int64_t limit,
                      const ::csi::v1::VolumeCapability* cap,
                      ::csi::v1::ControllerExpandVolumeResponse* resp) {
    grpc::ClientContext ctx;
    ::csi::v1::ControllerExpandVolumeRequest req;
    req.set_volume_id(id);
    if (required > 0 || limit > 0) {
      req.mutable_capacity_range()->set_required_bytes(required);
      req.mutable_capacity_range()->set_limit_bytes(limit);
    }
    if (cap != nullptr) *req.mutable_volume_capability() = *cap;
    return c().ControllerExpandVolume(&ctx, req, resp);
  }
  static std::string Formatted(std::string uuid) {
    return absl::AsciiStrToLower(absl::StrReplaceAll(uuid, {{"-", ""}, {" ", ""}}));
  }
};

// ---- ControllerPublishVolume ----

TEST_F(ControllerPublishTest, PublishRequiresVolumeNodeAndCapability) {
  auto req = PubReq("", env().VmUuid("node-a1"));
  EXPECT_EQ(Publish(req).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  req = PubReq(kUnknownVolume, "");
  EXPECT_EQ(Publish(req).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  req = PubReq(kUnknownVolume, env().VmUuid("node-a1"));
  req.clear_volume_capability();
  EXPECT_EQ(Publish(req).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
}

TEST_F(ControllerPublishTest, PublishToAnUnknownNodeIsNotFound) {
  const std::string id = MustCreate("pvc-pub-unknown-node");
  EXPECT_EQ(Publish(PubReq(id, kUnknownNode)).error_code(), grpc::StatusCode::NOT_FOUND);
}

TEST_F(ControllerPublishTest, PublishOfAnUnknownVolumeIsNotFound) {
  EXPECT_EQ(Publish(PubReq(kUnknownVolume, env().VmUuid("node-a1"))).error_code(),
            grpc::StatusCode::NOT_FOUND);
}

TEST_F(ControllerPublishTest, PublishTwiceReturnsTheSameContextWithTheDiskUuid) {
  const std::string id = MustCreate("pvc-pub-twice");
  ::csi::v1::ControllerPublishVolumeResponse a, b;
  ASSERT_TRUE(Publish(PubReq(id, env().VmUuid("node-a1")), &a).ok());
  grpc::Status s = Publish(PubReq(id, env().VmUuid("node-a1")), &b);
  ASSERT_TRUE(s.ok()) << s.error_message();
  using Map = std::map<std::string, std::string>;
  EXPECT_EQ(Map(a.publish_context().begin(), a.publish_context().end()),
            Map(b.publish_context().begin(), b.publish_context().end()));
  auto cns = env().CnsVolume(id);
  ASSERT_TRUE(cns.ok());
  EXPECT_EQ(cns->attached_vm, env().VmMoid("node-a1"));
  EXPECT_EQ(a.publish_context().at("diskUUID"), Formatted(cns->disk_uuid));
  EXPECT_EQ(a.publish_context().at("type"), kDiskTypeBlockVolume);
}

TEST_F(ControllerPublishTest, PublishToASecondNodeIsFailedPrecondition) {
  const std::string id = MustCreate("pvc-pub-elsewhere");
  ASSERT_TRUE(Publish(PubReq(id, env().VmUuid("node-a1"))).ok());
  grpc::Status s = Publish(PubReq(id, env().VmUuid("node-a2")));
  EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION) << s.error_message();
}

// vCenter faults the sidecars act on reach them with their gRPC code and the fault's name: a VM
// without a free SCSI slot is ResourceExhausted (the attacher backs off), a task in progress on
// the VM is Aborted (retried at once).
TEST_F(ControllerPublishTest, AttachFaultsKeepTheirMeaning) {
  const std::string id = MustCreate("pvc-pub-faults");
  struct Case {
    const char* fault;
    grpc::StatusCode code;
  };
  for (const Case& c : {Case{"TooManyDevices", grpc::StatusCode::RESOURCE_EXHAUSTED},
                        Case{"TaskInProgress", grpc::StatusCode::ABORTED},
                        Case{"InvalidPowerState", grpc::StatusCode::FAILED_PRECONDITION}}) {
    ASSERT_TRUE(env().sim().SetCnsFault("CnsAttachVolume", c.fault, "injected", 1).ok());
    grpc::Status s = Publish(PubReq(id, env().VmUuid("node-a1")));
    EXPECT_EQ(s.error_code(), c.code) << c.fault << ": " << s.error_message();
    EXPECT_THAT(s.error_message(), ::testing::HasSubstr(c.fault));
  }
  ASSERT_TRUE(env().sim().ClearCnsFaults().ok());
  EXPECT_TRUE(Publish(PubReq(id, env().VmUuid("node-a1"))).ok());
}

TEST_F(ControllerPublishTest, PublishByNodeNameFindsTheVm) {
  const std::string id = MustCreate("pvc-pub-by-name");
  ASSERT_TRUE(Publish(PubReq(id, "node-b1")).ok());
  auto cns = env().CnsVolume(id);
  ASSERT_TRUE(cns.ok());
  EXPECT_EQ(cns->attached_vm, env().VmMoid("node-b1"));
}

TEST_F(ControllerPublishTest, PublishAcceptsAnUppercaseVmUuid) {
  const std::string id = MustCreate("pvc-pub-upper");
  ASSERT_TRUE(Publish(PubReq(id, absl::AsciiStrToUpper(env().VmUuid("node-a2")))).ok());
}

// ---- ControllerUnpublishVolume ----

TEST_F(ControllerPublishTest, UnpublishWithoutVolumeIdIsInvalidArgument) {
  EXPECT_EQ(Unpublish("", env().VmUuid("node-a1")).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
}

TEST_F(ControllerPublishTest, UnpublishTwiceSucceedsAndDetaches) {
  const std::string id = MustCreate("pvc-unpub-twice");
  ASSERT_TRUE(Publish(PubReq(id, env().VmUuid("node-a2"))).ok());
  ASSERT_TRUE(Unpublish(id, env().VmUuid("node-a2")).ok());
  auto cns = env().CnsVolume(id);
  ASSERT_TRUE(cns.ok());
  EXPECT_EQ(cns->attached_vm, "");
  grpc::Status again = Unpublish(id, env().VmUuid("node-a2"));
  EXPECT_TRUE(again.ok()) << again.error_message();
}

TEST_F(ControllerPublishTest, UnpublishOfAnUnknownVolumeOrNodeSucceeds) {
  const std::string id = MustCreate("pvc-unpub-unknown");
  EXPECT_TRUE(Unpublish(kUnknownVolume, env().VmUuid("node-a1")).ok());
  EXPECT_TRUE(Unpublish(id, kUnknownNode).ok());
}

TEST_F(ControllerPublishTest, UnpublishWithoutNodeDetachesFromWhereverItIs) {
  const std::string id = MustCreate("pvc-unpub-any");
  ASSERT_TRUE(Publish(PubReq(id, env().VmUuid("node-b1"))).ok());
  ASSERT_TRUE(Unpublish(id, "").ok());
  auto cns = env().CnsVolume(id);
  ASSERT_TRUE(cns.ok());
  EXPECT_EQ(cns->attached_vm, "");
}

// ---- ControllerExpandVolume ----

TEST_F(ControllerPublishTest, ExpandRequiresIdAndCapacity) {
  ::csi::v1::ControllerExpandVolumeResponse resp;
  EXPECT_EQ(Expand("", 2 * kGiB, 0, nullptr, &resp).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(Expand(kUnknownVolume, 0, 0, nullptr, &resp).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
}

TEST_F(ControllerPublishTest, ExpandOfAnUnknownVolumeIsNotFound) {
  ::csi::v1::ControllerExpandVolumeResponse resp;
  EXPECT_EQ(Expand(kUnknownVolume, 2 * kGiB, 0, nullptr, &resp).error_code(),
            grpc::StatusCode::NOT_FOUND);
}

TEST_F(ControllerPublishTest, ExpandGrowsAndAsksTheNodeOnlyForFilesystems) {
  const std::string id = MustCreate("pvc-expand");
  ::csi::v1::ControllerExpandVolumeResponse fs, block;
  const auto mount = MountCap();
  ASSERT_TRUE(Expand(id, 2 * kGiB, 0, &mount, &fs).ok());
  EXPECT_EQ(fs.capacity_bytes(), 2 * kGiB);
  EXPECT_TRUE(fs.node_expansion_required());
  auto cns = env().CnsVolume(id);
  ASSERT_TRUE(cns.ok());
  EXPECT_EQ(cns->capacity_mb, 2048);
  const auto raw = BlockCap();
  ASSERT_TRUE(Expand(id, 3 * kGiB, 0, &raw, &block).ok());
  EXPECT_FALSE(block.node_expansion_required());
  // Published volumes grow online.
  ASSERT_TRUE(Publish(PubReq(id, env().VmUuid("node-a1"))).ok());
  ASSERT_TRUE(Expand(id, 4 * kGiB, 0, &mount, &fs).ok());
  EXPECT_EQ(env().CnsVolume(id)->capacity_mb, 4096);
}

TEST_F(ControllerPublishTest, ExpandToASmallerSizeKeepsTheVolume) {
  const std::string id = MustCreate("pvc-no-shrink", 2 * kGiB);
  ::csi::v1::ControllerExpandVolumeResponse resp;
  ASSERT_TRUE(Expand(id, kGiB, 0, nullptr, &resp).ok());
  EXPECT_EQ(resp.capacity_bytes(), 2 * kGiB);
  EXPECT_EQ(env().CnsVolume(id)->capacity_mb, 2048);
}

TEST_F(ControllerPublishTest, ExpandBeyondTheLimitIsOutOfRange) {
  const std::string id = MustCreate("pvc-expand-limit", 2 * kGiB);
  ::csi::v1::ControllerExpandVolumeResponse resp;
  EXPECT_EQ(Expand(id, kGiB, kGiB, nullptr, &resp).error_code(), grpc::StatusCode::OUT_OF_RANGE);
}

// ---- GetCapacity ----

TEST_F(ControllerPublishTest, CapacityPerSegmentSumsTheReachableDatastores) {
  auto view = env().backend().datastores().Snapshot();
  ASSERT_TRUE(view.ok());
  int64_t zone_b = 0, total = 0, largest_b = 0;
  for (const auto& c : (*view)->datastores) {
    total += c.free_bytes;
    for (const auto& seg : AccessibleSegments(c, (*view)->hosts)) {
      if (seg.at(kZoneKey) == "zone-b") {
        zone_b += c.free_bytes;
        largest_b = std::max(largest_b, c.free_bytes);
      }
    }
  }
  grpc::ClientContext c1, c2;
  ::csi::v1::GetCapacityRequest req;
  ::csi::v1::GetCapacityResponse whole, b;
  ASSERT_TRUE(c().GetCapacity(&c1, req, &whole).ok());
  EXPECT_EQ(whole.available_capacity(), total);
  (*req.mutable_accessible_topology()->mutable_segments())[kZoneKey] = "zone-b";
  ASSERT_TRUE(c().GetCapacity(&c2, req, &b).ok());
  EXPECT_EQ(b.available_capacity(), zone_b);
  EXPECT_EQ(b.maximum_volume_size().value(), largest_b);
  EXPECT_GT(b.available_capacity(), 0);
  EXPECT_LT(b.available_capacity(), whole.available_capacity());
}

TEST_F(ControllerPublishTest, CapacityForAnUnsupportedCapabilityIsZero) {
  grpc::ClientContext ctx;
  ::csi::v1::GetCapacityRequest req;
  auto cap = MountCap("btrfs");
  *req.add_volume_capabilities() = cap;
  ::csi::v1::GetCapacityResponse resp;
  ASSERT_TRUE(c().GetCapacity(&ctx, req, &resp).ok());
  EXPECT_EQ(resp.available_capacity(), 0);
}

TEST_F(ControllerPublishTest, CreateTakesSpaceFromTheCachedCapacityAtOnce) {
  auto& inventory = env().backend().inventory();
  ASSERT_TRUE(ccm::testing::Eventually([&] { return inventory.stats().idle; }));
  grpc::ClientContext c1, c2;
  ::csi::v1::GetCapacityRequest req;
  ::csi::v1::GetCapacityResponse before, after;
  ASSERT_TRUE(c().GetCapacity(&c1, req, &before).ok());
  MustCreate("pvc-capacity", 10 * kGiB);
  ASSERT_TRUE(c().GetCapacity(&c2, req, &after).ok());
  EXPECT_EQ(after.available_capacity(), before.available_capacity() - 10 * kGiB);
  // ...and the quick refresh that follows reads the same from vCenter.
  ASSERT_TRUE(ccm::testing::Eventually([&] { return inventory.stats().idle; }));
  grpc::ClientContext c3;
  ::csi::v1::GetCapacityResponse refreshed;
  ASSERT_TRUE(c().GetCapacity(&c3, req, &refreshed).ok());
  EXPECT_EQ(refreshed.available_capacity(), after.available_capacity());
}

}  // namespace
}  // namespace ccm::csi::testing
