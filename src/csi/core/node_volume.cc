#include "csi/core/node_volume.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "csi/core/constants.h"

namespace ccm::csi {
namespace {

void AddOnce(std::vector<std::string>& out, absl::string_view option) {
  if (option.empty()) return;
  if (std::find(out.begin(), out.end(), option) == out.end()) out.emplace_back(option);
}

}  // namespace

absl::StatusOr<int64_t> MaxVolumesPerNode(std::optional<absl::string_view> env_value) {
  if (!env_value.has_value() || env_value->empty()) return kDefaultBlockVolumesPerNode;
  absl::string_view v = *env_value;
  int64_t value = 0;
  bool digits_only = std::all_of(v.begin(), v.end(), [](char c) { return absl::ascii_isdigit(c); });
  if (!digits_only || !absl::SimpleAtoi(v, &value) || value > kMaxAllowedBlockVolumesPerNode) {
    return absl::InvalidArgumentError(absl::StrCat(kEnvMaxVolumesPerNode, "=\"", v,
                                                   "\" must be a whole number from 0 to ",
                                                   kMaxAllowedBlockVolumesPerNode));
  }
  return value == 0 ? kDefaultBlockVolumesPerNode : value;
}

absl::StatusOr<FormatDecision> DecideFormat(absl::string_view existing, absl::string_view requested,
                                            bool read_only) {
  std::string have = absl::AsciiStrToLower(absl::StripAsciiWhitespace(existing));
  std::string want = absl::AsciiStrToLower(requested);
  if (have.empty()) {
    if (read_only) {
      return absl::FailedPreconditionError(absl::StrCat(
          "the device holds no filesystem and the volume is read-only: it cannot be formatted as ",
          want));
    }
    return FormatDecision{FormatAction::kFormat, want};
  }
  if (have == want) return FormatDecision{FormatAction::kMount, want};
  if (want == kFsExt4 && (have == "ext2" || have == kFsExt3)) {
    return FormatDecision{FormatAction::kMount, have};
  }
  return absl::FailedPreconditionError(
      absl::StrCat("the device already holds \"", have, "\", not the requested ", want,
                   "; it is never reformatted (its data would be lost)"));
}

bool KernelAtLeast(absl::string_view kernel_release, int major, int minor) {
  std::vector<absl::string_view> parts = absl::StrSplit(kernel_release, absl::MaxSplits('.', 2));
  int got_major = 0, got_minor = 0;
  if (parts.size() < 2 || !absl::SimpleAtoi(parts[0], &got_major)) return false;
  absl::string_view m = parts[1];
  size_t digits = 0;
  while (digits < m.size() && absl::ascii_isdigit(m[digits])) ++digits;
  if (digits == 0 || !absl::SimpleAtoi(m.substr(0, digits), &got_minor)) return false;
  return got_major > major || (got_major == major && got_minor >= minor);
}

std::vector<std::string> MkfsArgv(absl::string_view fs_type, absl::string_view device,
                                  absl::string_view kernel_release) {
  std::vector<std::string> argv = {absl::StrCat("mkfs.", fs_type)};
  if (fs_type == kFsExt4 || fs_type == kFsExt3) argv.emplace_back("-F");
  if (fs_type == kFsXfs && !KernelAtLeast(kernel_release, 5, 10)) {
    for (const char* feature : {"bigtime=0", "inobtcount=0"}) {
      argv.emplace_back("-m");
      argv.emplace_back(feature);
    }
  }
  argv.emplace_back(device);
  return argv;
}

std::vector<std::string> StageMountOptions(absl::string_view fs_type,
                                           const std::vector<std::string>& mount_flags,
                                           bool read_only) {
  std::vector<std::string> out;
  for (const std::string& f : mount_flags) AddOnce(out, f);
  if (fs_type == kFsXfs) AddOnce(out, kXfsNoUuidMountOption);
  if (read_only) AddOnce(out, "ro");
  return out;
}

std::vector<std::string> PublishMountOptions(const std::vector<std::string>& mount_flags,
                                             bool read_only) {
  std::vector<std::string> out = {"bind"};
  for (const std::string& f : mount_flags) AddOnce(out, f);
  if (read_only) AddOnce(out, "ro");
  return out;
}

absl::Status CheckBlockPublish(bool read_only) {
  if (!read_only) return absl::OkStatus();
  return absl::InvalidArgumentError(
      "read-only publish of a raw block volume is not supported: a read-only bind of the device "
      "node does not prevent writes to the device");
}

}  // namespace ccm::csi
