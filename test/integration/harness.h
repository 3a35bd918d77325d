#pragma once
// Shared pieces of the integration tests: a vCenter simulator (VcsimProcess), an in-process
// Kubernetes API emulator, a vsphere.conf whose credentials come from a Secret, and the real
// vsphere-cloud-controller-manager binary started as a child process. Waits poll a condition
// against a deadline; nothing sleeps a fixed time.

#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/http_client.h"
#include "fixtures/kube_emulator/kube_emulator.h"
#include "fixtures/vcsim/vcsim_process.h"
#include "integration/child_process.h"
#include "testing/eventually.h"
#include "testing/free_port.h"

namespace ccm::integration {

// Distinctive credentials: tests grep every output for the passwords.
inline constexpr char kUserA[] = "ccm-a@vsphere.local";
inline constexpr char kPasswordA[] = "Zq7-never-log-me-A-5be1";
inline constexpr char kUserB[] = "ccm-b@vsphere.local";
inline constexpr char kPasswordB[] = "Zq7-never-log-me-B-90c3";

// Polls `cond` every 50 ms until it is true (returns true) or `timeout` passes (false): the
// shared ccm::testing::Eventually (test/testing/eventually.h) at the pace of a child process.
inline bool WaitFor(const std::function<bool()>& cond, absl::Duration timeout) {
  return ::ccm::testing::Eventually(cond, timeout, absl::Milliseconds(50));
}

std::string SourceDir();
std::string CcmBinary();
std::string MakeTempDir(const std::string& name);
// Removes it unless the test failed (then it is kept for the logs).
void RemoveTempDir(const std::string& dir);
void WriteFile(const std::string& path, const std::string& content);
using ::ccm::testing::FreePort;
// The BIOS UUID in SMBIOS byte order (first three groups byte-swapped), as a kubelet reports it.
std::string SmbiosUuid(const std::string& uuid);
// A Node as a kubelet with --cloud-provider=external registers it: uninitialized taint, Ready.
nlohmann::json KubeletNode(const std::string& name, const std::string& bios_uuid);
// GET over HTTPS, certificate not verified (the secure port's certificate is self-signed).
absl::StatusOr<HttpResponse> HttpsGet(const std::string& url);
// The value of the first sample line of /metrics text that starts with `prefix`; -1 if none.
double MetricValue(const std::string& metrics, const std::string& prefix);

// A vcsim spec: dc1 with cluster c1 (2 hosts), VMs node-1..node-4 with IPs, zone/region tags,
// users A and B.
std::string TestSpec();

class Cluster {
 public:
  // Starts vcsim and the emulator, writes the kubeconfig, vsphere.conf (credentials from the
  // Secret kube-system/vsphere-cloud-secret) and creates that Secret with user A.
  static absl::StatusOr<std::unique_ptr<Cluster>> Start(const std::string& name,
                                                        const std::string& spec = TestSpec());
  ~Cluster();

  testing::VcsimProcess& vcsim() { return *vcsim_; }
  testing::KubeEmulator& emu() { return emu_; }
  const std::string& dir() const { return dir_; }
  const std::string& config_path() const { return config_path_; }
  const std::string& kubeconfig() const { return kubeconfig_; }
  // The simulator goes away (connections refused) and comes back on the same address, with the
  // same certificate and inventory and none of the old sessions: a vCenter reboot.
  void StopVcsim() { vcsim_->Stop(); }
  absl::Status RestartVcsim() { return vcsim_->Restart(); }

  absl::Status SetCredentials(const std::string& user, const std::string& password);
  // BIOS UUID of the simulator VM with this name.
  std::string VmUuid(const std::string& vm) const;
  absl::Status RegisterNode(const std::string& vm);
  // Sets the Ready condition as the node lifecycle sees it when a kubelet stops posting.
  absl::Status MarkNotReady(const std::string& node);
  std::string ProviderId(const std::string& node) const;  // "" if unset or no such Node
  bool NodeExists(const std::string& node) const;
  std::string LeaseHolder() const;  // "" if none

  // Flags: the Secret-backed config, the emulator's kubeconfig, short leader election, a free
  // secure port on 127.0.0.1 (returned in *port), -v=2, then `extra`.
  std::vector<std::string> CcmArgs(int port, const std::vector<std::string>& extra = {}) const;
  absl::StatusOr<std::unique_ptr<ChildProcess>> StartCcm(
      const std::string& name, int* port, const std::vector<std::string>& extra = {});
  // Waits until https://127.0.0.1:port/healthz answers (any code) or the process died.
  bool WaitServing(ChildProcess& p, int port, absl::Duration timeout);

 private:
  Cluster() = default;
  std::unique_ptr<testing::VcsimProcess> vcsim_;
  testing::KubeEmulator emu_;
  std::string dir_, config_path_, kubeconfig_;
};

}  // namespace ccm::integration
