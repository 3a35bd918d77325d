// The Node service's decisions, RPC by RPC, on the in-memory seams (testing/fake_node.h): every
// branch of stage, unstage, publish, unpublish, stats and expand, with the spec's codes and the
// I/O each one does (or must not do). The real mounts are node_volume_test's (loop devices).
#include "csi/node/node_service.h"

#include <sys/sysmacros.h>

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/fake_node.h"

namespace ccm::csi::node {
namespace {

using testing::FakeDeviceFinder;
using testing::FakeFilesystems;
using testing::FakeMounter;
using ::testing::HasSubstr;

constexpr char kUuid[] = "6000c29123456789012345678900abcd";
constexpr char kDevice[] = "/dev/sdb";
constexpr char kOtherDevice[] = "/dev/sdc";
constexpr char kStaging[] = "/var/lib/kubelet/plugins/kubernetes.io/csi/pv/pv1/globalmount";
constexpr char kTarget[] = "/var/lib/kubelet/pods/p1/volumes/kubernetes.io~csi/pv1/mount";
constexpr char kBlockTarget[] = "/var/lib/kubelet/plugins/kubernetes.io/csi/volumeDevices/pv1/p1";
constexpr uint64_t kGiB = 1ull << 30;
const dev_t kRdev = makedev(8, 16);

// A node with one attached disk (kDevice, 10 GiB, empty) and the kubelet's directories.
struct World {
  World() {
    mounter->AddDir(kStaging);
    mounter->AddDir("/var/lib/kubelet/pods/p1/volumes/kubernetes.io~csi/pv1");
    mounter->AddDevice(kDevice, kRdev);
    mounter->AddDevice(kOtherDevice, makedev(8, 32));
    devices->AddDisk(kUuid, kDevice, kRdev, 10 * kGiB);
    service =
        std::make_unique<NodeService>(NodeServiceOptions{}, NodeIo{mounter, devices, filesystems});
  }
  // A mount as an earlier stage left it.
  void Staged(const std::string& device = kDevice, dev_t rdev = kRdev, bool ro = false) {
    MountInfo m;
    m.id = 1;
    m.major = major(rdev);
    m.minor = minor(rdev);
    m.root = "/";
    m.mount_point = kStaging;
    m.options = ro ? "ro" : "rw";
    m.fs_type = "ext4";
    m.source = device;
    mounter->AddMount(m);
    filesystems->Set(device, "ext4");
  }
  std::shared_ptr<FakeMounter> mounter = std::make_shared<FakeMounter>();
  std::shared_ptr<FakeDeviceFinder> devices = std::make_shared<FakeDeviceFinder>();
  std::shared_ptr<FakeFilesystems> filesystems = std::make_shared<FakeFilesystems>();
  std::unique_ptr<NodeService> service;
};

::csi::v1::VolumeCapability MountCap(
    const std::string& fs = "ext4",
    ::csi::v1::VolumeCapability::AccessMode::Mode mode =
        ::csi::v1::VolumeCapability::AccessMode::SINGLE_NODE_WRITER) {
  ::csi::v1::VolumeCapability c;
  c.mutable_mount()->set_fs_type(fs);
  c.mutable_access_mode()->set_mode(mode);
  return c;
}

::csi::v1::VolumeCapability BlockCap() {
  ::csi::v1::VolumeCapability c;
  c.mutable_block();
  c.mutable_access_mode()->set_mode(::csi::v1::VolumeCapability::AccessMode::SINGLE_NODE_WRITER);
  return c;
}

::csi::v1::NodeStageVolumeRequest StageReq() {
  ::csi::v1::NodeStageVolumeRequest r;
  r.set_volume_id("vol-1");
  r.set_staging_target_path(kStaging);
  (*r.mutable_publish_context())["diskUUID"] = kUuid;
  *r.mutable_volume_capability() = MountCap();
  return r;
}

struct StageCase {
  std::string name;
  std::function<void(World&, ::csi::v1::NodeStageVolumeRequest&)> setup;
  grpc::StatusCode code;
  std::vector<std::string> calls;     // made (prefixes)
  std::vector<std::string> no_calls;  // not made (prefixes)
  std::string message;                // in the error
};

TEST(NodeServiceTest, Stage) {
  using Req = ::csi::v1::NodeStageVolumeRequest;
  const std::vector<StageCase> cases = {
      {"empty disk: formatted and mounted",
       [](World&, Req&) {},
       grpc::StatusCode::OK,
       {"Format ext4 /dev/sdb", "Mount /dev/sdb " + std::string(kStaging) + " ext4"},
       {},
       ""},
      {"ext4 there: mounted, never formatted",
       [](World& w, Req&) { w.filesystems->Set(kDevice, "ext4"); },
       grpc::StatusCode::OK,
       {"Mount /dev/sdb"},
       {"Format"},
       ""},
      {"ext3 asked as ext4: mounted as ext3",
       [](World& w, Req&) { w.filesystems->Set(kDevice, "ext3"); },
       grpc::StatusCode::OK,
       {"Mount /dev/sdb " + std::string(kStaging) + " ext3"},
       {"Format"},
       ""},
      {"another filesystem: refused, data kept",
       [](World& w, Req&) { w.filesystems->Set(kDevice, "xfs"); },
       grpc::StatusCode::FAILED_PRECONDITION,
       {},
       {"Format", "Mount "},
       "xfs"},
      {"a partition table: refused",
       [](World& w, Req&) { w.filesystems->Set(kDevice, "dos"); },
       grpc::StatusCode::FAILED_PRECONDITION,
       {},
       {"Format", "Mount "},
       "dos"},
      {"several signatures: refused",
       [](World& w, Req&) {
         w.filesystems->Fail("Probe", absl::FailedPreconditionError("more than one signature"));
       },
       grpc::StatusCode::FAILED_PRECONDITION,
       {},
       {"Format", "Mount "},
       "signature"},
      {"read-only and empty: never formatted",
       [](World&, Req& r) {
         *r.mutable_volume_capability() =
             MountCap("ext4", ::csi::v1::VolumeCapability::AccessMode::SINGLE_NODE_READER_ONLY);
       },
       grpc::StatusCode::FAILED_PRECONDITION,
       {},
       {"Format", "Mount "},
       ""},
      {"read-only with ext4: mounted ro",
       [](World& w, Req& r) {
         w.filesystems->Set(kDevice, "ext4");
         *r.mutable_volume_capability() =
             MountCap("ext4", ::csi::v1::VolumeCapability::AccessMode::SINGLE_NODE_READER_ONLY);
       },
       grpc::StatusCode::OK,
       {"Mount /dev/sdb " + std::string(kStaging) + " ext4 ro"},
       {},
       ""},
      {"xfs gets nouuid",
       [](World&, Req& r) { *r.mutable_volume_capability() = MountCap("xfs"); },
       grpc::StatusCode::OK,
       {"Format xfs /dev/sdb", "Mount /dev/sdb " + std::string(kStaging) + " xfs nouuid"},
       {},
       ""},
      {"raw block: found, nothing mounted",
       [](World&, Req& r) { *r.mutable_volume_capability() = BlockCap(); },
       grpc::StatusCode::OK,
       {"FindDisk"},
       {"Probe", "Mount "},
       ""},
      {"staged before: OK, nothing done",
       [](World& w, Req&) { w.Staged(); },
       grpc::StatusCode::OK,
       {},
       {"Probe", "Format", "Mount "},
       ""},
      {"staged read-only before, asked read-write: AlreadyExists",
       [](World& w, Req&) { w.Staged(kDevice, kRdev, /*ro=*/true); },
       grpc::StatusCode::ALREADY_EXISTS,
       {},
       {"Mount "},
       "read-only"},
      {"another device staged there: AlreadyExists",
       [](World& w, Req&) { w.Staged(kOtherDevice, makedev(8, 32)); },
       grpc::StatusCode::ALREADY_EXISTS,
       {},
       {"Mount "},
       "/dev/sdc"},
      {"the device mounted elsewhere: FailedPrecondition",
       [](World& w, Req&) {
         MountInfo m;
         m.major = 8;
         m.minor = 16;
         m.mount_point = "/mnt/elsewhere";
         m.source = kDevice;
         w.mounter->AddMount(m);
       },
       grpc::StatusCode::FAILED_PRECONDITION,
       {},
       {"Format", "Mount "},
       "/mnt/elsewhere"},
      {"staging directory missing: FailedPrecondition",
       [](World&, Req& r) { r.set_staging_target_path("/var/lib/kubelet/nowhere"); },
       grpc::StatusCode::FAILED_PRECONDITION,
       {},
       {"Mount "},
       "does not exist"},
      {"staging path is a file: FailedPrecondition",
       [](World& w, Req& r) {
         w.mounter->AddFile("/var/lib/kubelet/a-file");
         r.set_staging_target_path("/var/lib/kubelet/a-file");
       },
       grpc::StatusCode::FAILED_PRECONDITION,
       {},
       {"Mount "},
       "not a directory"},
      {"disk not attached: NotFound",
       [](World& w, Req&) { w.devices->Detach(kUuid); },
       grpc::StatusCode::NOT_FOUND,
       {},
       {"Mount "},
       kUuid},
      {"no diskUUID: InvalidArgument",
       [](World&, Req& r) { r.mutable_publish_context()->clear(); },
       grpc::StatusCode::INVALID_ARGUMENT,
       {},
       {"FindDisk"},
       "diskUUID"},
      {"no volume_id",
       [](World&, Req& r) { r.clear_volume_id(); },
       grpc::StatusCode::INVALID_ARGUMENT,
       {},
       {"FindDisk"},
       "volume_id"},
      {"no capability",
       [](World&, Req& r) { r.clear_volume_capability(); },
       grpc::StatusCode::INVALID_ARGUMENT,
       {},
       {"FindDisk"},
       "volume_capability"},
      {"relative staging path",
       [](World&, Req& r) { r.set_staging_target_path("rel/path"); },
       grpc::StatusCode::INVALID_ARGUMENT,
       {},
       {"FindDisk"},
       "absolute"},
      {"nfs: InvalidArgument",
       [](World&, Req& r) { *r.mutable_volume_capability() = MountCap("nfs"); },
       grpc::StatusCode::INVALID_ARGUMENT,
       {},
       {"FindDisk"},
       "nfs"},
      {"mkfs fails: Internal",
       [](World& w, Req&) {
         w.filesystems->Fail("Format", absl::NotFoundError("mkfs.ext4 missing"));
       },
       grpc::StatusCode::INTERNAL,
       {},
       {"Mount "},
       "mkfs.ext4"},
      {"mount(2) fails: Internal, errno's code not passed on",
       [](World& w, Req&) { w.mounter->Fail("Mount", absl::NotFoundError("mount: ENOENT")); },
       grpc::StatusCode::INTERNAL,
       {},
       {},
       "ENOENT"},
  };
  for (const StageCase& c : cases) {
    World w;
    Req req = StageReq();
    c.setup(w, req);
    grpc::ServerContext ctx;
    ::csi::v1::NodeStageVolumeResponse resp;
    grpc::Status s = w.service->NodeStageVolume(&ctx, &req, &resp);
    EXPECT_EQ(s.error_code(), c.code) << c.name << ": " << s.error_message();
    EXPECT_THAT(s.error_message(), HasSubstr(c.message)) << c.name;
    const std::vector<std::string> all = [&] {
      std::vector<std::string> v = w.mounter->calls();
      for (const auto& x : w.filesystems->calls()) v.push_back(x);
      for (const auto& x : w.devices->calls()) v.push_back(x);
      return v;
    }();
    auto made = [&](const std::string& prefix) {
      for (const std::string& call : all) {
        if (call.rfind(prefix, 0) == 0) return true;
      }
      return false;
    };
    for (const std::string& p : c.calls) EXPECT_TRUE(made(p)) << c.name << ": no " << p;
    for (const std::string& p : c.no_calls) EXPECT_FALSE(made(p)) << c.name << ": made " << p;
  }
}

TEST(NodeServiceTest, UnstageUnmountsEveryStackedMountAndIsIdempotent) {
  World w;
  w.Staged();
  w.Staged();
  grpc::ServerContext ctx;
  ::csi::v1::NodeUnstageVolumeRequest req;
  req.set_volume_id("vol-1");
  req.set_staging_target_path(std::string(kStaging) + "/");
  ::csi::v1::NodeUnstageVolumeResponse resp;
  EXPECT_TRUE(w.service->NodeUnstageVolume(&ctx, &req, &resp).ok());
  EXPECT_EQ(w.mounter->Count("Unmount " + std::string(kStaging)), 2);
  EXPECT_TRUE(w.mounter->Exists(kStaging));  // the CO's directory stays
  EXPECT_TRUE(w.service->NodeUnstageVolume(&ctx, &req, &resp).ok());
  EXPECT_EQ(w.mounter->Count("Unmount"), 2);
  // A failing umount2 is Internal, naming the volume.
  w.Staged();
  w.mounter->Fail("Unmount", absl::PermissionDeniedError("EPERM"));
  grpc::Status s = w.service->NodeUnstageVolume(&ctx, &req, &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INTERNAL);
  EXPECT_THAT(s.error_message(), HasSubstr("vol-1"));
}

::csi::v1::NodePublishVolumeRequest PublishReq() {
  ::csi::v1::NodePublishVolumeRequest r;
  r.set_volume_id("vol-1");
  r.set_staging_target_path(kStaging);
  r.set_target_path(kTarget);
  (*r.mutable_publish_context())["diskUUID"] = kUuid;
  *r.mutable_volume_capability() = MountCap();
  return r;
}

struct PublishCase {
  std::string name;
  std::function<void(World&, ::csi::v1::NodePublishVolumeRequest&)> setup;
  grpc::StatusCode code;
  std::string call;     // made (exactly), when not empty
  std::string message;  // in the error
};

TEST(NodeServiceTest, Publish) {
  using Req = ::csi::v1::NodePublishVolumeRequest;
  const std::string bind = "BindMount " + std::string(kStaging) + " " + kTarget;
  auto block = [](Req& r) {
    *r.mutable_volume_capability() = BlockCap();
    r.set_target_path(kBlockTarget);
  };
  const std::vector<PublishCase> cases = {
      {"staged: bind mount on a new directory", [](World& w, Req&) { w.Staged(); },
       grpc::StatusCode::OK, bind + " bind", ""},
      {"readonly: bound read-only",
       [](World& w, Req& r) {
         w.Staged();
         r.set_readonly(true);
       },
       grpc::StatusCode::OK, bind + " bind,ro", ""},
      {"not staged: FailedPrecondition", [](World&, Req&) {}, grpc::StatusCode::FAILED_PRECONDITION,
       "", "not staged"},
      {"another device staged: FailedPrecondition",
       [](World& w, Req&) { w.Staged(kOtherDevice, makedev(8, 32)); },
       grpc::StatusCode::FAILED_PRECONDITION, "", "/dev/sdc"},
      {"a file at the target: AlreadyExists",
       [](World& w, Req&) {
         w.Staged();
         w.mounter->AddFile(kTarget);
       },
       grpc::StatusCode::ALREADY_EXISTS, "", "is a file"},
      {"published before: OK",
       [](World& w, Req& r) {
         w.Staged();
         w.mounter->AddDir(kTarget);
         ASSERT_TRUE(w.mounter->BindMount(kStaging, kTarget, {}).ok());
       },
       grpc::StatusCode::OK, "", ""},
      {"published read-write before, asked read-only: AlreadyExists",
       [](World& w, Req& r) {
         w.Staged();
         w.mounter->AddDir(kTarget);
         ASSERT_TRUE(w.mounter->BindMount(kStaging, kTarget, {}).ok());
         r.set_readonly(true);
       },
       grpc::StatusCode::ALREADY_EXISTS, "", "read-write"},
      {"something else mounted at the target: AlreadyExists",
       [](World& w, Req&) {
         w.Staged();
         w.mounter->AddDir(kTarget);
         ASSERT_TRUE(w.mounter->Mount(kOtherDevice, kTarget, "ext4", {}).ok());
       },
       grpc::StatusCode::ALREADY_EXISTS, "", "/dev/sdc"},
      {"raw block: a file with the device bound on it", [block](World&, Req& r) { block(r); },
       grpc::StatusCode::OK, "BindMount /dev/sdb " + std::string(kBlockTarget) + " ", ""},
      {"raw block published before: OK",
       [block](World& w, Req& r) {
         block(r);
         w.mounter->AddFile(kBlockTarget);
         ASSERT_TRUE(w.mounter->BindMount(kDevice, kBlockTarget, {}).ok());
       },
       grpc::StatusCode::OK, "", ""},
      {"raw block readonly: InvalidArgument, as the reference",
       [block](World&, Req& r) {
         block(r);
         r.set_readonly(true);
       },
       grpc::StatusCode::INVALID_ARGUMENT, "", "read-only"},
      {"raw block on a directory: AlreadyExists",
       [block](World& w, Req& r) {
         block(r);
         w.mounter->AddDir(kBlockTarget);
       },
       grpc::StatusCode::ALREADY_EXISTS, "", "directory"},
      {"disk not attached: NotFound", [](World& w, Req&) { w.devices->Detach(kUuid); },
       grpc::StatusCode::NOT_FOUND, "", kUuid},
      {"no target path", [](World&, Req& r) { r.clear_target_path(); },
       grpc::StatusCode::INVALID_ARGUMENT, "", "target_path"},
      {"no staging path", [](World&, Req& r) { r.clear_staging_target_path(); },
       grpc::StatusCode::INVALID_ARGUMENT, "", "staging_target_path"},
      {"bind fails: Internal",
       [](World& w, Req&) {
         w.Staged();
         w.mounter->Fail("BindMount", absl::PermissionDeniedError("EPERM"));
       },
       grpc::StatusCode::INTERNAL, bind + " bind", "EPERM"},
  };
  for (const PublishCase& c : cases) {
    World w;
    Req req = PublishReq();
    c.setup(w, req);
    grpc::ServerContext ctx;
    ::csi::v1::NodePublishVolumeResponse resp;
    const int binds_before = w.mounter->Count("BindMount");
    grpc::Status s = w.service->NodePublishVolume(&ctx, &req, &resp);
    EXPECT_EQ(s.error_code(), c.code) << c.name << ": " << s.error_message();
    EXPECT_THAT(s.error_message(), HasSubstr(c.message)) << c.name;
    if (c.call.empty()) {
      EXPECT_EQ(w.mounter->Count("BindMount"), binds_before) << c.name;
    } else {
      const std::vector<std::string>& calls = w.mounter->calls();
      EXPECT_NE(std::find(calls.begin(), calls.end(), c.call), calls.end()) << c.name;
    }
  }
}

TEST(NodeServiceTest, UnpublishRemovesOnlyItsOwnMountPoint) {
  grpc::ServerContext ctx;
  ::csi::v1::NodeUnpublishVolumeResponse resp;
  ::csi::v1::NodeUnpublishVolumeRequest req;
  req.set_volume_id("vol-1");
  req.set_target_path(kTarget);
  {
    World w;  // published: unmounted and its directory removed
    w.Staged();
    w.mounter->AddDir(kTarget);
    ASSERT_TRUE(w.mounter->BindMount(kStaging, kTarget, {}).ok());
    EXPECT_TRUE(w.service->NodeUnpublishVolume(&ctx, &req, &resp).ok());
    EXPECT_FALSE(w.mounter->Exists(kTarget));
    EXPECT_TRUE(w.service->NodeUnpublishVolume(&ctx, &req, &resp).ok());  // again: OK
  }
  {
    World w;  // not mounted, with someone's files in it: OK, nothing removed
    w.mounter->AddFile(std::string(kTarget) + "/data");
    EXPECT_TRUE(w.service->NodeUnpublishVolume(&ctx, &req, &resp).ok());
    EXPECT_TRUE(w.mounter->Exists(std::string(kTarget) + "/data"));
    EXPECT_EQ(w.mounter->Count("Remove"), 0);
    EXPECT_EQ(w.mounter->Count("Unmount"), 0);
  }
  {
    World w;  // mounted over files: unmounted, the directory stays (not ours), still OK
    w.Staged();
    w.mounter->AddFile(std::string(kTarget) + "/data");
    ASSERT_TRUE(w.mounter->BindMount(kStaging, kTarget, {}).ok());
    EXPECT_TRUE(w.service->NodeUnpublishVolume(&ctx, &req, &resp).ok());
    EXPECT_TRUE(w.mounter->Exists(std::string(kTarget) + "/data"));
  }
  {
    World w;  // unmount refused: Internal
    w.Staged();
    w.mounter->AddDir(kTarget);
    ASSERT_TRUE(w.mounter->BindMount(kStaging, kTarget, {}).ok());
    w.mounter->Fail("Unmount", absl::UnavailableError("EBUSY"));
    EXPECT_EQ(w.service->NodeUnpublishVolume(&ctx, &req, &resp).error_code(),
              grpc::StatusCode::INTERNAL);
  }
}

::csi::v1::NodeGetVolumeStatsResponse Stats(World& w, const std::string& path, grpc::Status* s) {
  grpc::ServerContext ctx;
  ::csi::v1::NodeGetVolumeStatsRequest req;
  req.set_volume_id("vol-1");
  req.set_volume_path(path);
  ::csi::v1::NodeGetVolumeStatsResponse resp;
  *s = w.service->NodeGetVolumeStats(&ctx, &req, &resp);
  return resp;
}

TEST(NodeServiceTest, StatsReportUsageOrTheVolumeCondition) {
  grpc::Status s;
  {
    World w;  // a mounted filesystem: bytes and inodes as df shows them
    w.Staged();
    w.mounter->SetStatFs({4096, 1000, 400, 300, 500, 200});
    auto r = Stats(w, kStaging, &s);
    ASSERT_TRUE(s.ok()) << s.error_message();
    EXPECT_FALSE(r.volume_condition().abnormal());
    ASSERT_EQ(r.usage_size(), 2);
    EXPECT_EQ(r.usage(0).total(), 1000 * 4096);
    EXPECT_EQ(r.usage(0).available(), 300 * 4096);
    EXPECT_EQ(r.usage(0).used(), 600 * 4096);
    EXPECT_EQ(r.usage(1).used(), 300);
  }
  {
    World w;  // a missing path: NotFound, as the spec's table says
    Stats(w, "/var/lib/kubelet/gone", &s);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::NOT_FOUND);
    // A relative path names no volume either (csi-sanity sends "some/path"); none at all is
    // a malformed request.
    Stats(w, "some/path", &s);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::NOT_FOUND);
    Stats(w, "", &s);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  }
  {
    World w;  // not mounted any more: abnormal, no usage
    auto r = Stats(w, kStaging, &s);
    ASSERT_TRUE(s.ok());
    EXPECT_TRUE(r.volume_condition().abnormal());
    EXPECT_THAT(r.volume_condition().message(), HasSubstr("not mounted"));
    EXPECT_EQ(r.usage_size(), 0);
  }
  {
    World w;  // the disk detached under the mount: abnormal
    w.Staged();
    w.devices->Detach(kUuid);
    auto r = Stats(w, kStaging, &s);
    ASSERT_TRUE(s.ok());
    EXPECT_TRUE(r.volume_condition().abnormal());
    EXPECT_THAT(r.volume_condition().message(), HasSubstr("vanished"));
  }
  {
    World w;  // a raw block volume: its size
    w.mounter->AddFile(kBlockTarget);
    ASSERT_TRUE(w.mounter->BindMount(kDevice, kBlockTarget, {}).ok());
    w.devices->SetSize(kBlockTarget, 10 * kGiB);
    auto r = Stats(w, kBlockTarget, &s);
    ASSERT_TRUE(s.ok()) << s.error_message();
    ASSERT_EQ(r.usage_size(), 1);
    EXPECT_EQ(r.usage(0).total(), static_cast<int64_t>(10 * kGiB));
  }
}

