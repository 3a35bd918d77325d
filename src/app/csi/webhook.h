#pragma once
// vsphere-csi-driver in syncer mode with --operation-mode=WEBHOOK_SERVER: the validating
// admission webhook (csi/webhook/admission.h) on HTTPS, POST /validate, as the reference's
// vsphere-webhook container runs it. The port and the serving certificate come from the file
// at WEBHOOK_CONFIG_PATH ([WebHookConfig] port, cert-file, key-file); a rotated certificate (its
// files changed, as a Secret update does) is picked up by restarting the listener. The API
// reads (a PV's reclaim policy, a namespace's VolumeSnapshots, a namespace's deletion) go through
// --kubeconfig / --master, in-cluster by default. GET /healthz answers "ok" on the same port.

#include <map>
#include <string>

#include "absl/synchronization/notification.h"
#include "app/csi/syncer_options.h"

namespace ccm::app {

// Runs until `stop` (0); start-up failures (config, certificate, port) log why and return 1.
int RunCsiWebhook(const CsiSyncerOptions& options, const std::map<std::string, std::string>& env,
                  absl::Notification& stop);

}  // namespace ccm::app
