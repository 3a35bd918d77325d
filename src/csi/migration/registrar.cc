#include "csi/migration/registrar.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/logging.h"
#include "common/status_macros.h"
#include "csi/migration/intree.h"
#include "vsphere/soap.h"

namespace ccm::csi {

InTreeRegistrar::InTreeRegistrar(vsphere::cns::VolumeManager& cns, VolumeMigrations& migrations,
                                 InTreeRegistrarOptions options)
    : cns_(cns), migrations_(migrations), options_(std::move(options)) {}

absl::StatusOr<std::string> InTreeRegistrar::Register(const std::string& volume_path,
                                                      const std::string& name,
                                                      const std::string& storage_policy_name) {
  absl::StatusOr<std::string> known = migrations_.VolumeIdOf(volume_path);
  if (known.ok() || !absl::IsNotFound(known.status())) return known;
  CCM_ASSIGN_OR_RETURN(const std::string id, CreateInCns(volume_path, name, storage_policy_name));
  absl::Status saved = migrations_.Save({volume_path, id, false});
  if (!saved.ok()) {
    return Annotate(saved, absl::StrCat("in-tree volume ", volume_path, " (CNS volume ", id, ")"));
  }
  LOG_INFO("in-tree volume {} registered with CNS as volume {}", volume_path, id);
  return id;
}

absl::StatusOr<std::string> InTreeRegistrar::CreateInCns(const std::string& volume_path,
                                                         const std::string& name,
                                                         const std::string& storage_policy_name) {
  const std::string what = absl::StrCat("register in-tree volume ", volume_path, " with CNS");
  absl::StatusOr<VmdkPath> disk = ParseVmdkPath(volume_path);
  if (!disk.ok()) return Annotate(disk.status(), what);
  vsphere::cns::CreateSpec spec;
  spec.name = name;
  spec.metadata.container_cluster = options_.cluster;
  spec.metadata.container_cluster_array = {options_.cluster};
  if (!storage_policy_name.empty()) {
    if (!options_.policy_id_of) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, ": storage policy names cannot be resolved here"));
    }
    absl::StatusOr<std::string> policy = options_.policy_id_of(storage_policy_name);
    if (!policy.ok()) return Annotate(policy.status(), what);
    spec.storage_policy_id = *policy;
  }
  absl::StatusOr<std::vector<std::string>> dcs = options_.datacenters();
  if (!dcs.ok()) return Annotate(dcs.status(), what);
  absl::Status last = absl::NotFoundError(absl::StrCat(what, ": no datacenter to look in"));
  for (const std::string& dc : *dcs) {
    spec.backing_disk_url_path = BackingDiskUrlPath(options_.vcenter_host, *disk, dc);
    absl::StatusOr<vsphere::cns::CreateResult> r = cns_.CreateVolume(spec);
    if (r.ok()) return r->volume_id;
    if (vsphere::FaultName(r.status()) == "CnsAlreadyRegisteredFault") {
      const std::string id = vsphere::cns::RegisteredVolumeId(r.status());
      if (!id.empty()) return id;
      return Annotate(r.status(), absl::StrCat(what, ": CNS did not say under which volume"));
    }
    last = Annotate(r.status(), absl::StrCat(what, " (datacenter ", dc, ")"));
    if (!absl::IsNotFound(r.status())) return last;  // only a missing disk moves to the next
  }
  return last;
}

absl::Status InTreeRegistrar::Unregister(const std::string& volume_path) {
  absl::StatusOr<std::string> id = migrations_.VolumeIdOf(volume_path);
  if (absl::IsNotFound(id.status())) return absl::OkStatus();
  if (!id.ok()) return id.status();
  absl::Status s = cns_.DeleteVolume(*id, /*delete_disk=*/false);
  if (!s.ok() && !absl::IsNotFound(s)) {
    return Annotate(s, absl::StrCat("unregister in-tree volume ", volume_path, " from CNS"));
  }
  CCM_RETURN_IF_ERROR(migrations_.Forget(*id));
  LOG_INFO(
      "in-tree volume {}: its PersistentVolume is gone; CNS volume {} unregistered, the disk "
      "is kept",
      volume_path, *id);
  return absl::OkStatus();
}

}  // namespace ccm::csi
