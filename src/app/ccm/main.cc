// vsphere-cloud-controller-manager: the Kubernetes cloud controller manager for VMware vSphere.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "app/ccm/diagnose.h"
#include "app/ccm/manager.h"
#include "app/ccm/options.h"
#include "app/shared/diagnose_cli.h"
#include "app/shared/process.h"

int main(int argc, char** argv) {
  ccm::app::TuneMalloc();
  ccm::app::TuneMutexes();
  const std::map<std::string, std::string> env = ccm::app::ProcessEnvironment();
  const std::vector<std::string> args(argv, argv + argc);
  if (ccm::app::IsDiagnose(args)) return ccm::app::RunCcmDiagnose(args, env);
  auto options = ccm::app::ParseOptions(args);
  if (auto code = ccm::app::AnswerCommandLine(
          options, ccm::app::UsageText(),
          absl::StrCat("vsphere-cloud-controller-manager ", ccm::app::kVersion))) {
    return *code;
  }
  static absl::Notification stop;
  ccm::app::NotifyOnSignals(stop);
  ccm::app::ExitProcess(ccm::app::Run(*options, env, stop));
}
