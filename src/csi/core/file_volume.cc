#include "csi/core/file_volume.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "csi/core/constants.h"

namespace ccm::csi {

bool IsMultiNodeMode(AccessMode mode) {
  return mode == AccessMode::kMultiNodeReaderOnly || mode == AccessMode::kMultiNodeSingleWriter ||
         mode == AccessMode::kMultiNodeMultiWriter;
}

bool IsFileVolumeRequest(const std::vector<VolumeCapability>& caps) {
  for (const VolumeCapability& c : caps) {
    if (c.has_access_mode && IsMultiNodeMode(c.mode)) return true;
  }
  return false;
}

absl::StatusOr<std::string> FileMountFsType(const VolumeCapability& cap) {
  if (cap.access_type == AccessType::kBlock) {
    return absl::InvalidArgumentError(
        "raw block volumes are not supported with ReadWriteMany or ReadOnlyMany access modes "
        "(file volumes are NFS shares)");
  }
  if (cap.access_type != AccessType::kMount) {
    return absl::InvalidArgumentError("access type is missing (mount or block)");
  }
  std::string fs = absl::AsciiStrToLower(absl::StripAsciiWhitespace(cap.fs_type));
  if (fs.empty() || fs == kFsExt4) return std::string(kFsNfs4);
  if (fs == kFsNfs || fs == kFsNfs4) return fs;
  return absl::InvalidArgumentError(absl::StrCat(
      "filesystem type \"", cap.fs_type,
      "\" is not supported for ReadWriteMany or ReadOnlyMany volumes (supported: ", kFsNfs4, ", ",
      kFsNfs, "; ext4 or none mount as ", kFsNfs4, ")"));
}

absl::Status ValidateFileCapability(const VolumeCapability& cap) {
  if (!cap.has_access_mode) return absl::InvalidArgumentError("access mode is missing");
  if (!IsMultiNodeMode(cap.mode)) {
    return absl::InvalidArgumentError(
        absl::StrCat("access mode ", AccessModeName(cap.mode),
                     " cannot be asked together with a multi-node mode: a file volume (vSAN "
                     "file share) serves MULTI_NODE_READER_ONLY, MULTI_NODE_SINGLE_WRITER and "
                     "MULTI_NODE_MULTI_WRITER"));
  }
  return FileMountFsType(cap).status();
}

std::vector<std::string> FileMountOptions(const VolumeCapability& cap, bool read_only) {
  std::vector<std::string> out;
  if (read_only) out.push_back("ro");
  for (const std::string& f : cap.mount_flags) {
    if (!f.empty() && !(read_only && f == "ro")) out.push_back(f);
  }
  for (const char* d : {"hard", "sec=sys", "vers=4", "minorversion=1"}) out.push_back(d);
  return out;
}

std::vector<ShareAccess> ShareAccessFrom(const std::vector<NetRule>& rules) {
  if (rules.empty()) return {{"*", "READ_WRITE", true}};
  std::vector<ShareAccess> out;
  for (const NetRule& r : rules) {
    out.push_back({r.ips.empty() ? "*" : r.ips,
                   r.permissions.empty() ? "READ_WRITE" : r.permissions, !r.root_squash});
  }
  return out;
}

StringMap FileVolumeContext() {
  return {{std::string(kContextType), std::string(kDiskTypeFileVolume)}};
}

absl::StatusOr<StringMap> FilePublishContext(
    const std::vector<std::pair<std::string, std::string>>& access_points) {
  std::vector<std::string> keys;
  for (const auto& [key, value] : access_points) {
    if (key == kNfsv4AccessPointKey && !value.empty()) {
      return StringMap{{std::string(kContextType), std::string(kDiskTypeFileVolume)},
                       {std::string(kPublishNfsv4AccessPoint), value}};
    }
    keys.push_back(key);
  }
  return absl::FailedPreconditionError(
      absl::StrCat("the file share has no ", kNfsv4AccessPointKey,
                   " access point (it has: ", keys.empty() ? "none" : absl::StrJoin(keys, ", "),
                   "); NFSv4.1 must be enabled in the vSAN file service's share protocols"));
}

bool IsFileVolumeContext(const StringMap& context) {
  auto it = context.find(std::string(kContextType));
  return it != context.end() && it->second == kDiskTypeFileVolume;
}

absl::StatusOr<std::string> ExportFromPublishContext(const StringMap& publish_context) {
  auto it = publish_context.find(std::string(kPublishNfsv4AccessPoint));
  if (it == publish_context.end() || it->second.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("publish_context has no ", kPublishNfsv4AccessPoint,
                     ": the volume was not published by ControllerPublishVolume of this driver"));
  }
  const std::string& v = it->second;
  const size_t sep = v.find(":/");
  const bool bad_char = std::any_of(v.begin(), v.end(), [](char c) {
    return c == ',' || absl::ascii_isspace(static_cast<unsigned char>(c)) || c == '\0';
  });
  if (sep == std::string::npos || sep == 0 || bad_char) {
    return absl::InvalidArgumentError(absl::StrCat(
        "publish_context ", kPublishNfsv4AccessPoint, " \"", v,
        "\" is not an NFS export of the form <address>:/<path> without spaces or commas"));
  }
  return v;
}

}  // namespace ccm::csi
