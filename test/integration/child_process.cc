#include "integration/child_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <thread>

#include "absl/strings/str_cat.h"

namespace ccm::integration {
std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

absl::StatusOr<std::unique_ptr<ChildProcess>> ChildProcess::Start(std::vector<std::string> argv,
                                                                  const std::string& log_prefix) {
  if (argv.empty()) return absl::InvalidArgumentError("no program");
  if (access(argv[0].c_str(), X_OK) != 0) {
    return absl::NotFoundError(absl::StrCat(argv[0], ": not an executable (build it first)"));
  }
  std::unique_ptr<ChildProcess> p(new ChildProcess());
  p->stdout_path_ = log_prefix + ".stdout";
  p->stderr_path_ = log_prefix + ".stderr";
  int out = open(p->stdout_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  int err = open(p->stderr_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  int in = open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (out < 0 || err < 0 || in < 0) return absl::InternalError("cannot open the log files");
  std::vector<char*> cargv;
  for (auto& a : argv) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  const pid_t parent = getpid();
  pid_t pid = fork();
  if (pid < 0) return absl::InternalError("fork failed");
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);
    dup2(in, 0);
    dup2(out, 1);
    dup2(err, 2);
    // Signals blocked by the test's threads must not stay blocked in the child.
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    execv(cargv[0], cargv.data());
    _exit(127);
  }
  close(in);
  close(out);
  close(err);
  p->pid_ = pid;
  return p;
}

ChildProcess::~ChildProcess() {
  if (Running()) {
    Signal(SIGKILL);
    WaitExit(absl::Seconds(10));
  }
}

void ChildProcess::Signal(int sig) {
  if (pid_ > 0 && !exit_code_) kill(pid_, sig);
}

bool ChildProcess::Running() { return pid_ > 0 && !WaitExit(absl::ZeroDuration()); }

std::optional<int> ChildProcess::WaitExit(absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  while (!exit_code_) {
    int status = 0;
    pid_t r = waitpid(pid_, &status, WNOHANG);
    if (r == pid_) {
      exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      break;
    }
    if (absl::Now() >= deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // polling waitpid, no timer API
  }
  return exit_code_;
}

std::string ChildProcess::Stdout() const { return ReadFile(stdout_path_); }
std::string ChildProcess::Stderr() const { return ReadFile(stderr_path_); }

}  // namespace ccm::integration