// File volumes (issue 45): no staging; the NFSv4.1 export of the publish context mounted at the
// target through the Mounter, with the reference's options; read-only for ROX or readonly.
constexpr char kExport[] = "10.0.200.1:/vsanfs/pvc-f";
::csi::v1::NodePublishVolumeRequest FilePublishReq(
    ::csi::v1::VolumeCapability::AccessMode::Mode mode =
        ::csi::v1::VolumeCapability::AccessMode::MULTI_NODE_MULTI_WRITER) {
  ::csi::v1::NodePublishVolumeRequest r;
  r.set_volume_id("file:5e1");
  r.set_staging_target_path(kStaging);
  r.set_target_path(kTarget);
  (*r.mutable_publish_context())["type"] = "vSphere CNS File Volume";
  (*r.mutable_publish_context())["Nfsv4AccessPoint"] = kExport;
  *r.mutable_volume_capability() = MountCap("", mode);
  return r;
}

TEST(NodeServiceTest, FileVolumes) {
  using Mode = ::csi::v1::VolumeCapability::AccessMode;
  using Req = ::csi::v1::NodePublishVolumeRequest;
  const std::string mount = absl::StrCat("Mount ", kExport, " ", kTarget, " nfs4 ");
  const std::vector<PublishCase> cases = {
      {"RWX: nfs4 with the reference's options", [](World&, Req&) {}, grpc::StatusCode::OK,
       mount + "hard,sec=sys,vers=4,minorversion=1", ""},
      {"ROX: read-only", [](World&, Req& r) { r = FilePublishReq(Mode::MULTI_NODE_READER_ONLY); },
       grpc::StatusCode::OK, mount + "ro,hard,sec=sys,vers=4,minorversion=1", ""},
      {"readonly flag and the capability's mount flags",
       [](World&, Req& r) {
         r.set_readonly(true);
         r.mutable_volume_capability()->mutable_mount()->add_mount_flags("noatime");
       },
       grpc::StatusCode::OK, mount + "ro,noatime,hard,sec=sys,vers=4,minorversion=1", ""},
      {"fs type nfs kept",
       [](World&, Req& r) { r.mutable_volume_capability()->mutable_mount()->set_fs_type("nfs"); },
       grpc::StatusCode::OK,
       absl::StrCat("Mount ", kExport, " ", kTarget, " nfs hard,sec=sys,vers=4,minorversion=1"),
       ""},
      {"no access point: InvalidArgument",
       [](World&, Req& r) { r.mutable_publish_context()->erase("Nfsv4AccessPoint"); },
       grpc::StatusCode::INVALID_ARGUMENT, "", "Nfsv4AccessPoint"},
      {"raw block: InvalidArgument",
       [](World&, Req& r) { r.mutable_volume_capability()->mutable_block(); },
       grpc::StatusCode::INVALID_ARGUMENT, "", "raw block"},
      {"published before: OK, no second mount",
       [](World& w, Req&) {
         w.mounter->AddDir(kTarget);
         ASSERT_TRUE(w.mounter->Mount(kExport, kTarget, "nfs4", {}).ok());
       },
       grpc::StatusCode::OK, "", ""},
      {"another export at the target: AlreadyExists",
       [](World& w, Req&) {
         w.mounter->AddDir(kTarget);
         ASSERT_TRUE(w.mounter->Mount("10.0.200.1:/vsanfs/other", kTarget, "nfs4", {}).ok());
       },
       grpc::StatusCode::ALREADY_EXISTS, "", "vsanfs/other"},
      {"mount fails: Internal naming it",
       [](World& w, Req&) { w.mounter->Fail("Mount", absl::NotFoundError("ENODEV")); },
       grpc::StatusCode::INTERNAL, mount + "hard,sec=sys,vers=4,minorversion=1", "ENODEV"},
  };
  for (const PublishCase& c : cases) {
    World w;
    Req req = FilePublishReq();
    c.setup(w, req);
    grpc::ServerContext ctx;
    ::csi::v1::NodePublishVolumeResponse resp;
    auto mount_calls = [&w] {
      return std::count_if(w.mounter->calls().begin(), w.mounter->calls().end(),
                           [](const std::string& c) { return c.rfind("Mount ", 0) == 0; });
    };
    const auto mounts_before = mount_calls();
    grpc::Status s = w.service->NodePublishVolume(&ctx, &req, &resp);
    EXPECT_EQ(s.error_code(), c.code) << c.name << ": " << s.error_message();
    EXPECT_THAT(s.error_message(), HasSubstr(c.message)) << c.name;
    if (c.call.empty()) {
      EXPECT_EQ(mount_calls(), mounts_before) << c.name;
    } else {
      const std::vector<std::string>& calls = w.mounter->calls();
      EXPECT_NE(std::find(calls.begin(), calls.end(), c.call), calls.end()) << c.name;
    }
    EXPECT_EQ(w.mounter->Count("BindMount"), 0) << c.name;
  }
}

