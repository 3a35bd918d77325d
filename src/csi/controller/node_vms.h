#pragma once
// The VMs of the cluster's nodes, as the controller knows them: a Node informer (name and
// spec.providerID only are kept), each providerID "vsphere://<BIOS UUID>" naming a node VM, as
// the reference's node manager registers node VMs. CreateVolume without topology requirements
// places a volume on a datastore the hosts of all these VMs mount.
// Thread-safe.

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "csi/controller/controller_cloud.h"
#include "kube/client.h"
#include "kube/informer.h"

namespace ccm::csi {

// The cluster's PersistentVolumes of this driver, counted for ListVolumes' sanity check (the
// reference's list-volume-threshold: more PVs than CNS volumes by more than the threshold means
// the two are out of sync). Only spec.csi.driver is kept per PV.
class DriverPvs final : public PvCounter {
 public:
  explicit DriverPvs(kube::Client& client);
  void Start();
  void Stop();
  // Unavailable before the informer has synced.
  absl::StatusOr<size_t> Count() const override;

 private:
  std::unique_ptr<kube::Informer> informer_;
};

class NodeVms final : public NodeVmSource {
 public:
  // `client` must outlive the NodeVms.
  explicit NodeVms(kube::Client& client);
  void Start();
  void Stop();

  // Every Node with a vSphere providerID. Unavailable before the informer has synced. Nodes
  // without a providerID (not initialised by a vSphere CPI yet) are left out.
  absl::StatusOr<std::vector<NodeVmRef>> List() const override;
  // How many Nodes have no (vSphere) providerID, for messages.
  size_t without_provider_id() const override;

 private:
  std::unique_ptr<kube::Informer> informer_;
};

}  // namespace ccm::csi
