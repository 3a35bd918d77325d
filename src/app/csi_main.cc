// vsphere-csi-driver: the vSphere CSI driver (csi.vsphere.vmware.com), controller or node plugin
// as X_CSI_MODE says.
#include <signal.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/notification.h"
#include "app/csi_driver.h"
#include "app/csi_options.h"
#include "common/logging.h"
#ifdef CCM_CSI_SYNCER
#include "app/csi_syncer.h"
#endif

extern char** environ;

int main(int argc, char** argv) {
  std::map<std::string, std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string kv(*e);
    auto eq = kv.find('=');
    if (eq != std::string::npos) env[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  std::vector<std::string> args(argv, argv + argc);
#ifdef CCM_CSI_SYNCER
  // X_CSI_MODE=syncer: the CNS metadata syncer (the reference's separate vsphere-syncer image).
  if (ccm::app::IsCsiSyncerMode(env)) {
    const int code = ccm::app::CsiSyncerMain(args, env);
    std::fflush(stdout);
    std::_Exit(code);  // the signal thread may still be waiting
  }
#endif
  auto options = ccm::app::ParseCsiOptions(args, env);
  if (!options.ok()) {
    std::cerr << "error: " << options.status().message() << "\n\n" << ccm::app::CsiUsageText();
    return 2;
  }
  if (options->help) {
    std::cout << ccm::app::CsiUsageText();
    return 0;
  }
  if (options->version) {
    std::cout << ccm::app::kCsiVersion << "\n";  // the reference prints the bare version
    return 0;
  }
  ccm::logging::Init(options->verbosity);

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
    LOG_INFO("received signal {}, shutting down", sig);
    stop.Notify();
  });
  signals.detach();
  int code = ccm::app::RunCsiDriver(*options, env, stop);
  std::fflush(stdout);
  std::_Exit(code);  // the signal thread may still be waiting
}
