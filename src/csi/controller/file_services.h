#pragma once
// FileServiceSource on vCenter: the compute clusters (one RetrievePropertiesEx over a container
// view: name, datastore) and each one's vSAN configuration (one VsanClusterGetConfig per cluster),
// read when a file volume is created and kept for the datastore refresh interval
// (csi-fetch-preferred-datastores-intervalinmin), so a burst of RWX claims costs one read. The
// reference reads the same at every auth-check interval whether file volumes are used or not.

#include <optional>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "csi/controller/controller_cloud.h"
#include "vsphere/client.h"

namespace ccm::csi {

class VsanFileServices final : public FileServiceSource {
 public:
  VsanFileServices(vsphere::Client& client, absl::Duration ttl) : client_(client), ttl_(ttl) {}
  absl::StatusOr<std::vector<FileServiceCluster>> Clusters() override;

 private:
  absl::StatusOr<std::vector<FileServiceCluster>> Read();

  vsphere::Client& client_;
  const absl::Duration ttl_;
  absl::Mutex mu_;  // held while reading: concurrent creates wait for one read
  std::optional<std::vector<FileServiceCluster>> cached_ ABSL_GUARDED_BY(mu_);
  absl::Time read_at_ ABSL_GUARDED_BY(mu_);
};

}  // namespace ccm::csi
