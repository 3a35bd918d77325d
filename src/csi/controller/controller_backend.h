#pragma once
// What the Controller service runs on, per configured vCenter: the SOAP session, the VM inventory
// cache (node ID -> VM from memory, WaitForUpdatesEx-maintained), the CNS client; and the
// datastore inventory over all of them. Create() is the controller-mode wiring of the binary and
// of the tests, so both run the same code.
//
// Credentials: inline user/password or `secrets-directory` (the reference's controller mounts
// its csi-vsphere.conf Secret as a file). A Kubernetes Secret reference (secret-name /
// secret-namespace) needs a Secret informer, which this binary does not have yet: Create()
// refuses it with a message saying what to use instead.
// Thread-safe once started.

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "cloud/config/config.h"
#include "cloud/credentials/credential_store.h"
#include "cloud/vsphere/vcenter.h"
#include "common/metrics.h"
#include "csi/controller/controller_cloud.h"
#include "csi/controller/datastore_inventory.h"
#include "csi/controller/node_vms.h"
#include "csi/controller/operation_store.h"
#include "csi/controller/storage_policies.h"
#include "csi/controller/volume_infos.h"
#include "csi/core/topology.h"
#include "csi/migration/volume_migrations.h"
#include "kube/client.h"
#include "kube/event_recorder.h"
#include "vsphere/cns/cns_client.h"
#include "vsphere/pbm/pbm_client.h"

namespace ccm::csi {

// The reference's limits for several vCenters (its pkg/common/config validation): at most 5, and
// [Labels] topology-categories with more than one. Every mode that reads csi-vsphere.conf checks.
inline constexpr size_t kMaxVCenters = 5;
absl::Status CheckVCenterLimits(const cloud::Config& config);

struct BackendOptions {
  // The observer of one vCenter's SOAP and CNS round trips (metrics); optional.
  std::function<vsphere::RequestObserver(const std::string& vcenter)> observer_for;
  int max_wait_seconds = vsphere::kStreamMaxWaitSeconds;  // the VM caches' WaitForUpdatesEx
  // A vCenter answering nothing this long is "not answering" (cloud::VCenterOptions).
  absl::Duration vcenter_hang_timeout = cloud::kDefaultHangTimeout;
  // Overrides of the config's refresh interval and the post-change delay (tests, benchmark).
  absl::Duration datastore_interval = absl::ZeroDuration();  // zero: from the config
  absl::Duration datastore_change_delay = absl::Seconds(2);
  // The Kubernetes API (in-cluster or KUBECONFIG): the Node informer tells the node VMs, and the
  // CnsVolumeOperationRequests remember the CNS tasks started. Null: no node VM is known (so
  // CreateVolume needs topology requirements) and the tasks are remembered in memory only.
  std::shared_ptr<kube::Client> kube;
  std::string csi_namespace = "vmware-system-csi";  // CSI_NAMESPACE, the records' namespace
  // Every CNS operation (vsphere_cns_volume_ops_histogram); optional.
  vsphere::cns::CnsOperationObserver cns_observer;
  // The per-vCenter state's gauge and Events (vcenter_status.h); all optional.
  metrics::Registry* registry = nullptr;
  std::string pod_name;  // POD_NAME: the Pod the Events are about
  // Deletes ended CnsVolumeOperationRequests periodically. Off for read-only users (diagnose).
  bool clean_operations = true;
};

class ControllerBackend final : public ControllerCloud {
 public:
  static absl::StatusOr<std::unique_ptr<ControllerBackend>> Create(const cloud::Config& config,
                                                                   BackendOptions options = {});
  ~ControllerBackend();  // Stop()

  // Reads the credentials, starts the VM caches (they log in on their threads) and the datastore
  // inventory. Returns at once.
  absl::Status Start();
  void Stop();
  // Every vCenter usable: its session up, its VM cache synced and its datastores loaded; the
  // reasons in `why` (when not null). For tests and tools: Probe does not follow it (a vCenter
  // that is down affects its own volumes only; see vcenter_status.h).
  bool Ready(std::string* why = nullptr) const;
  // Per vCenter label: OK when usable, else why not.
  std::map<std::string, absl::Status> VCenterHealth() const;

  // ControllerCloud.
  const cloud::Config& config() const override { return config_; }
  const TopologyConfig& topology() const override { return topology_; }
  std::vector<VCenterEndpoint>& vcenters() override { return endpoints_; }
  PlacementView& datastores() override { return *datastores_; }
  NodeVmSource* nodes() override { return nodes_.get(); }
  PvCounter* pvs() override { return pvs_.get(); }
  OperationStore& operations() override { return *operations_; }
  VolumeMigrations* migrations() override { return migrations_.get(); }
  InTreeRegistrar* registrar() override { return registrar_.get(); }
  VolumeInfos* volume_infos() override { return volume_infos_.get(); }
  absl::StatusOr<std::map<std::string, std::vector<std::string>>> FilePublications() override;
  DatastoreInventory& inventory() { return *datastores_; }
  // Every vCenter call (CNS, SPBM, inventory, tags) ends by `deadline` from now on: for a
  // process that stops (issue 43).
  void SetVCenterDeadline(absl::Time deadline);
  // The vCenter credentials (a re-read csi-vsphere.conf rotates passwords through it).
  cloud::CredentialStore& credentials() { return *credentials_; }

 private:
  ControllerBackend() = default;
  cloud::Config config_;
  TopologyConfig topology_;
  std::unique_ptr<cloud::CredentialStore> credentials_;
  std::vector<std::unique_ptr<cloud::VCenter>> vcs_;
  std::vector<std::unique_ptr<vsphere::cns::CnsClient>> cns_;
  std::vector<std::unique_ptr<vsphere::pbm::PbmClient>> pbm_;
  std::vector<std::unique_ptr<StoragePolicies>> policies_;
  std::vector<std::unique_ptr<CachedVmDirectory>> vm_dirs_;
  std::vector<std::unique_ptr<FileServiceSource>> file_services_;
  std::shared_ptr<kube::Client> kube_;
  std::unique_ptr<NodeVms> nodes_;
  std::unique_ptr<DriverPvs> pvs_;
  std::unique_ptr<KubeVolumeMigrations> migrations_;
  // In-tree disks CNS lost are registered again (one vCenter, as CSI migration), with an Event.
  std::unique_ptr<kube::EventSink> event_sink_;
  std::unique_ptr<kube::EventRecorder> events_;
  std::unique_ptr<InTreeRegistrar> registrar_;
  void StartRegistrar();
  std::unique_ptr<KubeVolumeInfos> volume_infos_;  // several vCenters with an API only
  std::unique_ptr<OperationStore> operations_;
  // Deletes ended operation records older than cnsvolumeoperationrequest-cleanup-intervalinmin.
  void CleanOperations();
  absl::Notification stop_;
  std::thread cleaner_;
  std::vector<VCenterEndpoint> endpoints_;
  std::unique_ptr<DatastoreInventory> datastores_;
  bool clean_operations_ = true;
  bool started_ = false;
};

// The topology part of csi-vsphere.conf in core's form.
TopologyConfig TopologyOf(const cloud::Config& config);

}  // namespace ccm::csi
