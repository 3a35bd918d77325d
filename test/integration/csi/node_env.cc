#include "integration/csi/node_env.h"

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <random>

#include "absl/strings/str_cat.h"
#include "csi/core/constants.h"
#include "csi/server/identity_service.h"
#include "testing/csi_socket.h"

namespace ccm::csi::testing {
namespace fs = std::filesystem;

std::string TestDirPrefix() { return absl::StrCat("/tmp/csi-node-", getpid(), "-"); }

absl::StatusOr<std::unique_ptr<NodeEnv>> NodeEnv::Start(absl::Duration wait,
                                                        node::NodeInfoOptions info) {
  if (absl::Status s = EnterPrivateMountNamespace(); !s.ok()) return s;
  auto env = std::unique_ptr<NodeEnv>(new NodeEnv());
  std::string tmpl = absl::StrCat(TestDirPrefix(), "XXXXXX");
  if (mkdtemp(tmpl.data()) == nullptr) return absl::ErrnoToStatus(errno, "mkdtemp");
  env->dir_ = tmpl;
  env->by_id_ = env->dir_ + "/by-id";
  fs::create_directories(env->by_id_);

  node::NodeServiceOptions options;
  options.devices.by_id_dir = env->by_id_;
  options.devices.scsi_host_dir = env->dir_ + "/scsi_host";  // none: the rescan asks 0 hosts
  options.devices.wait = wait;
  options.devices.poll = absl::Milliseconds(20);
  options.info = std::move(info);

  IdentityOptions io;
  io.name = std::string(kDriverName);
  io.vendor_version = "test";
  auto identity = IdentityService::Create(std::move(io));
  if (!identity.ok()) return identity.status();
  CsiServices services;
  services.identity = std::move(*identity);
  services.node = std::make_unique<node::NodeService>(std::move(options));
  const std::string socket = env->dir_ + "/csi.sock";
  env->server_ = std::make_unique<CsiServer>(
      CsiServerOptions{.endpoint = socket, .shutdown_grace = absl::Seconds(1)},
      std::move(services));
  if (absl::Status s = env->server_->Start(); !s.ok()) return s;
  env->stub_ = ::csi::v1::Node::NewStub(UnixChannel(socket));
  return env;
}

NodeEnv::~NodeEnv() {
  if (server_) server_->Stop();
  // Whatever a failed test left mounted goes first, so the loop devices (destroyed by their
  // owners, the tests' Disk values) can detach and nothing below is removed through a mount.
  UnmountAllUnder(dir_);
  std::error_code ec;
  if (MountsUnder(dir_).empty()) fs::remove_all(dir_, ec);
}

std::string NodeEnv::NewDiskUuid() {
  static std::mt19937_64 rng(std::random_device{}());
  std::string out;
  static const char kHex[] = "0123456789abcdef";
  for (int i = 0; i < 32; ++i) out.push_back(kHex[rng() % 16]);
  return "6000c29" + out.substr(7);  // the VMware OUI prefix real disks carry
}

absl::StatusOr<Disk> NodeEnv::NewUnlinkedDisk(uint64_t size) {
  Disk d;
  d.uuid = NewDiskUuid();
  auto loop = LoopDevice::Create(dir_, size);
  if (!loop.ok()) return loop.status();
  d.loop = *std::move(loop);
  return d;
}

absl::StatusOr<Disk> NodeEnv::NewDisk(uint64_t size) {
  absl::StatusOr<Disk> d = NewUnlinkedDisk(size);
  if (!d.ok()) return d.status();
  if (absl::Status s = Link(d->uuid, d->loop->path()); !s.ok()) return s;
  return d;
}

absl::Status NodeEnv::Link(const std::string& uuid, const std::string& device) {
  // udev's links are relative ("../../sdb"); an absolute one resolves the same way.
  std::error_code ec;
  fs::create_symlink(device, absl::StrCat(by_id_, "/wwn-0x", uuid), ec);
  if (ec) return absl::InternalError(absl::StrCat("link ", uuid, ": ", ec.message()));
  return absl::OkStatus();
}

std::string NodeEnv::NewStagingDir() {
  std::string p = absl::StrCat(dir_, "/plugins/pv-", ++counter_, "/globalmount");
  fs::create_directories(p);
  return p;
}

std::string NodeEnv::NewTargetPath() {
  return absl::StrCat(dir_, "/pods/pod-", ++counter_, "/volumes/pv/mount");
}

::csi::v1::VolumeCapability NodeMountCap(const std::string& fs,
                                         ::csi::v1::VolumeCapability::AccessMode::Mode mode,
                                         const std::vector<std::string>& flags) {
  ::csi::v1::VolumeCapability cap;
  cap.mutable_mount()->set_fs_type(fs);
  for (const auto& f : flags) cap.mutable_mount()->add_mount_flags(f);
  cap.mutable_access_mode()->set_mode(mode);
  return cap;
}

::csi::v1::VolumeCapability NodeBlockCap() {
  ::csi::v1::VolumeCapability cap;
  cap.mutable_block();
  cap.mutable_access_mode()->set_mode(::csi::v1::VolumeCapability::AccessMode::SINGLE_NODE_WRITER);
  return cap;
}

::csi::v1::NodeStageVolumeRequest StageReq(const std::string& volume, const std::string& uuid,
                                           const std::string& staging,
                                           const ::csi::v1::VolumeCapability& cap) {
  ::csi::v1::NodeStageVolumeRequest r;
  r.set_volume_id(volume);
  (*r.mutable_publish_context())["type"] = "vSphere CNS Block Volume";
  (*r.mutable_publish_context())["diskUUID"] = uuid;
  r.set_staging_target_path(staging);
  *r.mutable_volume_capability() = cap;
  return r;
}

::csi::v1::NodePublishVolumeRequest PublishReq(const std::string& volume, const std::string& uuid,
                                               const std::string& staging,
                                               const std::string& target,
                                               const ::csi::v1::VolumeCapability& cap,
                                               bool readonly) {
  ::csi::v1::NodePublishVolumeRequest r;
  r.set_volume_id(volume);
  (*r.mutable_publish_context())["type"] = "vSphere CNS Block Volume";
  (*r.mutable_publish_context())["diskUUID"] = uuid;
  r.set_staging_target_path(staging);
  r.set_target_path(target);
  *r.mutable_volume_capability() = cap;
  r.set_readonly(readonly);
  return r;
}

::csi::v1::NodeUnpublishVolumeRequest UnpublishReq(const std::string& volume,
                                                   const std::string& target) {
  ::csi::v1::NodeUnpublishVolumeRequest r;
  r.set_volume_id(volume);
  r.set_target_path(target);
  return r;
}

::csi::v1::NodeUnstageVolumeRequest UnstageReq(const std::string& volume,
                                               const std::string& staging) {
  ::csi::v1::NodeUnstageVolumeRequest r;
  r.set_volume_id(volume);
  r.set_staging_target_path(staging);
  return r;
}

absl::Status WriteFile(const std::string& path, const std::string& text) {
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return absl::ErrnoToStatus(errno, absl::StrCat("open ", path));
  ssize_t n = write(fd, text.data(), text.size());
  int err = errno;
  bool synced = fsync(fd) == 0;
  close(fd);
  if (n != static_cast<ssize_t>(text.size())) {
    return absl::ErrnoToStatus(err, absl::StrCat("write ", path));
  }
  if (!synced) return absl::ErrnoToStatus(errno, absl::StrCat("fsync ", path));
  return absl::OkStatus();
}

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return absl::ErrnoToStatus(errno, absl::StrCat("open ", path));
  std::string out;
  char buf[4096];
  ssize_t n;
  while ((n = read(fd, buf, sizeof(buf))) > 0) out.append(buf, static_cast<size_t>(n));
  close(fd);
  return out;
}

}  // namespace ccm::csi::testing
