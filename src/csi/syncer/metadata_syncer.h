#pragma once
// The CNS metadata syncer: keeps what vCenter's Cloud Native Storage says about each volume of
// this cluster (which PV, PVC and Pods own it, their labels, the cluster-id) equal to what
// Kubernetes says, as the reference's vsphere-syncer does for vanilla clusters.
//
//   PV / PVC / Pod informer events -> the volume handle of the PV concerned -> work queue ->
//   SyncVolume(handle): read the volume from CNS, compare its entities of our cluster-id with
//   DesiredEntities (entities.h), send one CnsUpdateVolumeMetadata with the differences
//   (removals included), or nothing when they agree.
//
// A full sync runs at start and every `full_sync_period` (the reference's
// FULL_SYNC_INTERVAL_MINUTES): it queries every CNS volume of our cluster-id (paged) and queues
// each PV whose metadata drifted or whose volume CNS does not list under our cluster-id. The first
// one, before the workers start, writes the drifted volumes itself, 100 per batch (one
// CnsQueryVolume of their metadata, one CnsUpdateVolumeMetadata for all): a first start with
// 10,000 volumes to describe costs some 200 CNS calls instead of 20,000. What a batch cannot
// settle goes to the queue. A PV
// whose volume handle names a First Class Disk CNS does not know at all (a statically
// provisioned volume) has the disk registered with CNS (CnsCreateVolume with backingDiskId, the
// PV's name and metadata), once: a disk registered meanwhile (CnsAlreadyRegisteredFault) is fine. A
// CNS volume of our cluster-id that no PV names in two consecutive full syncs is an orphan: logged
// once, counted in vsphere_cns_volume_pv_missing{vc}, and its entities of our cluster (a deleted
// PV's, PVC's, Pods') are removed. It is never deleted: the reference unregisters such volumes from
// CNS; deciding that a disk is garbage is left to a person. Two passes, because a volume exists in
// CNS for a moment before the external-provisioner creates its PV.
//
// In-tree volumes (CSI migration, csi/migration): with an InTreeRegistrar (one vCenter only, as
// the reference), the PVs of the in-tree vSphere plugin that are static or marked migrated-to
// csi.vsphere.vmware.com are ours too. Their VMDK path is their key: SyncVolume(path) registers
// the disk with CNS (once; the CnsVSphereVolumeMigration is the memory) and then syncs the
// metadata of the CNS volume like any other. When such a PV is gone with its disk kept
// (reclaim policy Retain), CNS forgets the volume (the disk stays) and the object is deleted.
// A VMDK written inline in a Pod (spec.volumes[].vsphereVolume, no PV) is registered as well,
// named after the disk, and stays registered after its Pods end (a detach may still need it).
//
// Errors: a failed sync is retried through the queue's per-item backoff; a failed full sync is
// counted and tried again at the next period. Nothing is dropped: a PV whose CNS volume is not
// found (NotFound from every vCenter that was asked) is counted in
// vsphere_syncer_pv_volume_not_found and looked at again by every full sync.
//
// Leader election is the caller's: run one syncer per cluster (see app/csi_syncer.h).
// Thread-safe.

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "common/metrics.h"
#include "csi/core/volume_id.h"
#include "csi/migration/registrar.h"
#include "csi/syncer/entities.h"
#include "csi/syncer/volume_info_upkeep.h"
#include "kube/controller_runner.h"
#include "kube/informer.h"
#include "kube/rate_limiter.h"
#include "kube/work_queue.h"
#include "vsphere/cns/volume_manager.h"

