// NodePublishVolume and NodeUnpublishVolume.
#include <sys/sysmacros.h>

#include "absl/strings/str_cat.h"
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

bool SameSource(const MountInfo& a, const MountInfo& b) {
  return a.major == b.major && a.minor == b.minor && a.root == b.root;
}

}  // namespace

absl::Status NodeService::Publish(const ::csi::v1::NodePublishVolumeRequest& req) {
  const std::string& volume = req.volume_id();
  if (!req.has_volume_capability()) {
    return absl::InvalidArgumentError("volume_capability is required");
  }
  const VolumeCapability cap = FromProto(req.volume_capability());
  if (absl::Status s = ValidateCapability(cap); !s.ok()) return s;
  absl::StatusOr<std::string> target = CanonicalPath(req.target_path(), "target_path");
  if (!target.ok()) return target.status();
  if (IsMultiNodeMode(cap.mode)) {
    return PublishFile(volume, cap, *target,
                       StringMap(req.publish_context().begin(), req.publish_context().end()),
                       req.readonly());
  }
  // We announce STAGE_UNSTAGE_VOLUME, so the CO must pass the staging path (spec).
  absl::StatusOr<std::string> staging =
      CanonicalPath(req.staging_target_path(), "staging_target_path");
  if (!staging.ok()) return staging.status();
  absl::StatusOr<std::string> uuid = DiskUuidFromPublishContext(
      StringMap(req.publish_context().begin(), req.publish_context().end()));
  if (!uuid.ok()) return uuid.status();
  absl::StatusOr<BlockDevice> dev = devices_->FindDisk(*uuid);
  if (!dev.ok()) return dev.status();

  absl::StatusOr<std::vector<MountInfo>> mounts = mounter_->Mounts();
  if (!mounts.ok()) return AsInternal(mounts.status(), "mount table");
  std::optional<MountInfo> at_target = FindMountAt(*mounts, *target);
  if (cap.access_type == AccessType::kBlock) {
    if (absl::Status s = CheckBlockPublish(req.readonly()); !s.ok()) return s;
    return PublishBlock(volume, *target, *dev, at_target);
  }

  std::optional<MountInfo> staged = FindMountAt(*mounts, *staging);
  if (!staged) {
    return absl::FailedPreconditionError(
        absl::StrCat("volume ", volume, " is not staged at ", *staging));
  }
  if (staged->major != major(dev->rdev) || staged->minor != minor(dev->rdev)) {
    return absl::FailedPreconditionError(absl::StrCat("staging_target_path ", *staging, " holds ",
                                                      staged->source, ", not ", dev->path,
                                                      " of volume ", volume));
  }
  const bool read_only = req.readonly() || IsReadOnlyMode(cap.mode);
  if (at_target) {
    if (!SameSource(*at_target, *staged)) {
      return absl::AlreadyExistsError(absl::StrCat("target_path ", *target, " already holds ",
                                                   at_target->source, " (", at_target->fs_type,
                                                   "), not volume ", volume));
    }
    if (at_target->read_only() != read_only) {
      return absl::AlreadyExistsError(absl::StrCat("volume ", volume, " is published at ", *target,
                                                   " ", AccessWord(at_target->read_only()),
                                                   ", asked ", AccessWord(read_only)));
    }
    return absl::OkStatus();
  }
  // A mount volume is published on a directory (created as the kubelet would).
  absl::StatusOr<PathStat> there = mounter_->Stat(*target);
  if (!there.ok()) return AsInternal(there.status(), "target_path");
  if (there->kind != PathKind::kMissing && there->kind != PathKind::kDirectory) {
    return absl::AlreadyExistsError(absl::StrCat(
        "target_path ", *target, " is a file; a mount volume is published on a directory"));
  }
  if (absl::Status s = mounter_->MakeDir(*target); !s.ok()) return AsInternal(s, "target_path");
  if (absl::Status s =
          mounter_->BindMount(*staging, *target, PublishMountOptions(cap.mount_flags, read_only));
      !s.ok()) {
    return AsInternal(s, absl::StrCat("publish volume ", volume));
  }
  LOG_INFO("volume {}: published {} at {} {}", volume, *staging, *target, AccessWord(read_only));
  return absl::OkStatus();
}

absl::Status NodeService::PublishBlock(const std::string& volume, const std::string& target,
                                       const BlockDevice& dev,
                                       const std::optional<MountInfo>& at_target) {
  absl::StatusOr<PathStat> there = mounter_->Stat(target);
  if (!there.ok()) return AsInternal(there.status(), "target_path");
  if (at_target) {
    if (there->kind == PathKind::kBlockDevice && there->rdev == dev.rdev) return absl::OkStatus();
    return absl::AlreadyExistsError(
        absl::StrCat("target_path ", target, " already holds ", at_target->source, " (",
                     at_target->root, "), not device ", dev.path, " of volume ", volume));
  }
  // A bind mount of a device node needs a file to sit on; a directory there is someone else's.
  if (there->kind == PathKind::kDirectory) {
    return absl::AlreadyExistsError(absl::StrCat(
        "target_path ", target, " is a directory; a raw block volume is published on a file"));
  }
  if (absl::Status s = mounter_->MakeFile(target); !s.ok()) return AsInternal(s, "target_path");
  if (absl::Status s = mounter_->BindMount(dev.path, target, {}); !s.ok()) {
    return AsInternal(s, absl::StrCat("publish block volume ", volume));
  }
  LOG_INFO("volume {}: published block device {} at {}", volume, dev.path, target);
  return absl::OkStatus();
}

absl::Status NodeService::Unpublish(const ::csi::v1::NodeUnpublishVolumeRequest& req) {
  absl::StatusOr<std::string> target = CanonicalPath(req.target_path(), "target_path");
  if (!target.ok()) return target.status();
  bool unmounted = false;
  if (absl::Status s =
          UnmountAll(*target, absl::StrCat("unpublish volume ", req.volume_id()), &unmounted);
      !s.ok()) {
    return s;
  }
  if (!unmounted) {
    // Not mounted (a retry after the unmount, or never published): nothing of ours is there, and
    // what is there is not ours to delete. The spec's idempotency: OK.
    VLOG(2, "volume {}: {} is not mounted: nothing to unpublish", req.volume_id(), *target);
    return absl::OkStatus();
  }
  // The spec has the plugin delete what it created at the target: the mount point (an empty
  // directory, or the file a raw block volume was bound onto). Remove() takes only those; a
  // directory with something in it was not ours: it stays, and the kubelet cleans up.
  if (absl::Status s = mounter_->Remove(*target); !s.ok()) {
    LOG_WARN("volume {}: unpublished, but {} stays: {}", req.volume_id(), *target, s.message());
  }
  LOG_INFO("volume {}: unpublished from {}", req.volume_id(), *target);
  return absl::OkStatus();
}

}  // namespace ccm::csi::node
