// NodePublishVolume and NodeUnpublishVolume.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "common/logging.h"
#include "csi/core/capabilities.h"
#include "csi/core/node_volume.h"
#include "csi/core/publish_context.h"
#include "csi/node/node_service.h"
#include "csi/node/node_util.h"

namespace ccm::csi::node {
namespace fs = std::filesystem;
namespace {

const char* Access(bool read_only) { return read_only ? "read-only" : "read-write"; }

// The target of a raw block volume: an empty file (a bind mount of a device node needs a file to
// sit on). Its parent is created as the kubelet would; a directory there is someone else's.
absl::Status MakeTargetFile(const std::string& target) {
  std::error_code ec;
  fs::create_directories(fs::path(target).parent_path(), ec);
  if (ec) {
    return absl::InternalError(
        absl::StrCat("create the parent of target_path ", target, ": ", ec.message()));
  }
  if (fs::is_directory(target, ec)) {
    return absl::AlreadyExistsError(absl::StrCat(
        "target_path ", target, " is a directory; a raw block volume is published on a file"));
  }
  int fd = open(target.c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0640);
  if (fd < 0) return AsInternal(absl::ErrnoToStatus(errno, "create"), target);
  close(fd);
  return absl::OkStatus();
}

absl::Status MakeTargetDir(const std::string& target) {
  std::error_code ec;
  if (fs::exists(target, ec) && !fs::is_directory(target, ec)) {
    return absl::AlreadyExistsError(absl::StrCat(
        "target_path ", target, " is a file; a mount volume is published on a directory"));
  }
  fs::create_directories(target, ec);
  if (ec) {
    return absl::InternalError(absl::StrCat("create target_path ", target, ": ", ec.message()));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status NodeService::Publish(const ::csi::v1::NodePublishVolumeRequest& req) {
  const std::string& volume = req.volume_id();
  if (!req.has_volume_capability()) {
    return absl::InvalidArgumentError("volume_capability is required");
  }
  const VolumeCapability cap = ToCapability(req.volume_capability());
  if (absl::Status s = ValidateCapability(cap); !s.ok()) return s;
  absl::StatusOr<std::string> target = CanonicalPath(req.target_path(), "target_path");
  if (!target.ok()) return target.status();
  // We announce STAGE_UNSTAGE_VOLUME, so the CO must pass the staging path (spec).
  absl::StatusOr<std::string> staging =
      CanonicalPath(req.staging_target_path(), "staging_target_path");
  if (!staging.ok()) return staging.status();
  absl::StatusOr<std::string> uuid = DiskUuidFromPublishContext(
      StringMap(req.publish_context().begin(), req.publish_context().end()));
  if (!uuid.ok()) return uuid.status();
  absl::StatusOr<BlockDevice> dev = finder_.FindDisk(*uuid);
  if (!dev.ok()) return dev.status();

  absl::StatusOr<std::vector<MountInfo>> mounts = mounter_.Mounts();
  if (!mounts.ok()) return AsInternal(mounts.status(), "mount table");
  std::optional<MountInfo> at_target = FindMountAt(*mounts, *target);

  if (cap.access_type == AccessType::kBlock) {
    if (absl::Status s = CheckBlockPublish(req.readonly()); !s.ok()) return s;
    if (at_target) {
      struct stat st;
      if (stat(target->c_str(), &st) == 0 && S_ISBLK(st.st_mode) && st.st_rdev == dev->rdev) {
        return absl::OkStatus();
      }
      return absl::AlreadyExistsError(
          absl::StrCat("target_path ", *target, " already holds ", at_target->source, " (",
                       at_target->root, "), not device ", dev->path, " of volume ", volume));
    }
    if (absl::Status s = MakeTargetFile(*target); !s.ok()) return s;
    if (absl::Status s = mounter_.BindMount(dev->path, *target, {}); !s.ok()) {
      return AsInternal(s, absl::StrCat("publish block volume ", volume));
    }
    LOG_INFO("volume {}: published block device {} at {}", volume, dev->path, *target);
    return absl::OkStatus();
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
    const bool same = at_target->major == staged->major && at_target->minor == staged->minor &&
                      at_target->root == staged->root;
    if (!same) {
      return absl::AlreadyExistsError(absl::StrCat("target_path ", *target, " already holds ",
                                                   at_target->source, " (", at_target->fs_type,
                                                   "), not volume ", volume));
    }
    if (at_target->read_only() != read_only) {
      return absl::AlreadyExistsError(absl::StrCat("volume ", volume, " is published at ", *target,
                                                   " ", Access(at_target->read_only()), ", asked ",
                                                   Access(read_only)));
    }
    return absl::OkStatus();
  }
  if (absl::Status s = MakeTargetDir(*target); !s.ok()) return s;
  if (absl::Status s =
          mounter_.BindMount(*staging, *target, PublishMountOptions(cap.mount_flags, read_only));
      !s.ok()) {
    return AsInternal(s, absl::StrCat("publish volume ", volume));
  }
  LOG_INFO("volume {}: published {} at {} {}", volume, *staging, *target, Access(read_only));
  return absl::OkStatus();
}

absl::Status NodeService::Unpublish(const ::csi::v1::NodeUnpublishVolumeRequest& req) {
  absl::StatusOr<std::string> target = CanonicalPath(req.target_path(), "target_path");
  if (!target.ok()) return target.status();
  std::error_code ec;
  if (!fs::exists(fs::symlink_status(*target, ec))) return absl::OkStatus();
  absl::StatusOr<std::optional<MountInfo>> first = mounter_.MountAt(*target);
  if (!first.ok()) return AsInternal(first.status(), "mount table");
  if (!first->has_value()) {
    // Not mounted (a retry after the unmount, or never published): nothing of ours is there, and
    // what is there is not ours to delete. The spec's idempotency: OK.
    VLOG(2, "volume {}: {} is not mounted: nothing to unpublish", req.volume_id(), *target);
    return absl::OkStatus();
  }
  for (int i = 0;; ++i) {
    absl::StatusOr<std::optional<MountInfo>> m = mounter_.MountAt(*target);
    if (!m.ok()) return AsInternal(m.status(), "mount table");
    if (!m->has_value()) break;
    if (i == 8) {
      return absl::InternalError(
          absl::StrCat("target_path ", *target, " is still mounted after 8 unmounts"));
    }
    if (absl::Status s = mounter_.Unmount(*target); !s.ok()) {
      return AsInternal(s, absl::StrCat("unpublish volume ", req.volume_id()));
    }
  }
  // The spec has the plugin delete what it created at the target: the mount point (an empty
  // directory, or the file a raw block volume was bound onto). remove() takes only those; a
  // directory with something in it was not ours: it stays, and the kubelet cleans up.
  if (!fs::remove(*target, ec) && ec) {
    LOG_WARN("volume {}: unpublished, but {} stays: {}", req.volume_id(), *target, ec.message());
  }
  LOG_INFO("volume {}: unpublished from {}", req.volume_id(), *target);
  return absl::OkStatus();
}

}  // namespace ccm::csi::node
