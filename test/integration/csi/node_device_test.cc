// Raw block volumes, stats, expansion and bad input, on real loop devices over gRPC.
#include <fcntl.h>
#include <linux/capability.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <filesystem>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "integration/csi/node_env.h"
#include "integration/csi/node_fixture.h"

namespace ccm::csi::testing {
namespace {

class NodeDeviceTest : public NodeFixture {
 protected:
  grpc::Status Stats(const std::string& volume, const std::string& path,
                     ::csi::v1::NodeGetVolumeStatsResponse* resp) {
    grpc::ClientContext ctx;
    ::csi::v1::NodeGetVolumeStatsRequest r;
    r.set_volume_id(volume);
    r.set_volume_path(path);
    return env_->node().NodeGetVolumeStats(&ctx, r, resp);
  }
  grpc::Status Expand(const std::string& volume, const std::string& path, int64_t bytes,
                      ::csi::v1::NodeExpandVolumeResponse* resp) {
    grpc::ClientContext ctx;
    ::csi::v1::NodeExpandVolumeRequest r;
    r.set_volume_id(volume);
    r.set_volume_path(path);
    r.mutable_capacity_range()->set_required_bytes(bytes);
    return env_->node().NodeExpandVolume(&ctx, r, resp);
  }
  // Stage + publish of a fresh filesystem volume; returns the target.
  std::string Mounted(const std::string& volume, const std::string& fs, Disk* disk,
                      std::string* staging) {
    *staging = env_->NewStagingDir();
    std::string target = env_->NewTargetPath();
    EXPECT_TRUE(Stage(StageReq(volume, disk->uuid, *staging, NodeMountCap(fs))).ok());
    EXPECT_TRUE(Publish(PublishReq(volume, disk->uuid, *staging, target, NodeMountCap(fs))).ok());
    return target;
  }
};

// df's numbers for `path`: {size, used, avail} in bytes, then {inodes, iused, ifree}.
std::vector<int64_t> Df(const std::string& path) {
  std::vector<int64_t> out;
  for (const char* fields : {"size,used,avail", "itotal,iused,iavail"}) {
    auto text = RunTool({"df", "-B1", std::string("--output=") + fields, path});
    if (!text.ok()) return {};
    std::vector<std::string> lines = absl::StrSplit(*text, '\n', absl::SkipWhitespace());
    if (lines.size() != 2) return {};
    for (absl::string_view f : absl::StrSplit(lines[1], ' ', absl::SkipWhitespace())) {
      int64_t v = 0;
      if (!absl::SimpleAtoi(f, &v)) return {};
      out.push_back(v);
    }
  }
  return out;
}

TEST_F(NodeDeviceTest, RawBlockPublishGivesAWorkingDevice) {
  auto disk = env_->NewDisk();
  ASSERT_TRUE(disk.ok()) << disk.status();
  const std::string staging = env_->NewStagingDir();
  const std::string target = env_->NewTargetPath();
  // The leak check sees our devices (so its empty answer at the end means something).
  EXPECT_EQ(LoopDevicesBackedUnder(env_->dir()).size(), 1u);
  ASSERT_TRUE(Stage(StageReq("vol-b", disk->uuid, staging, NodeBlockCap())).ok());
  EXPECT_TRUE(MountsUnder(staging).empty());  // nothing to stage for block
  auto publish = PublishReq("vol-b", disk->uuid, staging, target, NodeBlockCap());
  ASSERT_TRUE(Publish(publish).ok()) << Publish(publish).error_message();
  ASSERT_TRUE(Publish(publish).ok());  // again: OK

  struct stat st;
  ASSERT_EQ(stat(target.c_str(), &st), 0);
  EXPECT_TRUE(S_ISBLK(st.st_mode));
  // Bytes written through the target are on the loop device (and its backing file).
  const std::string bytes = "raw block bytes at offset 1 MiB";
  int fd = open(target.c_str(), O_RDWR | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(pwrite(fd, bytes.data(), bytes.size(), kMiB), static_cast<ssize_t>(bytes.size()));
  ASSERT_EQ(fsync(fd), 0);
  close(fd);
  std::string back(bytes.size(), '\0');
  int file = open(disk->loop->backing_file().c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(file, 0);
  ASSERT_EQ(pread(file, back.data(), back.size(), kMiB), static_cast<ssize_t>(back.size()));
  close(file);
  EXPECT_EQ(back, bytes);

  ::csi::v1::NodeGetVolumeStatsResponse stats;
  ASSERT_TRUE(Stats("vol-b", target, &stats).ok());
  ASSERT_EQ(stats.usage_size(), 1);
  EXPECT_EQ(stats.usage(0).total(), static_cast<int64_t>(kDiskSize));
  EXPECT_FALSE(stats.volume_condition().abnormal());

  // Read-only raw block is refused (a ro bind of a device node does not stop writes).
  grpc::Status ro = Publish(PublishReq("vol-b", disk->uuid, staging, env_->NewTargetPath(),
                                       NodeBlockCap(), /*readonly=*/true));
  EXPECT_EQ(ro.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << ro.error_message();
  // A filesystem publish at the block target: AlreadyExists.
  grpc::Status other = Publish(PublishReq("vol-b", disk->uuid, staging, target, NodeMountCap()));
  EXPECT_NE(other.error_code(), grpc::StatusCode::OK);

  // The disk goes away under the published device: the condition says so.
  disk->loop->Release();
  ::csi::v1::NodeGetVolumeStatsResponse gone;
  ASSERT_TRUE(Stats("vol-b", target, &gone).ok());
  EXPECT_TRUE(gone.volume_condition().abnormal());
  EXPECT_NE(gone.volume_condition().message().find("gone"), std::string::npos)
      << gone.volume_condition().message();

  ASSERT_TRUE(Unpublish("vol-b", target).ok());
  EXPECT_FALSE(std::filesystem::exists(target));
  ASSERT_TRUE(Unstage("vol-b", staging).ok());
  EXPECT_TRUE(LoopDevicesBackedUnder(env_->dir()).empty());  // released: detached at once
}

TEST_F(NodeDeviceTest, StatsMatchDfAndReportALostMount) {
  auto disk = env_->NewDisk();
  ASSERT_TRUE(disk.ok()) << disk.status();
  std::string staging;
  const std::string target = Mounted("vol-s", "ext4", &*disk, &staging);
  ASSERT_TRUE(WriteFile(target + "/f", std::string(3 * kMiB, 'x')).ok());

  ::csi::v1::NodeGetVolumeStatsResponse stats;
  ASSERT_TRUE(Stats("vol-s", target, &stats).ok());
  std::vector<int64_t> df = Df(target);
  ASSERT_EQ(df.size(), 6u);
  ASSERT_EQ(stats.usage_size(), 2);
  EXPECT_EQ(stats.usage(0).unit(), ::csi::v1::VolumeUsage::BYTES);
  EXPECT_EQ(stats.usage(0).total(), df[0]);
  EXPECT_EQ(stats.usage(0).used(), df[1]);
  EXPECT_EQ(stats.usage(0).available(), df[2]);
  EXPECT_GE(stats.usage(0).used(), static_cast<int64_t>(3 * kMiB));
  EXPECT_EQ(stats.usage(1).unit(), ::csi::v1::VolumeUsage::INODES);
  EXPECT_EQ(stats.usage(1).total(), df[3]);
  EXPECT_EQ(stats.usage(1).used(), df[4]);
  EXPECT_EQ(stats.usage(1).available(), df[5]);
  EXPECT_FALSE(stats.volume_condition().abnormal());

  // The bind mount disappears behind the plugin's back.
  ASSERT_TRUE(RunTool({"umount", target}).ok());
  ::csi::v1::NodeGetVolumeStatsResponse lost;
  ASSERT_TRUE(Stats("vol-s", target, &lost).ok());
  EXPECT_TRUE(lost.volume_condition().abnormal());
  EXPECT_NE(lost.volume_condition().message().find("not mounted"), std::string::npos);
  EXPECT_EQ(lost.usage_size(), 0);

  // A path that does not exist: NotFound; missing fields: InvalidArgument.
  ::csi::v1::NodeGetVolumeStatsResponse none;
  EXPECT_EQ(Stats("vol-s", env_->dir() + "/nowhere", &none).error_code(),
            grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(Stats("vol-s", "", &none).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(Stats("", target, &none).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  ASSERT_TRUE(Unpublish("vol-s", target).ok());
  ASSERT_TRUE(Unstage("vol-s", staging).ok());
}

class NodeExpandTest : public NodeDeviceTest, public ::testing::WithParamInterface<std::string> {};

TEST_P(NodeExpandTest, GrowsTheMountedFilesystemOnline) {
  auto disk = env_->NewDisk();
  ASSERT_TRUE(disk.ok()) << disk.status();
  std::string staging;
  const std::string target = Mounted("vol-e", GetParam(), &*disk, &staging);
  ASSERT_TRUE(WriteFile(target + "/before.txt", "still here").ok());
  struct statvfs before;
  ASSERT_EQ(statvfs(target.c_str(), &before), 0);

  const uint64_t grown = 2 * kDiskSize;
  ASSERT_TRUE(disk->loop->Grow(grown).ok());
  ::csi::v1::NodeExpandVolumeResponse resp;
  grpc::Status s = Expand("vol-e", target, static_cast<int64_t>(grown), &resp);
  if (GetParam() == "ext4" && !HasCapability(CAP_SYS_RESOURCE)) {
    // The kernel grows a mounted ext4 only for CAP_SYS_RESOURCE, which this machine's bounding
    // set lacks: the answer must say so, and the filesystem and its data stay as they were.
    EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION) << s.error_message();
    EXPECT_NE(s.error_message().find("CAP_SYS_RESOURCE"), std::string::npos) << s.error_message();
    struct statvfs same;
    ASSERT_EQ(statvfs(target.c_str(), &same), 0);
    EXPECT_EQ(same.f_blocks, before.f_blocks);
    auto text = ReadFile(target + "/before.txt");
    ASSERT_TRUE(text.ok()) << text.status();
    EXPECT_EQ(*text, "still here");
    ASSERT_TRUE(Unpublish("vol-e", target).ok());
    ASSERT_TRUE(Unstage("vol-e", staging).ok());
    return;
  }
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(resp.capacity_bytes(), static_cast<int64_t>(grown));

  struct statvfs after;
  ASSERT_EQ(statvfs(target.c_str(), &after), 0);
  const double size_before = double(before.f_blocks) * before.f_frsize;
  const double size_after = double(after.f_blocks) * after.f_frsize;
  EXPECT_GT(size_after, 1.8 * size_before) << size_before << " -> " << size_after;
  std::vector<int64_t> df = Df(target);
  ASSERT_EQ(df.size(), 6u);
  EXPECT_EQ(df[0], static_cast<int64_t>(after.f_blocks * after.f_frsize));
  auto text = ReadFile(target + "/before.txt");
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_EQ(*text, "still here");

  // Asking more than the device has: the device did not grow (yet).
  ::csi::v1::NodeExpandVolumeResponse more;
  EXPECT_EQ(Expand("vol-e", target, static_cast<int64_t>(4 * kDiskSize), &more).error_code(),
            grpc::StatusCode::INTERNAL);
  EXPECT_EQ(Expand("vol-e", env_->dir() + "/nowhere", 1, &more).error_code(),
            grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(Expand("vol-e", "", 1, &more).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  ASSERT_TRUE(Unpublish("vol-e", target).ok());
  ASSERT_TRUE(Unstage("vol-e", staging).ok());
}

INSTANTIATE_TEST_SUITE_P(Filesystems, NodeExpandTest, ::testing::Values("ext4", "xfs"));

TEST_F(NodeDeviceTest, BlockExpandIsANoOpWithTheDeviceSize) {
  auto disk = env_->NewDisk();
  ASSERT_TRUE(disk.ok()) << disk.status();
  const std::string target = env_->NewTargetPath();
  const std::string staging = env_->NewStagingDir();
  ASSERT_TRUE(Publish(PublishReq("vol-be", disk->uuid, staging, target, NodeBlockCap())).ok());
  ASSERT_TRUE(disk->loop->Grow(2 * kDiskSize).ok());
  ::csi::v1::NodeExpandVolumeResponse resp;
  ASSERT_TRUE(Expand("vol-be", target, 2 * kDiskSize, &resp).ok());
  EXPECT_EQ(resp.capacity_bytes(), static_cast<int64_t>(2 * kDiskSize));
  ASSERT_TRUE(Unpublish("vol-be", target).ok());
}

TEST_F(NodeDeviceTest, DeviceThatNeverAppearsFailsFastWithAClearError) {
  StartEnv(absl::Milliseconds(300));
  const std::string uuid = NodeEnv::NewDiskUuid();
  const absl::Time start = absl::Now();
  grpc::Status s = Stage(StageReq("vol-n", uuid, env_->NewStagingDir(), NodeMountCap()));
  const absl::Duration took = absl::Now() - start;
  EXPECT_EQ(s.error_code(), grpc::StatusCode::NOT_FOUND) << s.error_message();
  EXPECT_NE(s.error_message().find(uuid), std::string::npos) << s.error_message();
  EXPECT_NE(s.error_message().find(env_->by_id_dir() + "/wwn-0x" + uuid), std::string::npos)
      << s.error_message();
  EXPECT_GE(took, absl::Milliseconds(300));  // it did wait, boundedly
  EXPECT_LT(took, absl::Seconds(10));
  // A dangling link (udev left it, the disk is gone) is the same as none.
  ASSERT_TRUE(env_->Link(uuid, env_->dir() + "/no-such-device").ok());
  s = Stage(StageReq("vol-n", uuid, env_->NewStagingDir(), NodeMountCap()));
  EXPECT_EQ(s.error_code(), grpc::StatusCode::NOT_FOUND) << s.error_message();
}

TEST_F(NodeDeviceTest, BadInput) {
  auto disk = env_->NewDisk();
  ASSERT_TRUE(disk.ok()) << disk.status();
  const std::string staging = env_->NewStagingDir();
  auto code = [&](::csi::v1::NodeStageVolumeRequest r) { return Stage(r).error_code(); };
  auto good = StageReq("vol-i", disk->uuid, staging, NodeMountCap());
  auto r = good;
  r.clear_volume_id();
  EXPECT_EQ(code(r), grpc::StatusCode::INVALID_ARGUMENT);
  r = good;
  r.clear_staging_target_path();
  EXPECT_EQ(code(r), grpc::StatusCode::INVALID_ARGUMENT);
  r = good;
  r.clear_volume_capability();
  EXPECT_EQ(code(r), grpc::StatusCode::INVALID_ARGUMENT);
  r = good;
  r.mutable_publish_context()->clear();
  EXPECT_EQ(code(r), grpc::StatusCode::INVALID_ARGUMENT);
  r = StageReq("vol-i", disk->uuid, staging, NodeMountCap("nfs"));
  EXPECT_EQ(code(r), grpc::StatusCode::INVALID_ARGUMENT);
  r = StageReq(
      "vol-i", disk->uuid, staging,
      NodeMountCap("xfs", ::csi::v1::VolumeCapability::AccessMode::MULTI_NODE_MULTI_WRITER));
  EXPECT_EQ(code(r), grpc::StatusCode::INVALID_ARGUMENT);  // a file volume is NFS
  r = StageReq("vol-i", disk->uuid, "relative/path", NodeMountCap());
  EXPECT_EQ(code(r), grpc::StatusCode::INVALID_ARGUMENT);
  // A staging path the CO did not create.
  r = StageReq("vol-i", disk->uuid, env_->dir() + "/missing/globalmount", NodeMountCap());
  grpc::Status s = Stage(r);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION) << s.error_message();
  EXPECT_NE(s.error_message().find("does not exist"), std::string::npos);

  auto p = PublishReq("vol-i", disk->uuid, staging, env_->NewTargetPath(), NodeMountCap());
  auto pcode = [&](::csi::v1::NodePublishVolumeRequest q) { return Publish(q).error_code(); };
  auto q = p;
  q.clear_target_path();
  EXPECT_EQ(pcode(q), grpc::StatusCode::INVALID_ARGUMENT);
  q = p;
  q.clear_staging_target_path();
  EXPECT_EQ(pcode(q), grpc::StatusCode::INVALID_ARGUMENT);
  q = p;
  q.clear_volume_capability();
  EXPECT_EQ(pcode(q), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(Unpublish("vol-i", "").error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(Unpublish("", "/x").error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(Unstage("vol-i", "").error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(Unstage("", staging).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  // Unknown volume at paths that hold nothing: unpublish and unstage are done already.
  EXPECT_TRUE(Unpublish("vol-unknown", env_->dir() + "/never/published").ok());
  EXPECT_TRUE(Unstage("vol-unknown", env_->NewStagingDir()).ok());
}

TEST_F(NodeDeviceTest, CapabilitiesAsAnnounced) {
  grpc::ClientContext ctx;
  ::csi::v1::NodeGetCapabilitiesResponse resp;
  ASSERT_TRUE(env_->node().NodeGetCapabilities(&ctx, {}, &resp).ok());
  std::vector<int> types;
  for (const auto& c : resp.capabilities()) types.push_back(c.rpc().type());
  using Rpc = ::csi::v1::NodeServiceCapability::RPC;
  EXPECT_EQ(types, (std::vector<int>{Rpc::STAGE_UNSTAGE_VOLUME, Rpc::EXPAND_VOLUME,
                                     Rpc::GET_VOLUME_STATS, Rpc::VOLUME_CONDITION}));
}

}  // namespace
}  // namespace ccm::csi::testing
