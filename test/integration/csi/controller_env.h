#pragma once
// A Controller service over the real gRPC unix socket, on the vCenter simulator with its CNS:
// the ControllerBackend wiring the binary uses, a CsiServer with Identity + Controller, and a
// client stub. The API emulator holds a Node per simulator VM (name = VM name, providerID
// vsphere://<BIOS UUID>, as the CPI sets it): the controller's node VMs. Zones: cluster zone-a (2
// hosts) and zone-b (1 host) tagged with k8s-zone, region-1 on the datacenter; ds-a mounted on
// zone-a only, ds-b on zone-b only, ds-shared (the smallest) on every host, the small default
// datastore1 (the simulator lists only the last host made, zone-b's, as mounting it).
//
// Several vCenters (StartMulti): one simulator per spec, configured as vCenters "vc1", "vc2", ...
// in spec order. They share the server address 127.0.0.1 and differ by port: the config keys
// vCenters by server:port, the CSI controller by label (qualified volume IDs name the label), but
// credentials are looked up by server alone (cloud::CredentialStore), so every spec must accept
// the same user, csi-user / csi-pass.

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "cloud/config/config.h"
#include "common/metrics.h"
#include "csi/controller/controller_backend.h"
#include "csi/proto/csi.grpc.pb.h"
#include "csi/server/csi_server.h"
#include "fixtures/kube_emulator/kube_emulator.h"
#include "fixtures/vcsim/vcsim_process.h"
#include "kube/client.h"
#include "testing/csi_socket.h"

namespace ccm::csi::testing {

inline constexpr char kZoneKey[] = "failure-domain.beta.kubernetes.io/zone";
inline constexpr char kRegionKey[] = "failure-domain.beta.kubernetes.io/region";

// The simulator spec above: node-a1, node-a2 in zone-a, node-b1 in zone-b.
std::string ZonesSpec();

class ControllerEnv {
 public:
  // Starts the simulator (from `spec`), the backend and the server; waits until ready.
  // `change_delay`: the datastore inventory's refresh delay after a change (short for tests).
  static absl::StatusOr<std::unique_ptr<ControllerEnv>> Start(
      const std::string& spec, absl::Duration change_delay = absl::Milliseconds(200));
  // One simulator per spec, as vCenters "vc1", "vc2", ...; `configure` (optional) may change the
  // config (e.g. [Global] query-limit) before the plugin starts.
  static absl::StatusOr<std::unique_ptr<ControllerEnv>> StartMulti(
      const std::vector<std::string>& specs, absl::Duration change_delay = absl::Milliseconds(200),
      const std::function<void(cloud::Config&)>& configure = nullptr);
  // Options for Start/StartMulti's wiring (e.g. which VMs are Nodes).
  struct Options {
    absl::Duration change_delay = absl::Milliseconds(200);
    std::function<void(cloud::Config&)> configure;
    // Simulator VMs that are not Kubernetes nodes (no Node object).
    std::vector<std::string> not_nodes;
    // The refresh interval of the datastores, policies and file services (zero: the config's).
    absl::Duration datastore_interval = absl::ZeroDuration();
  };
  static absl::StatusOr<std::unique_ptr<ControllerEnv>> StartWith(
      const std::vector<std::string>& specs, const Options& options);
  ~ControllerEnv();

  // The simulator of vCenter "vc<i+1>".
  ccm::testing::VcsimProcess& sim(size_t i = 0) { return *sims_.at(i); }
  size_t sim_count() const { return sims_.size(); }
  ControllerBackend& backend() { return *backend_; }
  ::csi::v1::Controller::Stub& controller() { return *controller_; }
  ::csi::v1::Identity::Stub& identity() { return *identity_; }
  const cloud::Config& config() const { return config_; }

  // The BIOS UUID of a simulator VM by name ("" when none), from every simulator.
  std::string VmUuid(const std::string& name) const;
  std::string VmMoid(const std::string& name) const;
  // The CNS volume of a CSI volume ID, from the debug API of the simulator of the vCenter the ID
  // names (of every simulator for a bare ID).
  absl::StatusOr<ccm::testing::VcsimCnsVolume> CnsVolume(const std::string& volume_id);
  // The simulator's datastore MOID by name (from the inventory's candidates).
  std::string DatastoreMoid(const std::string& name);
  // The datastore's URL by name ("" when unknown).
  std::string DatastoreUrl(const std::string& name);
  // The API emulator the controller's Node informer reads.
  ccm::testing::KubeEmulator& api() { return api_; }
  // The metrics of the server (RPCs) and the backend (CNS operations, vCenter state).
  metrics::Registry& registry() { return registry_; }
  // A Node for the simulator VM `vm` (providerID from its BIOS UUID).
  absl::Status PutNode(const std::string& vm);
  // A Node named `name` without providerID (no vSphere CPI initialised it).
  absl::Status PutBareNode(const std::string& name);
  // The CSINode the node plugin on `vm` registers: this driver's node ID is the VM's UUID.
  absl::Status PutCsiNode(const std::string& vm);

 private:
  ControllerEnv() = default;
  std::vector<std::unique_ptr<ccm::testing::VcsimProcess>> sims_;
  ccm::testing::KubeEmulator api_;
  metrics::Registry registry_;
  cloud::Config config_;
  std::shared_ptr<ControllerBackend> backend_;
  TempDir dir_;
  std::unique_ptr<CsiServer> server_;
  std::unique_ptr<::csi::v1::Controller::Stub> controller_;
  std::unique_ptr<::csi::v1::Identity::Stub> identity_;
};

// Requests with the common fields set.
::csi::v1::VolumeCapability MountCap(const std::string& fs = "ext4");
::csi::v1::VolumeCapability BlockCap();
::csi::v1::CreateVolumeRequest CreateReq(const std::string& name, int64_t required_bytes);

}  // namespace ccm::csi::testing
