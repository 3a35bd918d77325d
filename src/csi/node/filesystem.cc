#include "csi/node/filesystem.h"

#include <sys/utsname.h>

#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/run_command.h"
#include "csi/core/node_volume.h"

namespace ccm::csi::node {
namespace {

absl::Status Run(const std::vector<std::string>& argv) {
  absl::StatusOr<CommandResult> r = RunCommand(argv);
  if (!r.ok()) return r.status();
  if (r->exit_code != 0) {
    return absl::InternalError(absl::StrCat(CommandLine(argv), " exited with ", r->exit_code, ": ",
                                            absl::StripAsciiWhitespace(r->output)));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::string> ToolFilesystems::Probe(const std::string& device) {
  std::vector<std::string> argv = {"blkid",  "-p", "-s",     "TYPE", "-s",
                                   "PTTYPE", "-o", "export", device};
  absl::StatusOr<CommandResult> r = RunCommand(argv);
  if (!r.ok()) return r.status();
  if (r->exit_code == 2) return std::string();
  if (r->exit_code == 8) {
    return absl::FailedPreconditionError(
        absl::StrCat(device, " holds more than one signature (", CommandLine(argv),
                     "): refusing to format or mount it: ", absl::StripAsciiWhitespace(r->output)));
  }
  if (r->exit_code != 0) {
    return absl::InternalError(absl::StrCat(CommandLine(argv), " exited with ", r->exit_code, ": ",
                                            absl::StripAsciiWhitespace(r->output)));
  }
  std::string type, pttype;
  for (absl::string_view line : absl::StrSplit(r->output, '\n', absl::SkipWhitespace())) {
    if (absl::ConsumePrefix(&line, "TYPE=")) type = std::string(line);
    if (absl::ConsumePrefix(&line, "PTTYPE=")) pttype = std::string(line);
  }
  if (!type.empty()) return type;
  if (!pttype.empty()) return pttype;
  // Exit 0 with neither tag should not happen; an unknown "something" must never be formatted.
  return absl::FailedPreconditionError(
      absl::StrCat(CommandLine(argv),
                   " found a signature without a type: ", absl::StripAsciiWhitespace(r->output)));
}

absl::Status ToolFilesystems::Format(const std::string& fs_type, const std::string& device) {
  struct utsname u;
  const std::string release = uname(&u) == 0 ? u.release : "";
  return Run(MkfsArgv(fs_type, device, release));
}

absl::Status ToolFilesystems::Grow(const std::string& fs_type, const std::string& device,
                                   const std::string& mount_point) {
  if (fs_type == "ext2" || fs_type == "ext3" || fs_type == "ext4") {
    absl::Status s = Run({"resize2fs", device});
    if (!s.ok() && absl::StrContains(s.message(), "Permission denied")) {
      // The kernel's EXT4_IOC_RESIZE_FS wants CAP_SYS_RESOURCE, which a container without
      // privileged: true lacks (xfs_growfs needs only CAP_SYS_ADMIN, so xfs still grows).
      return absl::FailedPreconditionError(
          absl::StrCat(s.message(),
                       " (online ext4 growth needs CAP_SYS_RESOURCE: run the node plugin "
                       "privileged, as the reference's DaemonSet does)"));
    }
    return s;
  }
  if (fs_type == "xfs") return Run({"xfs_growfs", "-d", mount_point});
  return absl::InvalidArgumentError(absl::StrCat("cannot grow a ", fs_type, " filesystem (", device,
                                                 " at ", mount_point,
                                                 "): only ext2/ext3/ext4 and xfs"));
}

}  // namespace ccm::csi::node
