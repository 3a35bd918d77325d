#pragma once
// The CnsVSphereVolumeMigration objects (cns.vmware.com/v1alpha1, cluster-scoped, named by the
// CNS volume ID; spec.volumepath, spec.volumeid, spec.protectvolumefromvmdelete, the reference's
// CRD): which CNS volume an in-tree VMDK became when it was registered with CNS. The metadata
// syncer writes them when it registers an in-tree volume (registrar.h), the controller when it
// creates a volume for a migrated in-tree StorageClass; the controller reads them for the RPCs
// that get a VMDK path as the volume handle.
//
// VolumeMigrations is the seam (fakes in tests); KubeVolumeMigrations the real one: an informer
// indexed by path (the objects are small, one per in-tree volume) and writes through the API.

#include <map>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "kube/event_sink.h"
#include "kube/informer.h"

namespace ccm::csi {

struct InTreeVolume {
  std::string volume_path;  // "[datastore1] kubevols/pvc-1.vmdk"
  std::string volume_id;    // the CNS volume ID
  // keepAfterDeleteVm is set on the disk (spec.protectvolumefromvmdelete).
  bool protected_from_vm_delete = false;
};

class VolumeMigrations {
 public:
  virtual ~VolumeMigrations() = default;
  // The registration of a VMDK path; NotFound when it has none; Unavailable before the objects
  // are known.
  virtual absl::StatusOr<InTreeVolume> Find(const std::string& volume_path) const = 0;
  // Saves a registration (an object that exists already is left as it is: OK).
  virtual absl::Status Save(const InTreeVolume& volume) = 0;
  // Records that keepAfterDeleteVm is set on the volume's disk.
  virtual absl::Status MarkProtected(const std::string& volume_id) = 0;
  // Deletes the object of a volume (absent: OK).
  virtual absl::Status Forget(const std::string& volume_id) = 0;
  // Every registration as CNS volume ID -> VMDK path (ListVolumes names migrated volumes by
  // their path, the handle Kubernetes knows them by); Unavailable before the objects are known.
  virtual absl::StatusOr<std::map<std::string, std::string>> PathsByVolumeId() const = 0;

  // Find(...).volume_id.
  absl::StatusOr<std::string> VolumeIdOf(const std::string& volume_path) const;
};

// The in-tree PersistentVolume (spec.vsphereVolume) of a VMDK path, read with one paged LIST of
// the PVs (a rare call: an Event about the volume); NotFound when none names it.
absl::StatusOr<kube::ObjectReference> FindInTreePv(kube::Client& client,
                                                   const std::string& volume_path);

// cnsvspherevolumemigrations.cns.vmware.com/v1alpha1, cluster-scoped (the reference's CRD).
const kube::Resource& VolumeMigrationResource();

class KubeVolumeMigrations final : public VolumeMigrations {
 public:
  explicit KubeVolumeMigrations(kube::Client& client);
  void Start();
  void Stop();
  kube::Informer& informer() { return *informer_; }

  absl::StatusOr<InTreeVolume> Find(const std::string& volume_path) const override;
  absl::Status Save(const InTreeVolume& volume) override;
  absl::Status MarkProtected(const std::string& volume_id) override;
  absl::Status Forget(const std::string& volume_id) override;
  absl::StatusOr<std::map<std::string, std::string>> PathsByVolumeId() const override;

 private:
  void Apply(const kube::Json* old_obj, const kube::Json* obj);

  kube::Client& client_;
  std::unique_ptr<kube::Informer> informer_;
  mutable absl::Mutex mu_;
  std::map<std::string, InTreeVolume> by_path_ ABSL_GUARDED_BY(mu_);
};

}  // namespace ccm::csi
