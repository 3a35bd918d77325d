// NodeStageVolume and NodeUnstageVolume.
#include <sys/sysmacros.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/logging.h"
#include "csi/core/capabilities.h"
#include "csi/core/file_volume.h"
#include "csi/core/node_volume.h"
#include "csi/core/publish_context.h"
#include "csi/node/node_service.h"
#include "csi/node/node_util.h"
#include "csi/server/proto_convert.h"

namespace ccm::csi::node {
namespace {

std::string DevName(uint32_t major, uint32_t minor) { return absl::StrCat(major, ":", minor); }

}  // namespace

absl::Status NodeService::Stage(const ::csi::v1::NodeStageVolumeRequest& req) {
  const std::string& volume = req.volume_id();
  if (!req.has_volume_capability()) {
    return absl::InvalidArgumentError("volume_capability is required");
  }
  const VolumeCapability cap = FromProto(req.volume_capability());
  if (absl::Status s = ValidateCapability(cap); !s.ok()) return s;
  absl::StatusOr<std::string> staging =
      CanonicalPath(req.staging_target_path(), "staging_target_path");
  if (!staging.ok()) return staging.status();
  if (IsMultiNodeMode(cap.mode)) {  // a file share is mounted straight at each target
    VLOG(2, "volume {}: a file volume: nothing to stage", volume);
    return absl::OkStatus();
  }
  absl::StatusOr<std::string> uuid = DiskUuidFromPublishContext(
      StringMap(req.publish_context().begin(), req.publish_context().end()));
  if (!uuid.ok()) return uuid.status();

  absl::StatusOr<BlockDevice> dev = devices_->FindDisk(*uuid);
  if (!dev.ok()) return dev.status();
  // Raw block volumes are published straight from the device: nothing to stage.
  if (cap.access_type == AccessType::kBlock) return absl::OkStatus();

  const bool read_only = IsReadOnlyMode(cap.mode);
  absl::StatusOr<std::string> fs_type = MountFsType(cap);
  if (!fs_type.ok()) return fs_type.status();
  // The staging path must be a directory the CO created (spec: "The CO SHALL ensure that the
  // path is directory"); the reference answers FailedPrecondition too.
  absl::StatusOr<PathStat> dir = mounter_->Stat(*staging);
  if (!dir.ok()) return AsInternal(dir.status(), "staging_target_path");
  if (dir->kind != PathKind::kDirectory) {
    return absl::FailedPreconditionError(absl::StrCat("staging_target_path ", *staging,
                                                      dir->kind == PathKind::kMissing
                                                          ? " does not exist (the CO creates it)"
                                                          : " is not a directory"));
  }

  absl::StatusOr<std::vector<MountInfo>> mounts = mounter_->Mounts();
  if (!mounts.ok()) return AsInternal(mounts.status(), "mount table");
  const uint32_t maj = major(dev->rdev), min = minor(dev->rdev);
  if (std::optional<MountInfo> m = FindMountAt(*mounts, *staging)) {
    // Staged before: the same device, access and filesystem is this call again; anything else
    // is another volume or other arguments at this staging path.
    if (m->major != maj || m->minor != min) {
      return absl::AlreadyExistsError(
          absl::StrCat("staging_target_path ", *staging, " already holds ", m->source, " (",
                       DevName(m->major, m->minor), "), not ", dev->path, " of volume ", volume));
    }
    if (m->read_only() != read_only) {
      return absl::AlreadyExistsError(absl::StrCat("volume ", volume, " is staged at ", *staging,
                                                   " ", AccessWord(m->read_only()), ", asked ",
                                                   AccessWord(read_only)));
    }
    absl::StatusOr<FormatDecision> same = DecideFormat(m->fs_type, *fs_type, read_only);
    if (!same.ok() || same->mount_fs_type != m->fs_type) {
      return absl::AlreadyExistsError(absl::StrCat("volume ", volume, " is staged at ", *staging,
                                                   " as ", m->fs_type, ", asked ", *fs_type));
    }
    return absl::OkStatus();
  }
  std::vector<MountInfo> elsewhere = MountsOfDevice(*mounts, maj, min);
  if (!elsewhere.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat("device ", dev->path, " of volume ", volume, " is already mounted at ",
                     elsewhere.front().mount_point, ", not at staging_target_path ", *staging));
  }

  absl::StatusOr<std::string> existing = filesystems_->Probe(dev->path);
  if (!existing.ok()) return existing.status();
  absl::StatusOr<FormatDecision> decision = DecideFormat(*existing, *fs_type, read_only);
  if (!decision.ok()) {
    return absl::Status(decision.status().code(), absl::StrCat("volume ", volume, " (", dev->path,
                                                               "): ", decision.status().message()));
  }
  if (decision->action == FormatAction::kFormat) {
    LOG_INFO("volume {}: formatting {} as {}", volume, dev->path, *fs_type);
    if (absl::Status s = filesystems_->Format(*fs_type, dev->path); !s.ok()) {
      return AsInternal(s, absl::StrCat("format volume ", volume));
    }
  }
  std::vector<std::string> options =
      StageMountOptions(decision->mount_fs_type, cap.mount_flags, read_only);
  if (absl::Status s = mounter_->Mount(dev->path, *staging, decision->mount_fs_type, options);
      !s.ok()) {
    return AsInternal(s, absl::StrCat("stage volume ", volume));
  }
  LOG_INFO("volume {}: staged {} ({}, {}) at {}", volume, dev->path, decision->mount_fs_type,
           absl::StrJoin(options, ","), *staging);
  return absl::OkStatus();
}

absl::Status NodeService::Unstage(const ::csi::v1::NodeUnstageVolumeRequest& req) {
  absl::StatusOr<std::string> staging =
      CanonicalPath(req.staging_target_path(), "staging_target_path");
  if (!staging.ok()) return staging.status();
  bool unmounted = false;
  if (absl::Status s =
          UnmountAll(*staging, absl::StrCat("unstage volume ", req.volume_id()), &unmounted);
      !s.ok()) {
    return s;
  }
  if (unmounted) LOG_INFO("volume {}: unstaged from {}", req.volume_id(), *staging);
  return absl::OkStatus();
}

absl::Status NodeService::UnmountAll(const std::string& path, const std::string& what,
                                     bool* unmounted) {
  *unmounted = false;
  for (int i = 0; i <= 8; ++i) {
    absl::StatusOr<std::optional<MountInfo>> m = mounter_->MountAt(path);
    if (!m.ok()) return AsInternal(m.status(), "mount table");
    if (!m->has_value()) return absl::OkStatus();
    if (i == 8) break;
    if (absl::Status s = mounter_->Unmount(path); !s.ok()) return AsInternal(s, what);
    *unmounted = true;
  }
  return absl::InternalError(absl::StrCat(path, " is still mounted after 8 unmounts"));
}

}  // namespace ccm::csi::node
