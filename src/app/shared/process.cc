#include "app/shared/process.h"

#include <malloc.h>
#include <signal.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <thread>

#include "absl/synchronization/mutex.h"
#include "common/logging.h"

extern char** environ;

namespace ccm::app {

std::map<std::string, std::string> ProcessEnvironment() {
  std::map<std::string, std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string kv(*e);
    auto eq = kv.find('=');
    if (eq != std::string::npos) env[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  return env;
}

void TuneMalloc() {
  // glibc gives each thread that allocates its own malloc arena (up to 8 per core), and every
  // arena keeps the memory freed into it. With ~20 threads that was about 8 MB of resident
  // memory for 1,000 Nodes (bench/node_init_bench). These processes are mostly idle and their
  // threads rarely allocate at the same time, so one arena does (a further ~0.5 MB less than
  // two, same CPU time).
  if (std::getenv("MALLOC_ARENA_MAX") == nullptr) mallopt(M_ARENA_MAX, 1);
  // Fixed thresholds turn off glibc's dynamic mmap threshold: once a multi-MB buffer (an answer
  // from vCenter) was freed, glibc would otherwise serve every later allocation up to that size
  // from the arenas, where freed memory stays resident. Large buffers stay mmap'd and go back to
  // the OS when freed; the arenas' free tops are trimmed past 256 KiB.
  if (std::getenv("MALLOC_MMAP_THRESHOLD_") == nullptr) mallopt(M_MMAP_THRESHOLD, 128 * 1024);
  if (std::getenv("MALLOC_TRIM_THRESHOLD_") == nullptr) mallopt(M_TRIM_THRESHOLD, 256 * 1024);
}

void TuneMutexes() { absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore); }

std::optional<int> AnswerStandardFlags(const absl::Status& parsed, const StandardFlags& flags,
                                       const std::string& usage, const std::string& version_line) {
  if (!parsed.ok()) {
    std::cerr << "error: " << parsed.message() << "\n\n" << usage;
    return 2;
  }
  if (flags.help) {
    std::cout << usage;
    return 0;
  }
  if (flags.version) {
    std::cout << version_line << "\n";
    return 0;
  }
  logging::Init(flags.verbosity);
  return std::nullopt;
}

void NotifyOnSignals(absl::Notification& stop) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  signal(SIGPIPE, SIG_IGN);
  std::thread([set, &stop] {
    int sig = 0;
    sigwait(&set, &sig);
    if (!stop.HasBeenNotified()) {
      LOG_INFO("received signal {}, shutting down", sig);
      stop.Notify();
    }
  }).detach();
}

void ExitProcess(int code) {
  std::fflush(stdout);
  std::_Exit(code);
}

}  // namespace ccm::app
