#pragma once
// Runs a program (the node plugin's blkid, mkfs.*, resize2fs, xfs_growfs; kubectl in tests) and
// collects what it printed.

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace ccm {

struct CommandResult {
  int exit_code = 0;   // the tool's exit status; 128 + n when killed by signal n
  std::string output;  // stdout and stderr, interleaved as written
};

// argv[0] is looked up on PATH. stdin is /dev/null. An error only when the tool could not be
// started at all (NotFound when it is not installed, naming it and the Debian package hint the
// caller adds); a non-zero exit is a result, for the caller to judge.
absl::StatusOr<CommandResult> RunCommand(const std::vector<std::string>& argv);

// "mkfs.ext4 -F /dev/sdb" for messages.
std::string CommandLine(const std::vector<std::string>& argv);

}  // namespace ccm