namespace ccm::csi::syncer {

// One vCenter's CNS.
// The CNS id of a volume handle ("" when it does not parse).
std::string CnsIdOf(const std::string& handle);
// Whether a PV is Released, Failed or being deleted (its volume going or gone).
bool PvReleasing(const nlohmann::json& pv);

struct CnsTarget {
  std::string vcenter;  // the config's label; qualified volume IDs name it
  vsphere::cns::VolumeManager* cns = nullptr;
  std::string vsphere_user;  // the CNS container cluster's user
};

struct MetadataSyncerOptions {
  std::string cluster_id;            // csi-vsphere.conf [Global] cluster-id (required)
  std::string cluster_distribution;  // [Global] cluster-distribution (optional)
  absl::Duration full_sync_period = absl::Minutes(30);
  int workers = 1;
  int query_page = 1000;                            // CNS answers at most 1000 volumes per page
  Clock* clock = nullptr;                           // null: the real clock
  std::unique_ptr<kube::RateLimiter> rate_limiter;  // null: the default controller limiter
  kube::WorkQueueMetricsProvider* queue_metrics = nullptr;
  metrics::Registry* registry = nullptr;  // null: a private one
  // In-tree volumes: all three or none (then in-tree PVs are not looked at).
  VolumeMigrations* migrations = nullptr;
  kube::Informer* migrations_informer = nullptr;  // started by the caller
  InTreeRegistrar* registrar = nullptr;
  // The feature state pv-to-backingdiskobjectid-mapping (asked at each full sync; null: off) and
  // the client that annotates PVCs with it.
  std::function<bool()> map_backing_objects;
  kube::Client* pvc_writer = nullptr;
  // Several vCenters: the CnsVolumeInfo records each full sync keeps (volume_info_upkeep.h) and
  // a PV's deletion removes; null: none kept.
  VolumeInfoStore* volume_infos = nullptr;
};

// Counters for tests and logs (the metrics carry the same).
struct SyncerStats {
  int64_t full_syncs = 0;
  int64_t full_sync_failures = 0;
  int64_t metadata_updates = 0;      // CnsUpdateVolumeMetadata calls that succeeded
  int64_t registered = 0;            // static PVs' disks registered with CNS
  int64_t in_tree_registered = 0;    // in-tree volumes registered (or found registered)
  int64_t in_tree_reregistered = 0;  // in-tree disks registered again: CNS had lost their volume
  int64_t unchanged_skips = 0;  // volumes synced with no CNS call: CNS known to hold the entities
  // Volumes synced with no CNS call because the provisioner's DeleteVolume removes them: the PV
  // is Released (or being deleted) with reclaim policy Delete, or was deleted in that state.
  int64_t left_to_controller = 0;
  std::set<std::string> orphans;             // CNS volume ids without a PV (confirmed)
  std::set<std::string> pvs_without_volume;  // volume handles CNS does not know
  int64_t volume_infos_created = 0;          // CnsVolumeInfo records made by full syncs
  int64_t volume_infos_removed = 0;          // and deleted (PV gone, wrong vCenter)
  int64_t lookups = 0;                       // volumes the workers asked CNS about
  int64_t lookup_queries = 0;                // the CnsQueryVolume calls that asked
  int queued = 0;                            // volumes waiting in the work queue
};

class MetadataSyncer {
 public:
  // The informers are the caller's (started by it, PVs cluster-wide, PVCs and Pods in all
  // namespaces); `targets` has one entry per configured vCenter, in config order.
  MetadataSyncer(kube::Informer& pvs, kube::Informer& pvcs, kube::Informer& pods,
                 std::vector<CnsTarget> targets, MetadataSyncerOptions options);
  ~MetadataSyncer();  // Stop()
  MetadataSyncer(const MetadataSyncer&) = delete;
  MetadataSyncer& operator=(const MetadataSyncer&) = delete;

  // Returns at once: waits for the informers, then runs the first full sync and the workers.
  void Start();
  void Stop();

  // One volume (a PV's volume handle, or an orphan's id). OK when CNS agrees afterwards or the
  // volume is not in CNS; an error when CNS could not be asked or refused the update.
  absl::Status SyncVolume(const std::string& handle);
  // SyncVolume of each; the volumes CNS must be asked about are asked in one CnsQueryVolume per
  // vCenter (kMetadataBatch at most). One status per handle, in their order.
  std::vector<absl::Status> SyncVolumes(const std::vector<std::string>& handles);
  // One full sync pass (see above). With `write_in_batches` (the first pass, before the workers
  // start), volumes CNS lists but describes differently are written kMetadataBatch at a time,
  // with one query and one CnsUpdateVolumeMetadata per batch, instead of being queued.
  absl::Status FullSync(bool write_in_batches = false);
  // A full sync on demand (the TriggerCsiFullSync resource): waits for a pass under way to end,
  // then runs one, counted in vsphere_full_sync_ops_histogram like the periodic ones.
  absl::Status FullSyncNow() ABSL_LOCKS_EXCLUDED(pass_mu_);

  SyncerStats stats() const;

