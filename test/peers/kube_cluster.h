#pragma once
// A real Kubernetes control plane for one test binary: Debian's etcd and the peers'
// kube-apiserver on free loopback ports with a PKI of their own (a CA, the server's certificate
// for 127.0.0.1, a cluster-admin client certificate with O=system:masters, the service-account
// signing key), and, on demand, kube-controller-manager with the controllers a test names.
// Every process dies with the cluster (and with the test process).

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "fixtures/kube_emulator/tls_certs.h"
#include "integration/child_process.h"
#include "kube/client.h"

namespace ccm::peers {

using CertKey = ::ccm::testing::kube::CertKey;

struct KubeClusterOptions {
  // Added to kube-apiserver's flags (e.g. --feature-gates=..., --enable-aggregator-routing).
  std::vector<std::string> apiserver_flags;
};

// Removes the in-memory etcd stores (peers-etcd-<pid>-<port>) in `dir` whose test process is
// gone: a process killed (a ctest timeout) never ran KubeCluster's destructor, and its store
// would hold RAM until the machine restarts. Stores of live processes and other files stay.
void RemoveOrphanStores(const std::string& dir);

class KubeCluster {
 public:
  // Starts etcd and kube-apiserver and waits until /healthz says ok and the built-in objects
  // (the default namespace, the system ClusterRoles) are there.
  static absl::StatusOr<std::unique_ptr<KubeCluster>> Start(const std::string& name,
                                                            KubeClusterOptions options = {});
  ~KubeCluster();
  KubeCluster(const KubeCluster&) = delete;
  KubeCluster& operator=(const KubeCluster&) = delete;

  const std::string& dir() const { return dir_; }
  const std::string& server() const { return server_; }          // https://127.0.0.1:PORT
  const std::string& kubeconfig() const { return kubeconfig_; }  // cluster admin
  const std::string& ca_file() const { return ca_file_; }
  const CertKey& ca() const { return ca_; }
  kube::RestClient& client() { return *client_; }
  integration::ChildProcess& apiserver() { return *apiserver_; }
  integration::ChildProcess& etcd() { return *etcd_; }
  std::string version() const;  // the server's gitVersion

  // Stops kube-apiserver and starts it again on the same etcd, address and PKI (its watch caches
  // begin anew: a resourceVersion from before is then too old for a watch).
  absl::Status RestartApiserver();

  // Starts kube-controller-manager with `controllers` and `flags`; one at a time.
  absl::Status StartControllerManager(const std::vector<std::string>& controllers,
                                      const std::vector<std::string>& flags = {});
  integration::ChildProcess* controller_manager() { return kcm_.get(); }

  // Starts a program with --kubeconfig=<admin> and `args`, its logs in dir()/<name>.std*.
  absl::StatusOr<std::unique_ptr<integration::ChildProcess>> StartWithKubeconfig(
      const std::string& name, const std::string& program, std::vector<std::string> args);

  // kubectl against this cluster: its stdout, or an error with its output.
  absl::StatusOr<std::string> Kubectl(const std::vector<std::string>& args);
  // kubectl apply -f of a YAML text.
  absl::Status Apply(const std::string& yaml);

  // A kubeconfig for a client certificate of this cluster's CA (CN `user`, O `groups`).
  absl::StatusOr<std::string> KubeconfigFor(const std::string& user,
                                            const std::vector<std::string>& groups);

 private:
  KubeCluster() = default;
  absl::Status StartEtcd();
  absl::Status StartApiserver(const KubeClusterOptions& options);
  absl::Status WaitReady(absl::Duration timeout);

  std::string dir_, server_, kubeconfig_, ca_file_;
  std::vector<std::string> apiserver_argv_;
  CertKey ca_;
  int etcd_port_ = 0;
  std::string etcd_data_;  // its in-memory store, /dev/shm/peers-etcd-<pid>-<port>
  std::unique_ptr<integration::ChildProcess> etcd_, apiserver_, kcm_;
  std::unique_ptr<kube::RestClient> client_;
};

// Writes a kubeconfig for `server` with the CA and a client certificate/key (PEM files).
absl::Status WriteKubeconfig(const std::string& path, const std::string& server,
                             const std::string& ca_file, const std::string& cert_file,
                             const std::string& key_file);

}  // namespace ccm::peers
