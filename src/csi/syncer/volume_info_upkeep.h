#pragma once
// CnsVolumeInfo upkeep by the syncer's full sync (several vCenters; csi/crd/cnsvolumeinfo.h), as
// the reference's full sync keeps them: each volume of a PV gets its record (volumes made before
// records existed, or whose record was deleted by hand), a record whose PV is gone is deleted, and
// so is one naming another vCenter than the one CNS lists the volume in (then made again right).
//
// A record is deleted for want of a PV only when two full syncs in a row found none: the
// controller writes it when CreateVolume returns, a moment before the external-provisioner
// creates the PV (the orphan rule of metadata_syncer.h).

#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "kube/client.h"

namespace ccm::csi::syncer {

// Where the records live: the CnsVolumeInfo objects of the driver's namespace.
class VolumeInfoStore {
 public:
  virtual ~VolumeInfoStore() = default;
  // Every record: volume ID -> spec.vCenterServer.
  virtual absl::StatusOr<std::map<std::string, std::string>> List() = 0;
  // AlreadyExists and NotFound are success.
  virtual absl::Status Create(const std::string& volume_id, const std::string& vcenter) = 0;
  virtual absl::Status Delete(const std::string& volume_id) = 0;
};

class KubeVolumeInfoStore final : public VolumeInfoStore {
 public:
  KubeVolumeInfoStore(kube::Client& client, std::string ns) : client_(client), ns_(std::move(ns)) {}
  absl::StatusOr<std::map<std::string, std::string>> List() override;
  absl::Status Create(const std::string& volume_id, const std::string& vcenter) override;
  absl::Status Delete(const std::string& volume_id) override;

 private:
  kube::Client& client_;
  std::string ns_;
};

struct VolumeInfoPlan {
  std::vector<std::string> remove;                          // volume IDs
  std::vector<std::pair<std::string, std::string>> create;  // volume ID, vCenter
  std::set<std::string> unnamed;  // records no PV names this time (the next plan's `unnamed`)
};

// `located`: bare volume ID of a PV -> the vCenter whose CNS lists it; `named`: every volume ID a
// PV names; `records`: volume ID -> vCenter; `vcenters`: the configured ones (records naming
// another are left alone); `unnamed`: the previous plan's.
VolumeInfoPlan PlanVolumeInfos(const std::map<std::string, std::string>& located,
                               const std::set<std::string>& named,
                               const std::map<std::string, std::string>& records,
                               const std::set<std::string>& vcenters,
                               const std::set<std::string>& unnamed);

}  // namespace ccm::csi::syncer
