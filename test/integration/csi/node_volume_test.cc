// Stage / publish / unpublish / unstage of filesystem volumes on real loop devices, over the
// real gRPC socket: formatting, data kept across stages, read-only, idempotency, AlreadyExists.
#include <sys/stat.h>

#include <filesystem>
#include <thread>

#include "absl/strings/strip.h"
#include "common/run_command.h"
#include "gtest/gtest.h"
#include "integration/csi/node_env.h"
#include "integration/csi/node_fixture.h"
#include "testing/eventually.h"

namespace ccm::csi::testing {
namespace {

using ::csi::v1::VolumeCapability;
constexpr auto kReader = VolumeCapability::AccessMode::SINGLE_NODE_READER_ONLY;
constexpr auto kWriter = VolumeCapability::AccessMode::SINGLE_NODE_WRITER;

class NodeVolumeFixture : public NodeFixture {
 protected:
  std::string FsOf(const std::string& device) {
    auto out = RunCommand({"blkid", "-p", "-s", "TYPE", "-o", "value", device});
    if (!out.ok()) return out.status().ToString();
    if (out->exit_code == 2) return "";  // nothing there
    return std::string(absl::StripAsciiWhitespace(out->output));
  }
};

class NodeVolumeTest : public NodeVolumeFixture,
                       public ::testing::WithParamInterface<std::string> {};

TEST_P(NodeVolumeTest, LifecycleKeepsDataAcrossStages) {
  const std::string fs = GetParam();
  auto disk = env_->NewDisk();
  ASSERT_TRUE(disk.ok()) << disk.status();
  const std::string staging = env_->NewStagingDir();
  const std::string target = env_->NewTargetPath();
  const auto cap = NodeMountCap(fs);
  auto stage = StageReq("vol-1", disk->uuid, staging, cap);
  auto publish = PublishReq("vol-1", disk->uuid, staging, target, cap);

  ASSERT_TRUE(Stage(stage).ok()) << Stage(stage).error_message();
  EXPECT_EQ(FsOf(disk->loop->path()), fs);  // formatted: the disk was empty
  ASSERT_TRUE(Stage(stage).ok());           // the same call again: OK
  ASSERT_TRUE(Publish(publish).ok()) << Publish(publish).error_message();
  ASSERT_TRUE(Publish(publish).ok());
  ASSERT_TRUE(WriteFile(target + "/data.txt", "kept across stages").ok());

  ASSERT_TRUE(Unpublish("vol-1", target).ok());
  EXPECT_FALSE(std::filesystem::exists(target));  // the plugin removes what it made
  EXPECT_TRUE(Unpublish("vol-1", target).ok());   // idempotent: nothing there is OK
  // A target that is not mounted but holds something (not ours): OK, and nothing is deleted
  // (the pod would otherwise hang in Terminating on an Internal error at every retry).
  std::filesystem::create_directories(target);
  ASSERT_TRUE(WriteFile(target + "/not-ours.txt", "left alone").ok());
  EXPECT_TRUE(Unpublish("vol-1", target).ok());
  EXPECT_TRUE(std::filesystem::exists(target + "/not-ours.txt"));
  std::filesystem::remove_all(target);
  ASSERT_TRUE(Unstage("vol-1", staging).ok());
  EXPECT_TRUE(Unstage("vol-1", staging).ok());
  EXPECT_TRUE(std::filesystem::is_directory(staging));  // the CO's directory stays
  EXPECT_TRUE(MountsUnder(env_->dir()).empty())
      << ::testing::PrintToString(MountsUnder(env_->dir()));

  // A new stage mounts what is there (never formats again): the file is still there.
  const std::string target2 = env_->NewTargetPath();
  ASSERT_TRUE(Stage(stage).ok());
  ASSERT_TRUE(Publish(PublishReq("vol-1", disk->uuid, staging, target2, cap)).ok());
  auto text = ReadFile(target2 + "/data.txt");
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_EQ(*text, "kept across stages");
  ASSERT_TRUE(Unpublish("vol-1", target2).ok());
  ASSERT_TRUE(Unstage("vol-1", staging).ok());
}

TEST_P(NodeVolumeTest, ReadOnlyPublishRefusesWrites) {
  auto disk = env_->NewDisk();
  ASSERT_TRUE(disk.ok()) << disk.status();
  const std::string staging = env_->NewStagingDir();
  const std::string rw = env_->NewTargetPath();
  const std::string ro = env_->NewTargetPath();
  const auto cap = NodeMountCap(GetParam());
  ASSERT_TRUE(Stage(StageReq("vol-ro", disk->uuid, staging, cap)).ok());
  ASSERT_TRUE(Publish(PublishReq("vol-ro", disk->uuid, staging, rw, cap)).ok());
  ASSERT_TRUE(WriteFile(rw + "/seen.txt", "from the writer").ok());
  ASSERT_TRUE(Publish(PublishReq("vol-ro", disk->uuid, staging, ro, cap, /*readonly=*/true)).ok());

  absl::Status write = WriteFile(ro + "/nope.txt", "x");
  EXPECT_EQ(write.code(), absl::ErrnoToStatusCode(EROFS)) << write;
  EXPECT_NE(write.message().find("Read-only file system"), std::string::npos) << write;
  auto seen = ReadFile(ro + "/seen.txt");  // reading works
  ASSERT_TRUE(seen.ok()) << seen.status();
  EXPECT_EQ(*seen, "from the writer");

  // The same target asked read-write now: other arguments at a path in use.
  grpc::Status again = Publish(PublishReq("vol-ro", disk->uuid, staging, ro, cap, false));
  EXPECT_EQ(again.error_code(), grpc::StatusCode::ALREADY_EXISTS) << again.error_message();
  ASSERT_TRUE(Unpublish("vol-ro", ro).ok());
  ASSERT_TRUE(Unpublish("vol-ro", rw).ok());
  ASSERT_TRUE(Unstage("vol-ro", staging).ok());
}

INSTANTIATE_TEST_SUITE_P(Filesystems, NodeVolumeTest, ::testing::Values("ext4", "xfs"));

using NodeStageTest = NodeVolumeFixture;

TEST_F(NodeStageTest, DefaultsToExt4AndAppliesMountFlags) {
  auto disk = env_->NewDisk();
  ASSERT_TRUE(disk.ok()) << disk.status();
  const std::string staging = env_->NewStagingDir();
  ASSERT_TRUE(
      Stage(StageReq("vol-d", disk->uuid, staging, NodeMountCap("", kWriter, {"noatime"}))).ok());
  EXPECT_EQ(FsOf(disk->loop->path()), "ext4");
  auto mounts = RunTool({"findmnt", "-n", "-o", "FSTYPE,OPTIONS", staging});
  ASSERT_TRUE(mounts.ok()) << mounts.status();
  EXPECT_NE(mounts->find("ext4"), std::string::npos) << *mounts;
  EXPECT_NE(mounts->find("noatime"), std::string::npos) << *mounts;
  ASSERT_TRUE(Unstage("vol-d", staging).ok());
}

TEST_F(NodeStageTest, AnotherFilesystemIsRefusedAndNeverFormatted) {
  auto disk = env_->NewDisk();
  ASSERT_TRUE(disk.ok()) << disk.status();
  // Someone's data on an ext4 disk.
  ASSERT_TRUE(RunTool({"mkfs.ext4", "-q", "-F", disk->loop->path()}).ok());
  const std::string own = env_->dir() + "/own";
  std::filesystem::create_directories(own);
  ASSERT_TRUE(RunTool({"mount", disk->loop->path(), own}).ok());
  ASSERT_TRUE(WriteFile(own + "/precious.txt", "do not format").ok());
  ASSERT_TRUE(RunTool({"umount", own}).ok());

  const std::string staging = env_->NewStagingDir();
  grpc::Status s = Stage(StageReq("vol-x", disk->uuid, staging, NodeMountCap("xfs")));
  EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION) << s.error_message();
  EXPECT_NE(s.error_message().find("ext4"), std::string::npos) << s.error_message();
  EXPECT_NE(s.error_message().find("xfs"), std::string::npos) << s.error_message();
  EXPECT_EQ(FsOf(disk->loop->path()), "ext4");
  EXPECT_TRUE(MountsUnder(staging).empty());