 private:
  struct Found {
    const CnsTarget* target = nullptr;
    vsphere::cns::Volume volume;
  };
  // A CNS volume as the full sync keeps it: ~100 bytes instead of the whole volume.
  struct Listed {
    const CnsTarget* target = nullptr;
    std::string name;
    bool our_cluster = false;       // container cluster is ours
    bool has_our_entities = false;  // HasEntitiesOf(metadata, cluster_id)
    uint64_t own_digest = 0;        // OwnEntitiesDigest(entities, cluster_id)
    bool labelled_missing = false;  // already says what PvMissingEntities would
    std::string backing_object_id;  // its vSAN / vVol object ("" elsewhere)
  };
  struct Pending {  // a volume for the first full sync to write
    std::string handle;
    std::string cns_id;
  };
  static constexpr size_t kMetadataBatch = 100;
  struct Desired {
    bool has_pv = false;  // a PV of ours names the volume
    // Its PV is Released, Failed or being deleted: the volume is going (the provisioner's
    // DeleteVolume); a volume CNS does not know is then neither registered nor reported.
    bool releasing = false;
    // Released or being deleted, with reclaim policy Delete: the volume is the provisioner's
    // to delete, and CNS is not asked about it (as the reference's syncer leaves it).
    bool left_to_controller = false;
    std::string pv_name;
    std::vector<cns::EntityMetadata> entities;
  };
  // A PV of ours names a disk CNS does not know: registers it (CnsCreateVolume with
  // backingDiskId, as the reference does for a statically provisioned PV) in the vCenter that
  // has the disk. NotFound when no vCenter has such a disk.
  absl::Status Register(const std::string& handle, const Desired& want);
  // SyncVolume's end when CNS does not know the volume (registered when its PV wants it).
  absl::Status NotInCns(const std::string& handle, const Desired& want);
  // In-tree volumes (intree_sync.cc). A PV of ours: a CSI PV of this driver, or an in-tree PV
  // to register; its key (the CSI volume handle, or the VMDK path) and its CNS volume ID ("" for
  // an in-tree volume not registered yet).
  bool Ours(const Json& pv) const;
  std::string HandleOf(const Json& pv) const;
  std::string CnsIdOfPv(const Json& pv) const;
  absl::Status SyncInTree(const std::string& volume_path);
  // After SyncInTree's sync of `id`: CNS did not know the volume and could not take its disk
  // back by ID, so the VMDK is registered again by its path (registrar.h), and synced.
  absl::Status ReregisterInTree(const std::string& volume_path, const std::string& id,
                                const Json& pv);
  absl::Status RegisterInline(const std::string& volume_path);
  // Keeps which Pods use which inline in-tree volumes; the paths a new or changed Pod uses.
  std::vector<std::string> NoteInlineVolumes(const Json* old_pod, const Json* new_pod)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The inline in-tree volumes seen since the start, each with whether a Pod uses it now.
  std::vector<std::pair<std::string, bool>> InlinePaths() const ABSL_LOCKS_EXCLUDED(mu_);
  // Remembers that CNS holds `want`'s entities for `cns_id` (when it has a PV), unless a full
  // sync began comparing since `epoch` (confirm_epoch_ when the CNS answer was asked for).
  void Confirm(const std::string& cns_id, const Desired& want, uint64_t digest, uint64_t epoch)
      ABSL_LOCKS_EXCLUDED(mu_);
  uint64_t ConfirmEpoch() const ABSL_LOCKS_EXCLUDED(mu_);

