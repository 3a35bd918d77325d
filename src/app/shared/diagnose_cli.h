#pragma once
// The `diagnose` subcommand of both binaries: `<binary> diagnose [--output text|json] [the
// component's own flags]`. It reads what the component reads, writes nothing anywhere, prints
// one line per check (diagnose/report.h) and exits 1 when a check is an error, 0 otherwise, 2
// for bad flags.

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "diagnose/report.h"

namespace ccm::app {

// Whether the command line asks for diagnose (its first argument).
bool IsDiagnose(const std::vector<std::string>& args);

struct DiagnoseArgs {
  bool json = false;
  std::vector<std::string> rest;  // the program name and the component's flags
};
// `args` as main() has them ("<binary> diagnose ..."). InvalidArgument for a bad --output.
absl::StatusOr<DiagnoseArgs> ParseDiagnoseArgs(const std::vector<std::string>& args);

// ParseDiagnoseArgs, printing a bad flag to stderr: nullopt then (exit code 2).
std::optional<DiagnoseArgs> DiagnoseArgsOrComplain(const std::vector<std::string>& args);

// Prints the report to stdout; the exit code.
int PrintReport(const diagnose::Report& report, bool json);

}  // namespace ccm::app
