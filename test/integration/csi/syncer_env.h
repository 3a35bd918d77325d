#pragma once
// Test environment of the CNS metadata syncer: the simulator (vCenter with CNS), a CnsClient on
// it, the API emulator with a RestClient and PV/PVC/Pod informers, and the syncer under test on a
// FakeClock (its full-sync period and retry backoff move only when the test advances it).

#include <atomic>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "csi/migration/registrar.h"
#include "csi/migration/volume_migrations.h"
#include "csi/syncer/metadata_syncer.h"
#include "fixtures/kube_emulator/kube_emulator.h"
#include "fixtures/vcsim/vcsim_process.h"
#include "kube/client.h"
#include "kube/informer.h"
#include "testing/fake_clock.h"
#include "testing/gated_volume_manager.h"
#include "testing/static_credentials.h"
#include "vsphere/client.h"
#include "vsphere/cns/cns_client.h"

namespace ccm::csi::syncer::testing {

inline constexpr char kClusterId[] = "cluster-1";
inline constexpr absl::Duration kPeriod = absl::Minutes(30);

// "verb resource" pairs the manifest grants the controller Pod's ServiceAccount (its ClusterRole
// and its Roles), for the tests that check every API call of the binary against them.
std::set<std::string> ControllerGrants();

class SyncerEnv {
 public:
  SyncerEnv();
  ~SyncerEnv();
  // Starts both fixtures, the informers and (unless told not to) the syncer, whose first full
  // sync runs at once. With `two_vcenters`, a second simulator too: the syncer gets it as vCenter
  // kSecondVCenter and keeps the CnsVolumeInfo records (the CRD installed in the emulator).
  absl::Status Start(bool start_syncer = true, bool two_vcenters = false);
  static constexpr char kSecondVCenter[] = "vc-2";
  // A 1 GiB volume of our cluster on the second simulator's ds1.
  absl::StatusOr<std::string> CreateVolumeInSecond(const std::string& name);
  // The CnsVolumeInfo records in vmware-system-csi: volume ID -> vCenterServer.
  std::map<std::string, std::string> VolumeInfos();
  // Stops the syncer only (the fixtures stay): a second Start() builds a new one.
  void StopSyncer();
  // Waits first until the informers hold what the emulator holds (a first full sync must see
  // the objects a test wrote just before).
  absl::Status StartSyncer();
  absl::Status StartSecondVCenter();

  // A CNS volume (1 GiB) of `cluster_id` ("" = none, as a disk registered by hand), on ds1
  // (VMFS) or, with `vsan`, on vsan1; with `file`, a file volume (vSAN file share) on vsan1.
  absl::StatusOr<std::string> CreateVolume(const std::string& name,
                                           const std::string& cluster_id = kClusterId,
                                           bool vsan = false, bool file = false);
  // The feature state pv-to-backingdiskobjectid-mapping as the syncer sees it.
  std::atomic<bool> map_backing_objects{false};
  // The volume's entity metadata, as CNS answers a query for it.
  std::vector<vsphere::cns::EntityMetadata> Entities(const std::string& volume_id);
  absl::StatusOr<vsphere::cns::Volume> Volume(const std::string& volume_id);
  // Whether CNS has an entity of this type and name (namespace "" for PVs) of our cluster.
  bool HasEntity(const std::string& volume_id, const std::string& type, const std::string& name,
                 const std::string& ns = "");

  // Objects written straight into the emulator (as the provisioner, scheduler and kubelet would).
  absl::Status PutPv(const std::string& name, const std::string& handle,
                     const std::string& claim_ns = "", const std::string& claim = "",
                     const std::string& driver = "csi.vsphere.vmware.com");
  absl::Status PutPvc(const std::string& ns, const std::string& name, const std::string& volume,
                      const nlohmann::json& labels = nlohmann::json::object());
  absl::Status PutPod(const std::string& ns, const std::string& name, const std::string& claim,
                      const std::string& phase = "Running");
  // An in-tree vSphere PV of `volume_path`: static, or (`migrated`) provisioned by the in-tree
  // plugin and marked migrated-to csi.vsphere.vmware.com by kube-controller-manager.
  absl::Status PutInTreePv(const std::string& name, const std::string& volume_path,
                           const std::string& claim_ns, const std::string& claim, bool migrated);
  // The CnsVSphereVolumeMigration named `volume_id` in the emulator.
  absl::StatusOr<nlohmann::json> Migration(const std::string& volume_id);
  absl::Status SetLabels(const std::string& resource, const std::string& ns,
                         const std::string& name, const nlohmann::json& labels);

  // Writes the binary's csi-vsphere.conf for this simulator at `path`: [Global] cluster-id
  // `cluster_id` (none when ""), the vCenter with its port, user, CA file and datacenter dc1.
  // `extra`: appended as it is (another section, a key of the vCenter's).
  void WriteCsiConf(const std::string& path, const std::string& cluster_id = kClusterId,
                    const std::string& password = "secret", const std::string& extra = "");

  // Advances the clock by the full-sync period and waits until one more full sync has ended.
  bool RunFullSync();

  ccm::testing::VcsimProcess& vcsim() { return *vcsim_; }
  ccm::testing::KubeEmulator& emu() { return emu_; }
  KubeVolumeMigrations& migrations() { return *migrations_; }
  vsphere::cns::CnsClient& cns() { return *cns_; }
  // What the syncer's CNS calls (of the first vCenter) go through: can hold a task's answer.
  ccm::testing::GatedVolumeManager& gate() { return *gated_; }
  kube::EventRecorder& events() { return *events_; }
  MetadataSyncer& syncer() { return *syncer_; }
  ccm::FakeClock& clock() { return clock_; }
  metrics::Registry& registry() { return *registry_; }
  const std::string& vcenter() const { return vcenter_; }
  const std::string& dir() const { return dir_; }
  std::string kubeconfig() const { return dir_ + "/kubeconfig"; }

 private:
  std::string dir_;
  std::unique_ptr<ccm::testing::VcsimProcess> vcsim_;
  vsphere::StaticCredentialSource creds_{vsphere::Credentials{"admin", Secret("secret")}};
  std::unique_ptr<vsphere::Client> vim_;
  std::unique_ptr<vsphere::cns::CnsClient> cns_;
  std::unique_ptr<ccm::testing::GatedVolumeManager> gated_;
  std::string vcenter_;
  vsphere::Moref datastore_, vsan_datastore_;
  ccm::testing::KubeEmulator emu_;
  std::unique_ptr<kube::RestClient> rest_;
  std::unique_ptr<kube::SharedInformerFactory> factory_;
  kube::Informer* pvs_ = nullptr;
  kube::Informer* pvcs_ = nullptr;
  kube::Informer* pods_ = nullptr;
  ccm::FakeClock clock_;
  std::unique_ptr<metrics::Registry> registry_;
  std::unique_ptr<KubeVolumeMigrations> migrations_;
  std::unique_ptr<kube::EventSink> event_sink_;  // the registrar's Events, to the emulator
  std::unique_ptr<kube::EventRecorder> events_;
  std::unique_ptr<InTreeRegistrar> registrar_;
  std::unique_ptr<MetadataSyncer> syncer_;
  // The second vCenter (two_vcenters).
  std::unique_ptr<ccm::testing::VcsimProcess> vcsim2_;
  std::unique_ptr<vsphere::Client> vim2_;
  std::unique_ptr<vsphere::cns::CnsClient> cns2_;
  vsphere::Moref datastore2_;
  std::unique_ptr<KubeVolumeInfoStore> volume_infos_;
};

}  // namespace ccm::csi::syncer::testing