  void OnPv(const Json* old_pv, const Json* new_pv);
  void OnPvc(const Json& pvc);
  void OnPod(const Json* old_pod, const Json* new_pod);
  void EnqueueClaim(const std::string& claim_key);
  bool ProcessNextItem();
  absl::Status RunFullSync(bool write_in_batches) ABSL_LOCKS_EXCLUDED(pass_mu_);
  // With map_backing_objects on: each bound PV's PVC gets kBackingObjectAnnotation from the
  // listing the full sync already made (no CNS call of its own). Returns the PVCs written.
  int MapBackingObjects(const std::map<std::string, Listed>& in_cns);
  absl::Mutex pass_mu_ ABSL_ACQUIRED_BEFORE(mu_);  // one full sync at a time
  // The full sync's steps (full_sync.cc).
  absl::Status ListOurVolumes(std::map<std::string, Listed>& in_cns);
  // `located`: bare volume handle of a PV -> the vCenter whose CNS lists it.
  int CheckPvs(const std::map<std::string, Listed>& in_cns, bool write_in_batches,
               std::set<std::string>& named, std::map<std::string, std::string>& located,
               std::map<const CnsTarget*, std::vector<Pending>>& to_write);
  // The CnsVolumeInfo records after a full sync's listing (when volume_infos is set).
  void KeepVolumeInfos(const std::map<std::string, std::string>& located,
                       const std::set<std::string>& named);
  // A PV of a bare volume handle gone, or a static one registered: its record follows.
  void ForgetVolumeInfo(const std::string& handle);
  void RecordVolumeInfo(const std::string& handle, const std::string& vcenter);
  std::vector<std::string> NoteOrphans(const std::map<std::string, Listed>& in_cns,
                                       const std::set<std::string>& named);
  void WriteBatch(const CnsTarget& t, const std::vector<Pending>& batch);
  // The update that makes CNS describe `volume` as `want`; nullopt when it already does.
  std::optional<vsphere::cns::MetadataUpdate> UpdateFor(const CnsTarget& t,
                                                        const vsphere::cns::Volume& volume,
                                                        const Desired& want) const;

  // What Kubernetes says about the volume with this CNS id.
  Desired DesiredFor(const std::string& cns_id) const;
  Desired DesiredForPv(const Json& pv) const;
  // A volume SyncVolumes must ask CNS about, with what Kubernetes says of it.
  struct ToLookUp {
    std::string handle;
    Desired want;
    uint64_t digest = 0;
    uint64_t epoch = 0;
  };
  // SyncVolume's first half: nullopt when CNS need not be asked (already confirmed, left to
  // the provisioner, nothing CNS could know).
  std::optional<ToLookUp> Prepare(const std::string& handle) ABSL_LOCKS_EXCLUDED(mu_);
  // A volume's entities to write (SyncVolumes writes those of one vCenter in one call).
  struct Write {
    size_t at = 0;  // its index in SyncVolumes' handles
    const ToLookUp* v = nullptr;
    const CnsTarget* target = nullptr;
    vsphere::cns::MetadataUpdate update;
  };
  // Its second half, with the look-up's answer: done (its status), or its write added to
  // `writes` (OK until written).
  absl::Status Finish(const ToLookUp& v, const absl::StatusOr<Found>& found, size_t at,
                      std::vector<Write>& writes);
  // The writes, each vCenter's in one CnsUpdateVolumeMetadata (one by one when that call
  // fails as a whole); each volume's outcome into `results`.
  void WriteAll(const std::vector<Write>& writes, std::vector<absl::Status>& results);
  // One CnsUpdateVolumeMetadata for all of `updates` (one vCenter's): each volume's outcome, or
  // nullopt (logged) when the call failed as a whole or left answers out.
  std::optional<std::vector<absl::Status>> WriteTogether(
      const CnsTarget& t, const std::vector<vsphere::cns::MetadataUpdate>& updates)
      ABSL_LOCKS_EXCLUDED(mu_);
  absl::Status Written(const Write& w, const absl::Status& s);
  // Each volume from the vCenter(s) its handle may live in (NotFound when none has it): one
  // CnsQueryVolume per vCenter for all of them.
  std::vector<absl::StatusOr<Found>> LookupAll(const std::vector<std::string>& handles)
      ABSL_LOCKS_EXCLUDED(mu_);
  // One volume's look-up under way: the vCenters to ask, their answers, where it was found.
  struct LookupState {
    std::vector<std::string> ask;
    std::vector<VCenterAnswer> answers;
    std::map<std::string, Found> found;
    bool failed = false;  // its handle named no vCenter to ask
    bool asks(const std::string& vcenter) const {
      return std::find(ask.begin(), ask.end(), vcenter) != ask.end();
    }
  };
  // LookupAll's queries to `t` for the volumes (`ids`, one per state) that ask it; returns how
  // many were sent.
  int64_t AskTarget(const CnsTarget& t, const std::vector<std::string>& ids,
                    std::vector<LookupState>& state);
  vsphere::cns::ContainerCluster ClusterFor(const CnsTarget& t) const;
  std::string KeyFor(const std::string& cns_id, const CnsTarget& t) const;
  void SetGauges() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  kube::Informer& pvs_;
  kube::Informer& pvcs_;
  kube::Informer& pods_;
  const std::vector<CnsTarget> targets_;
  const std::string cluster_id_;
  const std::string cluster_distribution_;
  const absl::Duration full_sync_period_;
  const int workers_;
  const int query_page_;
  VolumeMigrations* const migrations_;
  kube::Informer* const migrations_informer_;
  InTreeRegistrar* const registrar_;
  const std::function<bool()> map_backing_objects_;
  kube::Client* const pvc_writer_;
  VolumeInfoStore* const volume_infos_;
  Clock& clock_;
  std::unique_ptr<metrics::Registry> own_registry_;
  metrics::Registry& registry_;
  metrics::Family* full_sync_hist_;
  metrics::Family* pv_missing_;    // vsphere_cns_volume_pv_missing{vc}
  metrics::Family* pv_retained_;   // vsphere_cns_volume_pv_retained{vc}: 0 (vanilla)
  metrics::Family* not_found_;     // vsphere_syncer_pv_volume_not_found
  metrics::Family* updates_;       // vsphere_syncer_metadata_updates_total{result}
  mutable kube::WorkQueue queue_;  // mutable: stats() reads its length
  kube::ControllerRunner runner_;
  std::vector<std::pair<kube::Informer*, kube::Informer::HandlerId>> handlers_;

