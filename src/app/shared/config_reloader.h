#pragma once
// Watching a config file on disk: the CCM's --cloud-config (issue 10, item 6) and the CSI
// driver's csi-vsphere.conf (its own parse and classification, app/csi/config_reload.h). The Go
// provider exits on any filesystem event on the file (klog.Fatalf: exit code 255, the lease is not
// released, the new file is not even checked). Here:
//   - The file is re-read by its path every `period` on the injected clock and its bytes compared
//     with the last ones seen. A ConfigMap volume changes by swapping its `..data` symlink: opening
//     the path again follows the new link, so that is seen like an in-place write, and a file that
//     disappears for a moment is reported once, not acted on.
//   - New bytes are parsed and validated exactly as at start-up. Invalid: the running config stays
//     (the caller logs an error and records a Warning Event).
//   - Valid: ClassifyConfigChange says whether it can apply live or needs a restart.
// Pure decision (ClassifyConfigChange) apart from the I/O loop (ConfigReloader).

#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "cloud/config/config.h"
#include "common/clock.h"

namespace ccm::app {

struct ConfigChange {
  enum class Action {
    kNone,       // nothing that matters changed (comments, formatting, an unused Global value)
    kApplyLive,  // every change applies without a process restart
    kRestart,    // at least one change needs a new process
  };
  Action action = Action::kNone;
  std::vector<std::string> changed;          // every difference, e.g. "[Nodes] changed"
  std::vector<std::string> restart_reasons;  // the differences that need a restart
};

// Live (the leader's controllers and vCenter sessions restart in-process with the new config):
// [Nodes] rules, [Labels] zone/region categories, a vCenter's ip-family, datacenters and
// soap-roundtrip-count, Global cluster-id, and the [NSXT]/[LoadBalancer]/[Route] sections
// (their controllers restart with the rest).
// Restart: the set of vCenters, a vCenter's server, port or TLS settings (insecure-flag, ca-file,
// thumbprint: the health checks, the credential routes and the Secret watch are keyed by them and
// built once), and its credential settings (user, password, secret-name, secret-namespace,
// secrets-directory: the credential store is built once at start-up; not live yet).
// Messages name keys and vCenters, never a value of a credential.
ConfigChange ClassifyConfigChange(const cloud::Config& old_config, const cloud::Config& new_config);

struct ConfigCheck {
  enum class Kind {
    kUnchanged,   // same bytes as last time
    kUnreadable,  // cannot be opened (reported once until it can again)
    kInvalid,     // does not parse or validate: the running config stays
    kNoEffect,    // valid, ClassifyConfigChange found nothing to do
    kApplyLive,   // valid, `config` is the new running config
    kRestart,     // valid, needs a new process: `change.restart_reasons` say why
  };
  Kind kind = Kind::kUnchanged;
  std::string message;  // the error, or a one-line summary of the change
  ConfigChange change;
  std::optional<cloud::Config> config;  // kApplyLive and kRestart: the new config
  std::vector<std::string> warnings;    // the new file's config warnings
};
absl::string_view ConfigCheckKindName(ConfigCheck::Kind k);

class ConfigReloader {
 public:
  struct Options {
    std::string path;
    cloud::Environment env;  // the process environment, as at start-up
    bool strict = false;     // --strict-config
    absl::Duration period = absl::Seconds(10);
    Clock* clock = nullptr;  // null = Clock::Real()
    // How messages name the file ("--cloud-config <path>" when empty).
    std::string name;
    // Parse the bytes as at start-up (default: cloud::ParseConfig with env and strict).
    std::function<absl::StatusOr<cloud::ParseResult>(const std::string& bytes)> parse;
    // Decide what a valid new config means (default: ClassifyConfigChange).
    std::function<ConfigChange(const cloud::Config&, const cloud::Config&)> classify;
  };
  using Handler = std::function<void(const ConfigCheck&)>;

  // `running`: the config the process started with. The first Check() reads the file and
  // compares its config with `running` (so a change between start-up and here is not missed).
  ConfigReloader(Options options, cloud::Config running);
  ~ConfigReloader();  // Stop()

  // One look at the file. After kApplyLive the new config is the running one; after kRestart and
  // kInvalid the running one stays. Thread-compatible (the watch thread is its only caller once
  // started).
  ConfigCheck Check();

  // A thread that runs Check() every period and calls `handler` for anything but kUnchanged.
  void Start(Handler handler);
  void Stop();

 private:
  Options options_;
  Clock& clock_;
  cloud::Config running_;
  std::optional<std::string> last_bytes_;  // nullopt: none seen yet
  bool unreadable_ = false;                // the last look could not open the file
  absl::Notification stop_;
  std::thread thread_;
};

}  // namespace ccm::app
