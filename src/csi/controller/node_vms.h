#pragma once
// The VMs of the cluster's nodes, as the controller knows them, as the reference's node manager
// registers node VMs (issue 44): the node ID this driver's node plugin reported in the node's
// CSINode (a VM UUID; the CSINode informer keeps that only), else the Node's spec.providerID
// "vsphere://<BIOS UUID>" (the Node informer keeps name and providerID only). So a cluster
// without a vSphere CPI, or a Node the CPI has not initialised yet, still has its VM known.
// CreateVolume without topology requirements places a volume on a datastore the hosts of all
// these VMs mount.
// Thread-safe.

#include <map>
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
  // The volume handle of a PV of a file volume ("file:..."); "" for any other PV or none.
  std::string FileHandleOf(const std::string& pv_name) const;

 private:
  std::unique_ptr<kube::Informer> informer_;
};

// File volume handle -> the Nodes whose VolumeAttachments of this driver say it is attached
// there (one LIST of VolumeAttachments; PVs from `pvs`).
absl::StatusOr<std::map<std::string, std::vector<std::string>>> AttachedFileVolumes(
    kube::Client& client, const DriverPvs& pvs);

class NodeVms final : public NodeVmSource {
 public:
  // `client` must outlive the NodeVms.
  explicit NodeVms(kube::Client& client);
  void Start();
  void Stop();

  // CSINode node IDs first, providerIDs second. Unavailable before both informers have synced.
  absl::StatusOr<std::vector<NodeVmRef>> List() const override;
  std::vector<std::string> unknown() const override;
  std::optional<int64_t> VolumeLimit(const std::string& node_id) const override;

 private:
  // Node name -> VM UUID, CSINodes first.
  std::map<std::string, std::string> Known() const;

  std::unique_ptr<kube::Informer> informer_;
  std::unique_ptr<kube::Informer> csinodes_;
};

}  // namespace ccm::csi