  mutable absl::Mutex mu_;
  // CNS volume id -> name of the PV naming it (kept from PV events).
  absl::flat_hash_map<std::string, std::string> pv_by_cns_id_ ABSL_GUARDED_BY(mu_);
  // VMDK path -> name of the in-tree PV naming it (kept from PV events).
  absl::flat_hash_map<std::string, std::string> pv_by_path_ ABSL_GUARDED_BY(mu_);
  // Inline in-tree volumes: VMDK path -> keys of the Pods using it; every path ever seen inline.
  absl::flat_hash_map<std::string, std::set<std::string>> inline_users_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_set<std::string> inline_seen_ ABSL_GUARDED_BY(mu_);
  // PVC key -> keys of the Pods mounting it (kept from Pod events).
  absl::flat_hash_map<std::string, std::set<std::string>> pods_by_claim_ ABSL_GUARDED_BY(mu_);
  // Orphan candidates of the previous full sync, and confirmed orphans, by vCenter.
  std::set<std::string> orphan_candidates_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::set<std::string>> orphans_ ABSL_GUARDED_BY(mu_);
  std::set<std::string> reported_orphans_ ABSL_GUARDED_BY(mu_);  // logged once each
  std::set<std::string> pvs_without_volume_ ABSL_GUARDED_BY(mu_);
  // In-tree volumes whose CNS volume and disk are both gone (logged once each).
  std::set<std::string> in_tree_disks_gone_ ABSL_GUARDED_BY(mu_);
  // Per CNS id: EntitiesDigest of the entities CNS was last seen (full sync) or made (update) to
  // hold. A volume whose desired entities have that digest costs no CNS query; a full sync that
  // finds CNS differing forgets it.
  absl::flat_hash_map<std::string, uint64_t> confirmed_ ABSL_GUARDED_BY(mu_);
  // Bumped by each full sync once it has listed CNS, before it forgets what CNS differs in: a
  // worker's confirmation from an answer asked for before then may be older than the listing
  // (a volume CNS lost meanwhile would stay confirmed and never be looked at again).
  uint64_t confirm_epoch_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t full_syncs_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t full_sync_failures_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t metadata_updates_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t registered_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t in_tree_registered_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t in_tree_reregistered_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t unchanged_skips_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t left_to_controller_count_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t lookups_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t lookup_queries_ ABSL_GUARDED_BY(mu_) = 0;
  // The handles of PVs deleted while left to the controller (see Desired), until a PV names
  // the handle again.
  std::set<std::string> left_to_controller_ ABSL_GUARDED_BY(mu_);
  int64_t volume_infos_created_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t volume_infos_removed_ ABSL_GUARDED_BY(mu_) = 0;
  std::set<std::string> volume_infos_unnamed_ ABSL_GUARDED_BY(mu_);  // records without a PV
};

}  // namespace ccm::csi::syncer
