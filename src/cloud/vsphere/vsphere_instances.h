#pragma once
// cloud::Instances on vCenter (see cloud/core/instances.h for the contract). Every look-up is
// answered from the vCenters' inventory caches (kept current by WaitForUpdatesEx) and topology
// caches (ancestors + tags, fetched in batches), so the periodic address refresh of every node
// and the lifecycle checks cost no vCenter request when nothing changed.
//
// Search order is deterministic: vCenters in configuration order (sorted by label), each over
// its configured datacenters. "Confirmed gone" (NotFound / InstanceExists == false) only when
// every vCenter's cache is synced and none has the VM; a cache that is not synced (vCenter down,
// login failing, stream broken) makes the answer Unavailable.

#include <memory>
#include <string>
#include <vector>

#include "cloud/config/config.h"
#include "cloud/core/instances.h"
#include "cloud/core/matching.h"
#include "cloud/vsphere/vcenter.h"

namespace ccm::cloud {

class VSphereInstances final : public Instances {
 public:
  // `vcenters` must outlive this object.
  VSphereInstances(const Config& config, std::vector<VCenter*> vcenters);

  absl::StatusOr<bool> InstanceExists(const NodeIdentity& node) override;
  absl::StatusOr<bool> InstanceShutdown(const NodeIdentity& node) override;
  absl::StatusOr<InstanceMetadata> GetInstanceMetadata(const NodeIdentity& node) override;
  // OK when every vCenter's inventory cache is synced; else Unavailable naming each one that is
  // not (by label) with its cache's last error.
  absl::Status Ready() const override;

  // The VM behind a node and where it was found (for messages and the "why" of a node).
  absl::StatusOr<VmMatch> Match(const NodeIdentity& node);

 private:
  VmLookups Lookups();
  VCenter* Find(const std::string& label);
  absl::StatusOr<vsphere::VmFacts> Facts(const VmMatch& m);

  const Config config_;
  std::vector<VCenter*> vcenters_;
};

}  // namespace ccm::cloud
