// NodeGetVolumeStats and NodeExpandVolume.
#include <sys/sysmacros.h>

#include "absl/strings/str_cat.h"
#include "common/logging.h"
#include "common/status_macros.h"
#include "csi/node/node_service.h"
#include "csi/node/node_util.h"

namespace ccm::csi::node {
namespace {

void SetAbnormal(::csi::v1::NodeGetVolumeStatsResponse* resp, const std::string& message) {
  resp->mutable_volume_condition()->set_abnormal(true);
  resp->mutable_volume_condition()->set_message(message);
}

}  // namespace

// Whether the device a mount came from is still there with a size: udev removes the node and
// the kernel reports size 0 once vCenter detached the disk under a live mount.
absl::Status NodeService::CheckMountDevice(const MountInfo& m) {
  absl::StatusOr<dev_t> rdev = devices_->DeviceNumber(m.source);
  if (!rdev.ok()) return rdev.status();
  if (major(*rdev) != m.major || minor(*rdev) != m.minor) {
    return absl::NotFoundError(absl::StrCat(m.source, " is now another device"));
  }
  absl::StatusOr<uint64_t> size = devices_->DeviceSize(m.source);
  if (!size.ok()) return size.status();
  if (*size == 0) return absl::NotFoundError(absl::StrCat(m.source, " has no media (size 0)"));
  return absl::OkStatus();
}

absl::Status NodeService::Stats(const ::csi::v1::NodeGetVolumeStatsRequest& req,
                                ::csi::v1::NodeGetVolumeStatsResponse* resp) {
  if (absl::Status s = Require(req.volume_id(), "volume_id"); !s.ok()) return s;
  absl::StatusOr<std::string> path = VolumePath(req.volume_path());
  if (!path.ok()) return path.status();
  absl::StatusOr<PathStat> st = mounter_->Stat(*path);
  if (!st.ok()) return AsInternal(st.status(), *path);
  if (st->kind == PathKind::kMissing) {
    return absl::NotFoundError(absl::StrCat("volume_path ", *path, " does not exist"));
  }
  resp->mutable_volume_condition()->set_abnormal(false);

  if (st->kind == PathKind::kBlockDevice) {
    // A published raw block volume: only its size means anything.
    absl::StatusOr<uint64_t> size = devices_->DeviceSize(*path);
    if (!size.ok() || *size == 0) {
      SetAbnormal(resp, absl::StrCat("the block device at ", *path,
                                     " is gone: ", size.ok() ? "size 0" : size.status().message()));
      return absl::OkStatus();
    }
    auto* u = resp->add_usage();
    u->set_unit(::csi::v1::VolumeUsage::BYTES);
    u->set_total(static_cast<int64_t>(*size));
    return absl::OkStatus();
  }
  absl::StatusOr<std::optional<MountInfo>> m = mounter_->MountAt(*path);
  if (!m.ok()) return AsInternal(m.status(), "mount table");
  if (!m->has_value()) {
    // Usage of whatever lies under the path would be a lie: report no usage, only the condition.
    SetAbnormal(resp, absl::StrCat(*path, " is not mounted any more"));
    return absl::OkStatus();
  }
  if (absl::Status s = IsNfsMount(**m) ? absl::OkStatus() : CheckMountDevice(**m); !s.ok()) {
    SetAbnormal(resp,
                absl::StrCat("the device of the mount at ", *path, " vanished: ", s.message()));
    return absl::OkStatus();
  }
  absl::StatusOr<FsStats> vfs = mounter_->StatFs(*path);
  if (!vfs.ok()) {
    SetAbnormal(resp, std::string(vfs.status().message()));
    return absl::OkStatus();
  }
  // As the kubelet's fs.Info (the reference's source): used = blocks - free (what df shows).
  const int64_t frsize = static_cast<int64_t>(vfs->frsize);
  auto* bytes = resp->add_usage();
  bytes->set_unit(::csi::v1::VolumeUsage::BYTES);
  bytes->set_total(static_cast<int64_t>(vfs->blocks) * frsize);
  bytes->set_available(static_cast<int64_t>(vfs->bavail) * frsize);
  bytes->set_used(static_cast<int64_t>(vfs->blocks - vfs->bfree) * frsize);
  auto* inodes = resp->add_usage();
  inodes->set_unit(::csi::v1::VolumeUsage::INODES);
  inodes->set_total(static_cast<int64_t>(vfs->files));
  inodes->set_available(static_cast<int64_t>(vfs->ffree));
  inodes->set_used(static_cast<int64_t>(vfs->files - vfs->ffree));
  return absl::OkStatus();
}

absl::Status NodeService::Expand(const ::csi::v1::NodeExpandVolumeRequest& req,
                                 ::csi::v1::NodeExpandVolumeResponse* resp) {
  const std::string& volume = req.volume_id();
  absl::StatusOr<std::string> path = VolumePath(req.volume_path());
  if (!path.ok()) return path.status();
  const int64_t required = req.capacity_range().required_bytes();
  if (required < 0 || req.capacity_range().limit_bytes() < 0) {
    return absl::InvalidArgumentError("capacity_range values cannot be negative");
  }
  absl::StatusOr<PathStat> st = mounter_->Stat(*path);
  if (!st.ok()) return AsInternal(st.status(), *path);
  if (st->kind == PathKind::kMissing) {
    return absl::NotFoundError(absl::StrCat("volume_path ", *path, " does not exist"));
  }
  const bool is_device = st->kind == PathKind::kBlockDevice;
  if (is_device || (req.has_volume_capability() && req.volume_capability().has_block())) {
    // Raw block: the pod sees the device, whose size vCenter already changed. Nothing to grow.
    if (is_device) {
      absl::StatusOr<uint64_t> size = devices_->DeviceSize(*path);
      if (size.ok()) resp->set_capacity_bytes(static_cast<int64_t>(*size));
    }
    return absl::OkStatus();
  }
  absl::StatusOr<std::optional<MountInfo>> m = mounter_->MountAt(*path);
  if (!m.ok()) return AsInternal(m.status(), "mount table");
  if (!m->has_value()) {
    return absl::FailedPreconditionError(
        absl::StrCat("volume ", volume, " is not mounted at volume_path ", *path));
  }
  const MountInfo& mount = **m;
  const std::string& device = mount.source;
  absl::StatusOr<uint64_t> size = devices_->DeviceSize(device);
  if (!size.ok()) return AsInternal(size.status(), absl::StrCat("expand volume ", volume));
  if (static_cast<int64_t>(*size) < required) {
    // The guest sees a grown SCSI disk only after a rescan (the reference does the same).
    if (absl::Status s = devices_->Rescan(device); !s.ok()) LOG_WARN("{}", s.message());
  }
  if (absl::Status s = filesystems_->Grow(mount.fs_type, device, mount.mount_point); !s.ok()) {
    const bool ours = s.code() == absl::StatusCode::kInvalidArgument ||
                      s.code() == absl::StatusCode::kFailedPrecondition;
    return ours ? Annotate(s, absl::StrCat("expand volume ", volume))
                : AsInternal(s, absl::StrCat("expand volume ", volume));
  }
  size = devices_->DeviceSize(device);
  if (!size.ok()) return AsInternal(size.status(), absl::StrCat("expand volume ", volume));
  if (static_cast<int64_t>(*size) < required) {
    return absl::InternalError(absl::StrCat("volume ", volume, ": device ", device, " is ", *size,
                                            " bytes, ", required, " asked (not grown yet?)"));
  }
  resp->set_capacity_bytes(static_cast<int64_t>(*size));
  LOG_INFO("volume {}: grew {} on {} to {} bytes", volume, mount.fs_type, device, *size);
  return absl::OkStatus();
}

}  // namespace ccm::csi::node