  // As ext4 it stages, and the data is there.
  ASSERT_TRUE(Stage(StageReq("vol-x", disk->uuid, staging, NodeMountCap("ext4"))).ok());
  auto text = ReadFile(staging + "/precious.txt");
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_EQ(*text, "do not format");
  // The same staging path with another filesystem asked: AlreadyExists.
  s = Stage(StageReq("vol-x", disk->uuid, staging, NodeMountCap("xfs")));
  EXPECT_EQ(s.error_code(), grpc::StatusCode::ALREADY_EXISTS) << s.error_message();
  ASSERT_TRUE(Unstage("vol-x", staging).ok());
}

TEST_F(NodeStageTest, ReadOnlyVolumeIsNeverFormattedAndMountsReadOnly) {
  auto disk = env_->NewDisk();
  ASSERT_TRUE(disk.ok()) << disk.status();
  const std::string staging = env_->NewStagingDir();
  grpc::Status s = Stage(StageReq("vol-r", disk->uuid, staging, NodeMountCap("ext4", kReader)));
  EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION) << s.error_message();
  EXPECT_EQ(FsOf(disk->loop->path()), "");  // still empty

  // Formatted by a writer first, then staged read-only elsewhere: mounted ro.
  const std::string writer = env_->NewStagingDir();
  ASSERT_TRUE(Stage(StageReq("vol-r", disk->uuid, writer, NodeMountCap("ext4"))).ok());
  ASSERT_TRUE(Unstage("vol-r", writer).ok());
  ASSERT_TRUE(Stage(StageReq("vol-r", disk->uuid, staging, NodeMountCap("ext4", kReader))).ok());
  absl::Status w = WriteFile(staging + "/x", "x");
  EXPECT_EQ(w.code(), absl::ErrnoToStatusCode(EROFS)) << w;
  // The same path asked read-write: AlreadyExists.
  s = Stage(StageReq("vol-r", disk->uuid, staging, NodeMountCap("ext4", kWriter)));
  EXPECT_EQ(s.error_code(), grpc::StatusCode::ALREADY_EXISTS) << s.error_message();
  ASSERT_TRUE(Unstage("vol-r", staging).ok());
}