TEST(NodeServiceTest, FileVolumeStageIsNothingUnpublishAndStatsAsAnyMount) {
  World w;
  grpc::ServerContext ctx;
  ::csi::v1::NodeStageVolumeRequest stage = StageReq();
  stage.clear_publish_context();
  (*stage.mutable_publish_context())["Nfsv4AccessPoint"] = kExport;
  *stage.mutable_volume_capability() =
      MountCap("", ::csi::v1::VolumeCapability::AccessMode::MULTI_NODE_MULTI_WRITER);
  ::csi::v1::NodeStageVolumeResponse staged;
  ASSERT_TRUE(w.service->NodeStageVolume(&ctx, &stage, &staged).ok());
  EXPECT_TRUE(w.mounter->calls().empty());

  ::csi::v1::NodePublishVolumeRequest req = FilePublishReq();
  ::csi::v1::NodePublishVolumeResponse published;
  ASSERT_TRUE(w.service->NodePublishVolume(&ctx, &req, &published).ok());
  w.mounter->SetStatFs({4096, 1000, 400, 300, 500, 200});
  grpc::Status s;
  auto r = Stats(w, kTarget, &s);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_FALSE(r.volume_condition().abnormal()) << r.volume_condition().message();
  ASSERT_EQ(r.usage_size(), 2);
  EXPECT_EQ(r.usage(0).total(), 1000 * 4096);

  ::csi::v1::NodeUnpublishVolumeRequest un;
  un.set_volume_id("file:5e1");
  un.set_target_path(kTarget);
  ::csi::v1::NodeUnpublishVolumeResponse unresp;
  ASSERT_TRUE(w.service->NodeUnpublishVolume(&ctx, &un, &unresp).ok());
  EXPECT_TRUE(w.mounter->mounts().empty());
  EXPECT_FALSE(w.mounter->Exists(kTarget));
}

