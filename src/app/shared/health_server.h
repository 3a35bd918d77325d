#pragma once
// The secure port: /healthz, /readyz, /livez and /metrics over HTTPS, like the Go
// cloud-controller-manager. Named checks: /healthz and /readyz run them all; /livez runs only
// the checks marked for liveness, so an unreachable vCenter makes the pod unready (and shows as
// "[-]vcenter-<name> failed") instead of crash-looping it. `?verbose` lists every check.

#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "app/shared/self_signed.h"
#include "common/metrics.h"

namespace httplib {
class Server;
}

namespace ccm::app {

class HealthServer {
 public:
  using Check = std::function<absl::Status()>;
  explicit HealthServer(metrics::Registry* registry);
  ~HealthServer();

  void AddCheck(const std::string& name, Check check, bool liveness);
  // Serves HTTPS with `kp` (or plain HTTP when kp is null, for tests) on bind_address:port
  // (port 0 picks one). Returns the bound port.
  absl::StatusOr<int> Start(const std::string& bind_address, int port, KeyPair* kp);
  void Stop();

  // The body and code for a health endpoint; exposed for tests.
  struct Result {
    int code;
    std::string body;
  };
  Result Evaluate(bool liveness_only, bool verbose, const std::string& exclude) const;

 private:
  struct Named {
    std::string name;
    Check check;
    bool liveness;
  };
  metrics::Registry* registry_;
  mutable absl::Mutex mu_;
  std::vector<Named> checks_ ABSL_GUARDED_BY(mu_);
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
};

}  // namespace ccm::app
