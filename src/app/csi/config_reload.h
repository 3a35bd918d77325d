#pragma once
// csi-vsphere.conf changing on disk, for the controller and the syncer (issue 42, item 4): the
// mounted Secret vsphere-config-secret is updated in place by the kubelet when an operator
// rotates the vCenter password. The reference re-reads the file on any change in its directory.
//   - A changed password of a vCenter whose credentials are in the file applies live: the
//     credential store takes it and every session logs in again with it (operations in flight
//     keep their task; a call that fails on the old session is retried on the new one).
//   - Anything else that changed (a vCenter added or removed, its server, port, user, TLS
//     settings, [Global], [Labels], [Snapshot], ...) needs a new process: the driver stops as on
//     SIGTERM (RPCs in flight get --shutdown-grace-period; the operation records keep their CNS
//     tasks for the retry) and exits 1, and the pod restarts with the new file. The reference
//     exits the same way when a vCenter is added.
//   - A file that does not parse or validate keeps the running config; the error names the file,
//     line and key.

#include <map>
#include <optional>
#include <string>

#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "app/shared/config_reloader.h"
#include "cloud/config/config.h"
#include "cloud/credentials/credential_store.h"

namespace ccm::app {

// Pure: what a new csi-vsphere.conf means for a running driver. Messages name keys and vCenters,
// never a credential value.
ConfigChange ClassifyCsiConfigChange(const cloud::Config& old_config,
                                     const cloud::Config& new_config);

// The watch: re-reads `path` every `period` (0: never) with the same parse as at start-up,
// rotates passwords in `credentials`, and on a change that needs a restart logs why, sets
// restart_needed() and notifies `stop`. `running`: the config as read from the file at start-up
// (before a cluster-id from the ConfigMap was filled in).
class CsiConfigWatch {
 public:
  struct Options {
    std::string path;
    std::map<std::string, std::string> env;
    absl::Duration period = absl::Seconds(10);
    Clock* clock = nullptr;
  };
  CsiConfigWatch(Options options, cloud::Config running, cloud::CredentialStore* credentials,
                 absl::Notification* stop);
  ~CsiConfigWatch();  // Stop()
  void Start();
  void Stop();
  ConfigCheck CheckNow();  // one look (tests), handled as the watch would
  bool restart_needed() const { return restart_needed_.HasBeenNotified(); }

 private:
  void Handle(const ConfigCheck& c);
  absl::Duration period_;
  ConfigReloader reloader_;
  cloud::CredentialStore* credentials_;
  absl::Notification* stop_;
  absl::Notification restart_needed_;
};

}  // namespace ccm::app
