#pragma once
// A Controller service over the real gRPC unix socket, on the vCenter simulator with its CNS:
// the ControllerBackend wiring the binary uses, a CsiServer with Identity + Controller, and a
// client stub. Zones: cluster zone-a (2 hosts) and zone-b (1 host) tagged with k8s-zone,
// region-1 on the datacenter; ds-a mounted on zone-a only, ds-b on zone-b only, the small
// default datastore1 (the simulator lists only the last host made, zone-b's, as mounting it).

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "cloud/config/config.h"
#include "csi/controller/controller_backend.h"
#include "csi/proto/csi.grpc.pb.h"
#include "csi/server/csi_server.h"
#include "csi/server/test_socket.h"
#include "fixtures/vcsim/vcsim_process.h"

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
  ~ControllerEnv();

  ccm::testing::VcsimProcess& sim() { return *sim_; }
  ControllerBackend& backend() { return *backend_; }
  ::csi::v1::Controller::Stub& controller() { return *controller_; }
  ::csi::v1::Identity::Stub& identity() { return *identity_; }
  const cloud::Config& config() const { return config_; }

  // The BIOS UUID of a simulator VM by name ("" when none).
  std::string VmUuid(const std::string& name) const;
  std::string VmMoid(const std::string& name) const;
  // The CNS volume of a CSI volume ID, from the simulator's debug API.
  absl::StatusOr<ccm::testing::VcsimCnsVolume> CnsVolume(const std::string& volume_id);
  // The simulator's datastore MOID by name (from the inventory's candidates).
  std::string DatastoreMoid(const std::string& name);

 private:
  ControllerEnv() = default;
  std::unique_ptr<ccm::testing::VcsimProcess> sim_;
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
