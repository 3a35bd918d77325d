// File volumes (vSAN file shares) on the node: nothing to stage; NodePublishVolume mounts the
// share's NFSv4.1 export at the target with the reference's options (csi/core/file_volume.h),
// read-only for a read-only mode or publish. Unpublish, stats: as for any mount.
#include "absl/strings/str_cat.h"
#include "common/logging.h"
#include "csi/core/capabilities.h"
#include "csi/core/file_volume.h"
#include "csi/node/node_service.h"
#include "csi/node/node_util.h"

namespace ccm::csi::node {

absl::Status NodeService::PublishFile(const std::string& volume, const VolumeCapability& cap,
                                      const std::string& target, const StringMap& publish_context,
                                      bool readonly_flag) {
  absl::StatusOr<std::string> fs = FileMountFsType(cap);
  if (!fs.ok()) return fs.status();
  absl::StatusOr<std::string> source = ExportFromPublishContext(publish_context);
  if (!source.ok()) return source.status();
  const bool read_only = readonly_flag || IsReadOnlyMode(cap.mode);
  absl::StatusOr<std::optional<MountInfo>> at = mounter_->MountAt(target);
  if (!at.ok()) return AsInternal(at.status(), "mount table");
  if (at->has_value()) {
    const MountInfo& m = **at;
    if (!IsNfsMount(m) || m.source != *source) {
      return absl::AlreadyExistsError(absl::StrCat("target_path ", target, " already holds ",
                                                   m.source, " (", m.fs_type, "), not ", *source,
                                                   " of volume ", volume));
    }
    if (m.read_only() != read_only) {
      return absl::AlreadyExistsError(absl::StrCat("volume ", volume, " is published at ", target,
                                                   m.read_only() ? " read-only" : " read-write",
                                                   ", asked ",
                                                   read_only ? "read-only" : "read-write"));
    }
    return absl::OkStatus();
  }
  absl::StatusOr<PathStat> there = mounter_->Stat(target);
  if (!there.ok()) return AsInternal(there.status(), "target_path");
  if (there->kind != PathKind::kMissing && there->kind != PathKind::kDirectory) {
    return absl::AlreadyExistsError(absl::StrCat(
        "target_path ", target, " is a file; a file volume is published on a directory"));
  }
  if (absl::Status s = mounter_->MakeDir(target); !s.ok()) return AsInternal(s, "target_path");
  if (absl::Status s = mounter_->Mount(*source, target, *fs, FileMountOptions(cap, read_only));
      !s.ok()) {
    return AsInternal(s, absl::StrCat("publish file volume ", volume));
  }
  LOG_INFO("volume {}: mounted {} ({}) at {} {}", volume, *source, *fs, target,
           read_only ? "read-only" : "read-write");
  return absl::OkStatus();
}

}  // namespace ccm::csi::node
