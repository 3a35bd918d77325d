#pragma once
// InTreeRegistrar: makes an in-tree VMDK a CNS volume, as the reference's migration service
// does, and keeps the mapping in a CnsVSphereVolumeMigration (volume_migrations.h), which is the
// memory across restarts.
//
//   Register(path): the saved mapping if there is one; else CnsCreateVolume with the disk's
//   backingDiskUrlPath (intree.h), tried in each datacenter until one has the disk; a disk CNS
//   has already (CnsAlreadyRegisteredFault, e.g. registered before a crash that lost the object)
//   gives its volume ID; then the mapping is saved.
//   Reregister(path, stale_id): CNS no longer knows the volume the mapping names (CNS restored or
//   reset, the volume unregistered by an admin) while the VMDK may still be on its datastore:
//   the disk is registered again (as Register does), the mapping saved under the new volume ID
//   and the stale one deleted, and one Warning Event (VolumeReregistered) on the PersistentVolume
//   (else on the new CnsVSphereVolumeMigration) says so. The disk gone too: NotFound naming the
//   path and the stale ID, the mapping kept (nothing known is thrown away on a guess).
//   Unregister(path): the PersistentVolume is gone and the disk was kept (reclaim policy
//   Retain): CNS forgets the volume (CnsDeleteVolume with deleteDisk=false, the disk stays) and
//   the mapping is deleted. The in-tree plugin (a rollback) uses the disk as before.
//
// Errors name the path. Thread-safe (the CNS and mapping seams are).

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "csi/migration/volume_migrations.h"
#include "kube/event_recorder.h"
#include "vsphere/cns/volume_manager.h"

namespace ccm::csi {

struct InTreeRegistrarOptions {
  std::string vcenter_host;  // the vCenter's address as in csi-vsphere.conf
  // The datacenter paths to look for the disk in (the config's, else every one).
  std::function<absl::StatusOr<std::vector<std::string>>()> datacenters;
  vsphere::cns::ContainerCluster cluster;  // the volume's container cluster
  // A storage policy's ID by name (vsphereVolume.storagePolicyName); null: names are refused.
  std::function<absl::StatusOr<std::string>(const std::string&)> policy_id_of;
  // Reregister's Event (null: none) and, when the caller does not know it, the PersistentVolume
  // of a VMDK path (null or NotFound: the Event goes on the CnsVSphereVolumeMigration object).
  kube::EventRecorder* events = nullptr;
  std::function<absl::StatusOr<kube::ObjectReference>(const std::string& volume_path)> pv_of;
};

class InTreeRegistrar {
 public:
  InTreeRegistrar(vsphere::cns::VolumeManager& cns, VolumeMigrations& migrations,
                  InTreeRegistrarOptions options);

  // The CNS volume ID of `volume_path`, registered under `name` (the PV's) the first time.
  absl::StatusOr<std::string> Register(const std::string& volume_path, const std::string& name,
                                       const std::string& storage_policy_name = "");
  // `pv`: the PersistentVolume when the caller knows it (its name names the CNS volume).
  absl::StatusOr<std::string> Reregister(const std::string& volume_path,
                                         const std::string& stale_id,
                                         std::optional<kube::ObjectReference> pv = std::nullopt,
                                         const std::string& storage_policy_name = "");
  absl::Status Unregister(const std::string& volume_path);

 private:
  absl::StatusOr<std::string> CreateInCns(const std::string& volume_path, const std::string& name,
                                          const std::string& storage_policy_name);

  vsphere::cns::VolumeManager& cns_;
  VolumeMigrations& migrations_;
  const InTreeRegistrarOptions options_;
};

}  // namespace ccm::csi