grpc::Status Expand(World& w, const std::string& path, int64_t bytes,
                    ::csi::v1::NodeExpandVolumeResponse* resp) {
  grpc::ServerContext ctx;
  ::csi::v1::NodeExpandVolumeRequest req;
  req.set_volume_id("vol-1");
  req.set_volume_path(path);
  req.mutable_capacity_range()->set_required_bytes(bytes);
  return w.service->NodeExpandVolume(&ctx, &req, resp);
}

TEST(NodeServiceTest, ExpandGrowsTheMountedFilesystem) {
  ::csi::v1::NodeExpandVolumeResponse resp;
  {
    World w;  // vCenter grew the disk: rescan, grow, the new size
    w.Staged();
    w.devices->SetSizeAfterRescan(kDevice, 20 * kGiB);
    grpc::Status s = Expand(w, kStaging, 20 * kGiB, &resp);
    ASSERT_TRUE(s.ok()) << s.error_message();
    EXPECT_EQ(resp.capacity_bytes(), static_cast<int64_t>(20 * kGiB));
    EXPECT_EQ(w.devices->Count("Rescan /dev/sdb"), 1);
    EXPECT_EQ(w.filesystems->Count("Grow ext4 /dev/sdb " + std::string(kStaging)), 1);
  }
  {
    World w;  // the guest still sees the old size after the rescan: Internal
    w.Staged();
    EXPECT_EQ(Expand(w, kStaging, 20 * kGiB, &resp).error_code(), grpc::StatusCode::INTERNAL);
  }
  {
    World w;  // a path that names no volume: NotFound, relative or missing
    EXPECT_EQ(Expand(w, "some/path", kGiB, &resp).error_code(), grpc::StatusCode::NOT_FOUND);
    EXPECT_EQ(Expand(w, "/var/lib/kubelet/gone", kGiB, &resp).error_code(),
              grpc::StatusCode::NOT_FOUND);
  }
  {
    World w;  // the kernel refuses for want of a capability: FailedPrecondition kept
    w.Staged();
    w.filesystems->Fail("Grow", absl::FailedPreconditionError("needs CAP_SYS_RESOURCE"));
    grpc::Status s = Expand(w, kStaging, 10 * kGiB, &resp);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
    EXPECT_THAT(s.error_message(), HasSubstr("CAP_SYS_RESOURCE"));
  }
  {
    World w;  // the tool is missing: Internal, not NotFound (the volume is there)
    w.Staged();
    w.filesystems->Fail("Grow", absl::NotFoundError("resize2fs: not found"));
    EXPECT_EQ(Expand(w, kStaging, 10 * kGiB, &resp).error_code(), grpc::StatusCode::INTERNAL);
  }
  {
    World w;  // not mounted there: FailedPrecondition
    EXPECT_EQ(Expand(w, kStaging, 10 * kGiB, &resp).error_code(),
              grpc::StatusCode::FAILED_PRECONDITION);
  }
  {
    World w;  // no such path: NotFound
    EXPECT_EQ(Expand(w, "/var/lib/kubelet/gone", 10 * kGiB, &resp).error_code(),
              grpc::StatusCode::NOT_FOUND);
  }
  {
    World w;  // a negative size: InvalidArgument
    EXPECT_EQ(Expand(w, kStaging, -1, &resp).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  }
  {
    World w;  // raw block: nothing to grow, the device's size
    w.mounter->AddFile(kBlockTarget);
    ASSERT_TRUE(w.mounter->BindMount(kDevice, kBlockTarget, {}).ok());
    w.devices->SetSize(kBlockTarget, 20 * kGiB);
    ASSERT_TRUE(Expand(w, kBlockTarget, 20 * kGiB, &resp).ok());
    EXPECT_EQ(resp.capacity_bytes(), static_cast<int64_t>(20 * kGiB));
    EXPECT_EQ(w.filesystems->Count("Grow"), 0);
  }
}

}  // namespace
}  // namespace ccm::csi::node
