// vsphere-csi-driver: the vSphere CSI driver (csi.vsphere.vmware.com), controller or node plugin
// as X_CSI_MODE says, or (X_CSI_MODE=syncer) the CNS metadata syncer, or (X_CSI_MODE=syncer
// --operation-mode=WEBHOOK_SERVER) the validating admission webhook.
#include <string>
#include <vector>

#include "absl/synchronization/notification.h"
#include "app/csi/diagnose.h"
#include "app/csi/driver.h"
#include "app/csi/options.h"
#include "app/shared/diagnose_cli.h"
#include "app/shared/process.h"
#ifdef CCM_CSI_SYNCER
#include "app/csi/syncer.h"
#include "app/csi/syncer_options.h"
#include "app/csi/webhook.h"
#endif

int main(int argc, char** argv) {
  ccm::app::TuneMalloc();
  ccm::app::TuneMutexes();
  const std::map<std::string, std::string> env = ccm::app::ProcessEnvironment();
  const std::vector<std::string> args(argv, argv + argc);
  if (ccm::app::IsDiagnose(args)) return ccm::app::RunCsiDiagnose(args, env);
  static absl::Notification stop;
#ifdef CCM_CSI_SYNCER
  // X_CSI_MODE=syncer: the CNS metadata syncer (the reference's separate vsphere-syncer image).
  if (ccm::app::IsCsiSyncerMode(env)) {
    auto options = ccm::app::ParseCsiSyncerOptions(args, env);
    if (auto code = ccm::app::AnswerCommandLine(options, ccm::app::CsiSyncerUsageText(),
                                                ccm::app::kCsiVersion)) {
      return *code;
    }
    ccm::app::NotifyOnSignals(stop);
    if (options->webhook) ccm::app::ExitProcess(ccm::app::RunCsiWebhook(*options, env, stop));
    ccm::app::ExitProcess(ccm::app::RunCsiSyncer(*options, env, stop));
  }
#endif
  auto options = ccm::app::ParseCsiOptions(args, env);
  // The reference prints the bare version.
  if (auto code =
          ccm::app::AnswerCommandLine(options, ccm::app::CsiUsageText(), ccm::app::kCsiVersion)) {
    return *code;
  }
  ccm::app::NotifyOnSignals(stop);
  ccm::app::ExitProcess(ccm::app::RunCsiDriver(*options, env, stop));
}
