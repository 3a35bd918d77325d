// The API server node_init_bench measures against: the kube-emulator binary it starts (with its
// debug endpoint: registration outside the counters, request counters, handler times), or a real
// kube-apiserver named by --kubeconfig (registration through the API; the controller's requests
// from its own client metrics; the CPU of the processes named by --server-pids).
#pragma once

#include <sys/types.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/http_client.h"
#include "kube/client.h"

namespace ccm::bench {

// A child process whose stdout (optionally a pipe) and stderr go to `log`.
struct Child {
  pid_t pid = -1;
  int stdout_fd = -1;

  static absl::StatusOr<Child> Spawn(const std::vector<std::string>& argv, const std::string& log,
                                     bool pipe_stdout);
  std::string ReadLine() const;  // one line from the stdout pipe (blocking)
  void Terminate();              // SIGTERM, then SIGKILL after 5 s
};

// The compiled-in path, unless the environment variable `env` names another binary.
std::string BinaryPath(const char* env, const char* compiled_in);

// User + system CPU time of a process so far (/proc/<pid>/stat).
absl::Duration CpuTime(pid_t pid);

// A Node as a kubelet with --cloud-provider=external registers it (uninitialized taint). With
// `images` > 0 its status is a real kubelet's (capacity, nodeInfo, conditions) with that many
// images; with 0 it has only the systemUUID and the Ready condition.
nlohmann::json KubeletNode(const std::string& name, const std::string& system_uuid, int images = 0);

class ApiServer {
 public:
  // Starts the kube-emulator binary; its kubeconfig is written into `dir`.
  static absl::StatusOr<std::unique_ptr<ApiServer>> StartEmulator(const std::string& dir);
  // A real API server. Refused when it has any Node: the bench creates and deletes Nodes and runs
  // a cloud-node controller against a simulated vCenter, so it needs a throwaway server.
  static absl::StatusOr<std::unique_ptr<ApiServer>> Connect(const std::string& kubeconfig,
                                                            std::vector<pid_t> pids);
  ~ApiServer();

  bool emulated() const { return !debug_.empty(); }
  const std::string& kubeconfig() const { return kubeconfig_; }
  // Creates the Nodes, 8 threads, as kubelets would (the emulator's: outside its counters).
  bool Register(const std::vector<nlohmann::json>& bodies);
  // The emulator's request counters ({"counts": ..., "serveSeconds": ..., "total": ...}); an
  // empty object for a real server.
  nlohmann::json Counters();
  absl::Status ResetCounters();
  // The emulator's handler time for Node writes so far (seconds; 0 for a real server).
  double NodeWriteServeSeconds();
  // CPU time of the server's processes (zero when none is known).
  absl::Duration Cpu() const;
  bool cpu_known() const { return !pids_.empty(); }
  // Stops the emulator; on a real server deletes the Nodes this bench registered.
  void Stop();

 private:
  ApiServer() = default;
  std::string kubeconfig_;
  std::string debug_;
  std::vector<pid_t> pids_;
  Child emulator_;
  HttpClient http_{HttpClientOptions{.tls = {.insecure = true}}};
  std::unique_ptr<kube::RestClient> client_;  // a real server's, unthrottled
  std::vector<std::string> registered_;       // Node names, deleted by Stop() on a real server
};

}  // namespace ccm::bench
