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

absl::StatusOr<std::string> InTreeRegistrar::Reregister(const std::string& volume_path,
                                                        const std::string& stale_id,
                                                        std::optional<kube::ObjectReference> pv,
                                                        const std::string& storage_policy_name) {
  if (!pv.has_value() && options_.pv_of) {
    absl::StatusOr<kube::ObjectReference> found = options_.pv_of(volume_path);
    if (found.ok()) pv = *found;
  }
  const std::string lost =
      absl::StrCat("in-tree volume ", volume_path, ": CNS no longer knows its volume ", stale_id);
  // Named as the first registration was: by the PV, else (an inline volume) by the file.
  const std::string name =
      pv.has_value() ? pv->name : volume_path.substr(volume_path.find_last_of("/] ") + 1);
  absl::StatusOr<std::string> id = CreateInCns(volume_path, name, storage_policy_name);
  if (absl::IsNotFound(id.status())) {
    return absl::NotFoundError(
        absl::StrCat(lost, " and the disk is gone too (", id.status().message(), ")"));
  }
  if (!id.ok()) return Annotate(id.status(), lost);
  if (*id == stale_id) return id;  // CNS has it again under the same ID: the mapping holds
  if (absl::Status s = migrations_.Save({volume_path, *id, false}); !s.ok()) {
    return Annotate(s, absl::StrCat(lost, "; registered again as ", *id));
  }
  if (absl::Status s = migrations_.Forget(stale_id); !s.ok()) {
    // The new mapping is saved and wins for the path; the stale object is only clutter.
    LOG_WARN("{}: the stale CnsVSphereVolumeMigration {} stays: {}", lost, stale_id, s.message());
  }
  const std::string message =
      absl::StrCat("CNS no longer knew volume ", stale_id, " of in-tree disk ", volume_path,
                   "; the disk is registered again as CNS volume ", *id,
                   " and its CnsVSphereVolumeMigration updated");
  LOG_WARN("{}", message);
  if (options_.events != nullptr) {
    kube::ObjectReference object = pv.value_or(kube::ObjectReference{
        "CnsVSphereVolumeMigration", "", *id, "", "cns.vmware.com/v1alpha1", "", ""});
    options_.events->Warning(object, "VolumeReregistered", message);
  }
  return id;
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
