#pragma once
// A child process for integration tests: the real binary, started with fork/exec, its stdout and
// stderr written to files (so a test can read them while it runs and after it ends). The child
// dies with the test (PR_SET_PDEATHSIG) and the destructor SIGKILLs and reaps a child still
// running, so no test leaves a process behind.

#include <sys/types.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace ccm::integration {

// The whole content of a file ("" when it cannot be read).
std::string ReadFile(const std::string& path);

class ChildProcess {
 public:
  // argv[0] is the program path. Output goes to `<log_prefix>.stdout` / `<log_prefix>.stderr`.
  static absl::StatusOr<std::unique_ptr<ChildProcess>> Start(std::vector<std::string> argv,
                                                             const std::string& log_prefix);
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const { return pid_; }
  void Signal(int sig);
  // The exit code (128+signal when killed by one) once the process ended, nullopt if it still
  // runs after `timeout`.
  std::optional<int> WaitExit(absl::Duration timeout);
  bool Running();
  std::string Stdout() const;
  std::string Stderr() const;
  const std::string& stderr_path() const { return stderr_path_; }

 private:
  ChildProcess() = default;
  pid_t pid_ = -1;
  std::optional<int> exit_code_;
  std::string stdout_path_, stderr_path_;
};

}  // namespace ccm::integration
