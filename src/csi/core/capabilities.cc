#include "csi/core/capabilities.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "csi/core/constants.h"
#include "csi/core/file_volume.h"

namespace ccm::csi {
namespace {

absl::Status CheckMode(const VolumeCapability& cap, const CapabilityOptions& options) {
  if (!cap.has_access_mode) return absl::InvalidArgumentError("access mode is missing");
  switch (cap.mode) {
    case AccessMode::kSingleNodeWriter:
    case AccessMode::kSingleNodeReaderOnly:
      return absl::OkStatus();
    case AccessMode::kSingleNodeSingleWriter:
    case AccessMode::kSingleNodeMultiWriter:
      if (options.single_node_multi_writer) return absl::OkStatus();
      return absl::InvalidArgumentError(
          absl::StrCat("access mode ", AccessModeName(cap.mode),
                       " is not supported: the driver does not advertise the "
                       "SINGLE_NODE_MULTI_WRITER capability"));
    case AccessMode::kMultiNodeReaderOnly:
    case AccessMode::kMultiNodeSingleWriter:
    case AccessMode::kMultiNodeMultiWriter:
      return absl::OkStatus();  // a file volume: checked by ValidateFileCapability
    case AccessMode::kUnknown:
      break;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("access mode ", AccessModeName(cap.mode), " is not supported"));
}

}  // namespace

bool IsReadOnlyMode(AccessMode mode) {
  return mode == AccessMode::kSingleNodeReaderOnly || mode == AccessMode::kMultiNodeReaderOnly;
}

absl::StatusOr<std::string> MountFsType(const VolumeCapability& cap) {
  if (cap.has_access_mode && IsMultiNodeMode(cap.mode)) return FileMountFsType(cap);
  if (cap.access_type != AccessType::kMount) {
    return absl::InvalidArgumentError("not a mount capability: no filesystem type");
  }
  std::string fs = absl::AsciiStrToLower(absl::StripAsciiWhitespace(cap.fs_type));
  if (fs.empty()) return std::string(kFsExt4);
  if (fs == kFsExt4 || fs == kFsExt3 || fs == kFsXfs) return fs;
  return absl::InvalidArgumentError(absl::StrCat("filesystem type \"", cap.fs_type,
                                                 "\" is not supported (supported: ", kFsExt4, ", ",
                                                 kFsExt3, ", ", kFsXfs, ")"));
}

absl::Status ValidateCapability(const VolumeCapability& cap, const CapabilityOptions& options) {
  if (cap.access_type == AccessType::kUnset) {
    return absl::InvalidArgumentError("access type is missing (mount or block)");
  }
  if (absl::Status s = CheckMode(cap, options); !s.ok()) return s;
  if (IsMultiNodeMode(cap.mode)) return ValidateFileCapability(cap);
  if (cap.access_type == AccessType::kMount) {
    if (absl::StatusOr<std::string> fs = MountFsType(cap); !fs.ok()) return fs.status();
  }
  return absl::OkStatus();
}

absl::Status ValidateCapabilities(const std::vector<VolumeCapability>& caps,
                                  const CapabilityOptions& options) {
  if (caps.empty()) return absl::InvalidArgumentError("volume capabilities are missing");
  const bool file = IsFileVolumeRequest(caps);
  for (size_t i = 0; i < caps.size(); ++i) {
    absl::Status s = ValidateCapability(caps[i], options);
    if (s.ok() && file) s = ValidateFileCapability(caps[i]);
    if (!s.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("volume capability ", i, ": ", s.message()));
    }
  }
  return absl::OkStatus();
}

Confirmation ConfirmCapabilities(const std::vector<VolumeCapability>& caps,
                                 const CapabilityOptions& options) {
  absl::Status s = ValidateCapabilities(caps, options);
  if (s.ok()) return {true, ""};
  return {false, std::string(s.message())};
}

}  // namespace ccm::csi
