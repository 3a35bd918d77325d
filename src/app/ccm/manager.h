#pragma once
// The vsphere-cloud-controller-manager process: config, Kubernetes client, credentials, secure
// port, leader election, and (while leading) the vCenter connections and the controllers.
//
// Lifecycle: Run() returns the exit code. `stop` (SIGTERM/SIGINT) stops the controllers, releases
// the lease, logs out of every vCenter and returns 0. Losing the lease stops every controller at
// once and returns 1 (like the Go binary, which exits so that it restarts as a candidate).

#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "absl/synchronization/notification.h"
#include "app/ccm/options.h"
#include "cloud/config/config.h"

namespace ccm::app {

inline constexpr char kVersion[] = CCM_VERSION;

int Run(const Options& options, const std::map<std::string, std::string>& env,
        absl::Notification& stop);

// --cloud-config, read and parsed as Run() does (strict with --strict-config).
absl::StatusOr<cloud::ParseResult> LoadConfig(const Options& o,
                                              const std::map<std::string, std::string>& env);

}  // namespace ccm::app
