// vsphere-cloud-controller-manager: the Kubernetes cloud controller manager for VMware vSphere.
#include <malloc.h>
#include <signal.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/notification.h"
#include "app/manager.h"
#include "app/options.h"
#include "common/logging.h"

extern char** environ;

int main(int argc, char** argv) {
  // glibc gives each thread that allocates its own malloc arena (up to 8 per core), and every
  // arena keeps the memory freed into it. With ~20 threads that was about 8 MB of resident
  // memory for 1,000 Nodes (bench/node_init_bench). This process is mostly idle and its threads
  // rarely allocate at the same time, so one arena does (a further ~0.5 MB less than two, same
  // CPU time); MALLOC_ARENA_MAX in the environment still wins.
  if (std::getenv("MALLOC_ARENA_MAX") == nullptr) mallopt(M_ARENA_MAX, 1);
  // Fixed thresholds turn off glibc's dynamic mmap threshold: once a multi-MB buffer (an answer
  // from vCenter) was freed, glibc would otherwise serve every later allocation up to that size
  // from the arenas, where freed memory stays resident. Large buffers stay mmap'd and go back to
  // the OS when freed; the arenas' free tops are trimmed past 256 KiB.
  if (std::getenv("MALLOC_MMAP_THRESHOLD_") == nullptr) mallopt(M_MMAP_THRESHOLD, 128 * 1024);
  if (std::getenv("MALLOC_TRIM_THRESHOLD_") == nullptr) mallopt(M_TRIM_THRESHOLD, 256 * 1024);
  std::vector<std::string> args(argv, argv + argc);
  auto options = ccm::app::ParseOptions(args);
  if (!options.ok()) {
    std::cerr << "error: " << options.status().message() << "\n\n" << ccm::app::UsageText();
    return 2;
  }
  if (options->help) {
    std::cout << ccm::app::UsageText();
    return 0;
  }
  if (options->version) {
    std::cout << "vsphere-cloud-controller-manager " << ccm::app::kVersion << "\n";
    return 0;
  }
  ccm::logging::Init(options->verbosity);

  std::map<std::string, std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string kv(*e);
    auto eq = kv.find('=');
    if (eq != std::string::npos) env[kv.substr(0, eq)] = kv.substr(eq + 1);
  }

  // SIGTERM / SIGINT: handled on a thread of our own (sigwait), never in a signal handler.
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  signal(SIGPIPE, SIG_IGN);
  absl::Notification stop;
  std::thread signals([&] {
    int sig = 0;
    sigwait(&set, &sig);
    if (!stop.HasBeenNotified()) {
      LOG_INFO("received signal {}, shutting down", sig);
      stop.Notify();
    }
  });
  signals.detach();
  int code = ccm::app::Run(*options, env, stop);
  std::fflush(stdout);
  std::_Exit(code);  // the signal thread may still be waiting
}