TEST_F(NodeStageTest, PathsInUseByAnotherVolumeAreAlreadyExists) {
  auto a = env_->NewDisk();
  auto b = env_->NewDisk();
  ASSERT_TRUE(a.ok() && b.ok());
  const std::string staging_a = env_->NewStagingDir();
  const std::string staging_b = env_->NewStagingDir();
  const std::string target = env_->NewTargetPath();
  const auto cap = NodeMountCap("ext4");
  ASSERT_TRUE(Stage(StageReq("vol-a", a->uuid, staging_a, cap)).ok());
  ASSERT_TRUE(Stage(StageReq("vol-b", b->uuid, staging_b, cap)).ok());

  grpc::Status s = Stage(StageReq("vol-b", b->uuid, staging_a, cap));
  EXPECT_EQ(s.error_code(), grpc::StatusCode::ALREADY_EXISTS) << s.error_message();
  EXPECT_NE(s.error_message().find(a->loop->path()), std::string::npos) << s.error_message();

  ASSERT_TRUE(Publish(PublishReq("vol-a", a->uuid, staging_a, target, cap)).ok());
  s = Publish(PublishReq("vol-b", b->uuid, staging_b, target, cap));
  EXPECT_EQ(s.error_code(), grpc::StatusCode::ALREADY_EXISTS) << s.error_message();
  // Publish from a staging path that holds another volume's disk.
  s = Publish(PublishReq("vol-b", b->uuid, staging_a, env_->NewTargetPath(), cap));
  EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION) << s.error_message();

  ASSERT_TRUE(Unpublish("vol-a", target).ok());
  ASSERT_TRUE(Unstage("vol-a", staging_a).ok());
  ASSERT_TRUE(Unstage("vol-b", staging_b).ok());
}

