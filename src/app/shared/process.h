#pragma once
// Start-up and exit of every binary of the project (vsphere-cloud-controller-manager,
// vsphere-csi-driver in each mode): environment, command line answers, memory tuning, signals.
// A main() is then: TuneMalloc, TuneMutexes, ProcessEnvironment, parse, AnswerCommandLine,
// NotifyOnSignals, run, ExitProcess.

#include <map>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/notification.h"

namespace ccm::app {

// The process environment (environ) as a map.
std::map<std::string, std::string> ProcessEnvironment();

// glibc malloc settings for a long-running, mostly idle process with many threads (one arena,
// fixed mmap and trim thresholds: see process.cc for the measurements). Each MALLOC_* variable
// set in the environment still wins.
void TuneMalloc();

// absl::Mutex without its deadlock detector: Debian's abseil is built without NDEBUG, so every
// lock and unlock would also update a global lock graph (about 1% of the controller's CPU while
// initialising Nodes). The tests keep the detector.
void TuneMutexes();

// What every binary's options have in common.
struct StandardFlags {
  bool help = false;
  bool version = false;
  int verbosity = 0;
};

// Answers a parse error (message and usage on stderr: 2), --help (usage: 0) and --version
// (`version_line`: 0). Otherwise initialises logging at the flags' verbosity and returns nullopt:
// the process goes on.
std::optional<int> AnswerStandardFlags(const absl::Status& parsed, const StandardFlags& flags,
                                       const std::string& usage, const std::string& version_line);

template <class Options>
std::optional<int> AnswerCommandLine(const absl::StatusOr<Options>& options,
                                     const std::string& usage, const std::string& version_line) {
  StandardFlags flags;
  if (options.ok()) flags = {options->help, options->version, options->verbosity};
  return AnswerStandardFlags(options.status(), flags, usage, version_line);
}

// SIGTERM and SIGINT are blocked in every thread (call before starting any) and waited for on a
// thread of their own, never in a signal handler: the first one notifies `stop` unless the
// process already did. SIGPIPE is ignored (a peer closing a socket is an error, not an exit).
// `stop` must outlive the process.
void NotifyOnSignals(absl::Notification& stop);

// Flushes stdout and ends the process with `code` without running static destructors (the signal
// thread may still be waiting).
[[noreturn]] void ExitProcess(int code);

}  // namespace ccm::app
