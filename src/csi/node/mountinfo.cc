#include "csi/node/mountinfo.h"

#include <cstdlib>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace ccm::csi::node {
namespace {

// The kernel escapes space, tab, newline and backslash in paths as \ooo (show_mountinfo's
// mangle()); anything else is printed as is.
std::string Unescape(absl::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size()) {
      absl::string_view oct = s.substr(i + 1, 3);
      bool digits = true;
      for (char c : oct) digits = digits && c >= '0' && c <= '7';
      if (digits) {
        out.push_back(static_cast<char>((oct[0] - '0') * 64 + (oct[1] - '0') * 8 + (oct[2] - '0')));
        i += 3;
        continue;
      }
    }
    out.push_back(s[i]);
  }
  return out;
}

bool HasCsvOption(absl::string_view list, absl::string_view opt) {
  for (absl::string_view o : absl::StrSplit(list, ',')) {
    if (o == opt) return true;
  }
  return false;
}

absl::StatusOr<MountInfo> ParseLine(absl::string_view line) {
  std::vector<absl::string_view> f = absl::StrSplit(line, ' ', absl::SkipEmpty());
  auto bad = [&](absl::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat("mountinfo line \"", line, "\": ", why));
  };
  // id parent major:minor root mount-point options [optional...] - fstype source super-options
  size_t sep = 6;
  while (sep < f.size() && f[sep] != "-") ++sep;
  if (f.size() < 6 || sep + 3 > f.size()) return bad("not enough fields");
  MountInfo m;
  if (!absl::SimpleAtoi(f[0], &m.id) || !absl::SimpleAtoi(f[1], &m.parent_id)) {
    return bad("mount ids are not numbers");
  }
  std::vector<absl::string_view> dev = absl::StrSplit(f[2], ':');
  if (dev.size() != 2 || !absl::SimpleAtoi(dev[0], &m.major) ||
      !absl::SimpleAtoi(dev[1], &m.minor)) {
    return bad("device is not major:minor");
  }
  m.root = Unescape(f[3]);
  m.mount_point = Unescape(f[4]);
  m.options = std::string(f[5]);
  m.fs_type = Unescape(f[sep + 1]);
  m.source = Unescape(f[sep + 2]);
  if (sep + 3 < f.size()) m.super_options = std::string(f[sep + 3]);
  return m;
}

}  // namespace

bool MountInfo::read_only() const { return HasCsvOption(options, "ro"); }

bool MountInfo::HasOption(absl::string_view opt) const {
  return HasCsvOption(options, opt) || HasCsvOption(super_options, opt);
}

absl::StatusOr<std::vector<MountInfo>> ParseMountInfo(absl::string_view text) {
  std::vector<MountInfo> out;
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipWhitespace())) {
    absl::StatusOr<MountInfo> m = ParseLine(line);
    if (!m.ok()) return m.status();
    out.push_back(*std::move(m));
  }
  return out;
}

std::optional<MountInfo> FindMountAt(const std::vector<MountInfo>& mounts,
                                     absl::string_view mount_point) {
  std::optional<MountInfo> found;
  for (const MountInfo& m : mounts) {
    if (m.mount_point == mount_point) found = m;
  }
  return found;
}

std::vector<MountInfo> MountsOfDevice(const std::vector<MountInfo>& mounts, uint32_t major,
                                      uint32_t minor) {
  std::vector<MountInfo> out;
  for (const MountInfo& m : mounts) {
    if (m.major == major && m.minor == minor) out.push_back(m);
  }
  return out;
}

}  // namespace ccm::csi::node