TEST_F(NodeStageTest, PublishBeforeStageIsFailedPrecondition) {
  auto disk = env_->NewDisk();
  ASSERT_TRUE(disk.ok()) << disk.status();
  const std::string staging = env_->NewStagingDir();
  const std::string target = env_->NewTargetPath();
  grpc::Status s = Publish(PublishReq("vol-p", disk->uuid, staging, target, NodeMountCap("ext4")));
  EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION) << s.error_message();
  EXPECT_NE(s.error_message().find("not staged"), std::string::npos) << s.error_message();
}

TEST_F(NodeStageTest, ConcurrentCallOnTheSameVolumeIsAborted) {
  // A stage waiting for its disk to appear holds the volume; another call on it is Aborted.
  auto disk = env_->NewUnlinkedDisk();
  ASSERT_TRUE(disk.ok()) << disk.status();
  const std::string staging = env_->NewStagingDir();
  grpc::Status first;
  // The stage rescans the SCSI hosts once it holds the volume and waits for the disk: a host
  // directory of the test's own tells when that has happened.
  const std::filesystem::path host = std::filesystem::path(env_->dir()) / "scsi_host" / "host0";
  std::filesystem::create_directories(host);
  std::thread stage([&] { first = Stage(StageReq("vol-c", disk->uuid, staging, NodeMountCap())); });
  EXPECT_TRUE(ccm::testing::Eventually([&] { return std::filesystem::exists(host / "scan"); }));
  grpc::Status second = Unstage("vol-c", staging);
  EXPECT_EQ(second.error_code(), grpc::StatusCode::ABORTED) << second.error_message();
  EXPECT_NE(second.error_message().find("vol-c"), std::string::npos);
  // Another volume is not held up.
  EXPECT_TRUE(Unstage("vol-other", env_->NewStagingDir()).ok());
  ASSERT_TRUE(env_->Link(disk->uuid, disk->loop->path()).ok());  // the disk "attaches"
  stage.join();
  EXPECT_TRUE(first.ok()) << first.error_message();
  ASSERT_TRUE(Unstage("vol-c", staging).ok());
}

// A file volume over the real socket and the real mounter, up to mount(2): the target directory
// is made and mount(2) is called with the NFSv4.1 export, type nfs4 and the server's address in
// the data. This machine's kernel has no NFS client (checked in /proc/filesystems), so the
// kernel mount itself is not exercised: the call fails with ENODEV, named, and nothing is left
// mounted. On a kernel with an NFS client this test does not run (no NFS server to mount here).
TEST_F(NodeStageTest, FileVolumePublishReachesMountAndNamesAMissingNfsClient) {
  auto fs = ReadFile("/proc/filesystems");
  ASSERT_TRUE(fs.ok()) << fs.status();
  if (fs->find("\tnfs4\n") != std::string::npos) {
    GTEST_SKIP() << "this kernel has an NFS client; the test expects none (no NFS server here)";
  }
  const std::string target = env_->NewTargetPath();
  ::csi::v1::NodePublishVolumeRequest req =
      PublishReq("file:5e1", "", env_->NewStagingDir(), target,
                 NodeMountCap("", VolumeCapability::AccessMode::MULTI_NODE_MULTI_WRITER));
  req.mutable_publish_context()->clear();
  (*req.mutable_publish_context())["type"] = "vSphere CNS File Volume";
  (*req.mutable_publish_context())["Nfsv4AccessPoint"] = "127.0.0.1:/vsanfs/pvc-f";
  grpc::Status s = Publish(req);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INTERNAL) << s.error_message();
  for (const char* part : {"mount 127.0.0.1:/vsanfs/pvc-f at ",
                           "(nfs4, data \"hard,sec=sys,vers=4,minorversion=1,"
                           "addr=127.0.0.1\")",
                           "this node's kernel has no NFS client"}) {
    EXPECT_NE(s.error_message().find(part), std::string::npos) << s.error_message();
  }
  struct stat st {};
  EXPECT_EQ(stat(target.c_str(), &st), 0) << "the target directory is made before mount(2)";
  EXPECT_TRUE(S_ISDIR(st.st_mode));
  auto mounts = ReadFile("/proc/self/mountinfo");
  ASSERT_TRUE(mounts.ok());
  EXPECT_EQ(mounts->find(target), std::string::npos);
  EXPECT_TRUE(Unpublish("file:5e1", target).ok());
}

}  // namespace
}  // namespace ccm::csi::testing
