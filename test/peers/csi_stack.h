#pragma once
// The CSI driver as a cluster runs it, on a real control plane: kube-apiserver and
// kube-controller-manager (KubeCluster), the vCenter simulator, the manifests of
// deploy/csi/kustomize/overlays/<overlay> applied to the server, our vsphere-csi-driver as
// controller, syncer and one node plugin per node VM, and the real sidecars with the
// manifest's own arguments. Every process talks to the server as the ServiceAccount its Pod
// would run as (a client certificate whose user is system:serviceaccount:<ns>:<name>), so the
// manifests' RBAC is what the real authorizer enforces.

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "csi/proto/csi.grpc.pb.h"
#include "fixtures/vcsim/vcsim_process.h"
#include "integration/child_process.h"
#include "kube/client.h"
#include "nlohmann/json.hpp"
#include "peers/kube_cluster.h"

namespace ccm::peers {

inline constexpr char kCsiNamespace[] = "vmware-system-csi";
inline constexpr char kDriver[] = "csi.vsphere.vmware.com";

// The args and env of container `container` of the Deployment or DaemonSet `workload` in the
// rendered kustomization at `kustomize_dir`, with $(VAR) references to the container's plain env
// values substituted.
struct ContainerSpec {
  std::vector<std::string> args;
  std::map<std::string, std::string> env;
};
absl::StatusOr<ContainerSpec> ManifestContainer(const std::string& kustomize_dir,
                                                const std::string& workload,
                                                const std::string& container);

struct CsiStackOptions {
  std::string spec;               // the vCenter simulator's spec (JSON)
  std::string overlay = "zones";  // deploy/csi/kustomize/overlays/<overlay>
  std::string conf_extra;         // appended to csi-vsphere.conf
  // Empty: no kube-controller-manager.
  std::vector<std::string> kcm_controllers = {"persistentvolume-binder",
                                              "persistentvolume-expander",
                                              "attachdetach",
                                              "pvc-protection",
                                              "pv-protection",
                                              "serviceaccount"};
  std::vector<std::string> kcm_flags;
  std::vector<std::string> apiserver_flags;
};

class CsiStack {
 public:
  // The server, kube-controller-manager, the simulator, the manifests, the controller and the
  // syncer (not the sidecars: StartSidecar).
  static absl::StatusOr<std::unique_ptr<CsiStack>> Start(const std::string& name,
                                                         CsiStackOptions options);
  ~CsiStack();

  KubeCluster& kube() { return *kube_; }
  kube::RestClient& client() { return kube_->client(); }
  ::ccm::testing::VcsimProcess& vcsim() { return *vcsim_; }
  const std::string& dir() const { return kube_->dir(); }
  const std::string& socket() const { return socket_; }
  ::csi::v1::Controller::Stub& controller() { return *controller_stub_; }
  integration::ChildProcess& controller_process() { return *processes_.at("controller"); }
  integration::ChildProcess& syncer_process() { return *processes_.at("syncer"); }
  std::string VmUuid(const std::string& vm) const;

  // A node as a kubelet with --cloud-provider=external and our CCM leave it (providerID,
  // addresses, zone labels), its node plugin (no csi-vsphere.conf, as the DaemonSet), and what
  // the kubelet writes once node-driver-registrar registered the plugin: the CSINode driver
  // entry from NodeGetInfo (node ID, topology keys, volume limit) and the topology labels.
  // `env`: more of the node plugin's environment (CSI_DEVICE_BY_ID_DIR, ...).
  absl::Status AddNode(const std::string& vm, const std::string& zone,
                       const std::vector<std::string>& env = {});
  // The Node and CSINode of AddNode without a node plugin (a benchmark's many nodes): the node ID
  // is the VM's BIOS UUID, as the plugin's NodeGetInfo says it, with no topology keys.
  absl::Status AddNodeObjects(const std::string& vm, int max_volumes);
  ::csi::v1::Node::Stub* node(const std::string& vm);
  std::string NodeSocket(const std::string& vm) const { return dir() + "/" + vm + ".sock"; }

  // A sidecar of the peers (`program`, e.g. "csi-provisioner-v5.2.0") with the args of the
  // manifest's container `container`, the socket, its leader-election namespace and `extra`
  // (a later flag wins over the manifest's). Runs as the controller's ServiceAccount.
  absl::StatusOr<integration::ChildProcess*> StartSidecar(const std::string& container,
                                                          const std::string& program,
                                                          const std::vector<std::string>& extra);
  // Another program of the peers as cluster admin (the snapshot-controller, ...).
  absl::StatusOr<integration::ChildProcess*> StartAdminProgram(
      const std::string& name, const std::string& program, const std::vector<std::string>& args);
  void Stop(const std::string& name);  // SIGTERM, then waits up to 10 s
  integration::ChildProcess* process(const std::string& name);

  // Everything the processes logged, for a failure message (the last `bytes` of each).
  std::string Logs(size_t bytes = 3000);

 private:
  CsiStack() = default;
  absl::Status ApplyManifests(const std::string& overlay);
  absl::Status WaitStarted();
  absl::Status WriteConf(const std::string& extra);
  absl::Status StartDriver(const std::string& name, const std::vector<std::string>& env);
  absl::StatusOr<std::string> ServiceAccountKubeconfig(const std::string& sa);

  std::unique_ptr<KubeCluster> kube_;
  std::unique_ptr<::ccm::testing::VcsimProcess> vcsim_;
  std::string overlay_dir_, conf_, socket_;
  std::map<std::string, std::string> sa_kubeconfigs_;
  std::map<std::string, std::unique_ptr<integration::ChildProcess>> processes_;
  std::unique_ptr<::csi::v1::Controller::Stub> controller_stub_;
  std::map<std::string, std::unique_ptr<::csi::v1::Node::Stub>> node_stubs_;
};

// Polls `resource` ns/name until `pred` holds on it (true) or `timeout` passes (false; *last
// keeps what was read last, for the message).
bool WaitObject(kube::Client& client, const kube::Resource& resource, const std::string& ns,
                const std::string& name, const std::function<bool(const nlohmann::json&)>& pred,
                absl::Duration timeout, nlohmann::json* last = nullptr);

// Resources the CSI tests read beyond kube/resource.h.
const kube::Resource& VolumeSnapshots();
const kube::Resource& VolumeSnapshotContents();
const kube::Resource& VolumeSnapshotClasses();
const kube::Resource& CsiDrivers();
const kube::Resource& CustomResourceDefinitions();

}  // namespace ccm::peers
