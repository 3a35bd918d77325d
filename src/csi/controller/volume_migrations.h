#pragma once
// KubeVolumeMigrations: the CnsVSphereVolumeMigration objects (controller_cloud.h) through an
// informer, indexed by VMDK path. The objects are small (a path and an ID) and one per in-tree
// volume, so the index holds them all.

#include <map>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "csi/controller/controller_cloud.h"
#include "kube/informer.h"

namespace ccm::csi {

// cnsvspherevolumemigrations.cns.vmware.com/v1alpha1, cluster-scoped (the reference's CRD).
const kube::Resource& VolumeMigrationResource();

class KubeVolumeMigrations final : public VolumeMigrations {
 public:
  explicit KubeVolumeMigrations(kube::Client& client);
  void Start();
  void Stop();

  absl::StatusOr<std::string> VolumeIdOf(const std::string& volume_path) const override;
  absl::Status Forget(const std::string& volume_id) override;

 private:
  void Apply(const kube::Json* old_obj, const kube::Json* obj);

  kube::Client& client_;
  std::unique_ptr<kube::Informer> informer_;
  mutable absl::Mutex mu_;
  std::map<std::string, std::string> by_path_ ABSL_GUARDED_BY(mu_);  // volumepath -> volumeid
};

}  // namespace ccm::csi
