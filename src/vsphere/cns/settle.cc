// VolumeManager::Settle: a CNS task that succeeded but named no result for its volume (another
// CNS implementation's answer for a volume it does not know, e.g. govmomi's cns/simulator
// deleting a volume already gone) is decided from what CNS says of the volume now, with one
// query, never failed on the answer's shape alone.
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "vsphere/cns/volume_manager.h"

namespace ccm::vsphere::cns {
namespace {

constexpr absl::string_view kNoResultPayload = "ccm/cns-no-volume-result";

// The volume as CNS has it now; nullopt when CNS does not know it.
absl::StatusOr<std::optional<Volume>> Current(VolumeManager& cns, const std::string& id) {
  QueryFilter f;
  f.volume_ids = {id};
  CCM_ASSIGN_OR_RETURN(QueryResult r, cns.QueryVolume(f));
  for (Volume& v : r.volumes) {
    if (v.volume_id == id) return std::optional<Volume>(std::move(v));
  }
  return std::optional<Volume>();
}

absl::Status StillUndone(const Operation& op, absl::string_view state) {
  return absl::UnavailableError(
      absl::StrCat(op.what, ": CNS answered the task with no result for the volume, and ", state,
                   ": the change is to be tried again"));
}

bool HasEntities(const VolumeMetadata& now, const VolumeMetadata& sent) {
  for (const EntityMetadata& e : sent.entity_metadata) {
    bool found = false;
    for (const EntityMetadata& n : now.entity_metadata) {
      found = found || (n.entity_type == e.entity_type && n.entity_name == e.entity_name &&
                        n.namespace_name == e.namespace_name);
    }
    if (found == e.remove) return false;
  }
  return true;
}

}  // namespace

absl::Status NoVolumeResult(absl::string_view what, absl::string_view task) {
  absl::Status s = absl::UnknownError(
      absl::StrCat(what, ": CNS task ", task, " succeeded with no result for the volume"));
  s.SetPayload(kNoResultPayload, absl::Cord(task));
  return s;
}

bool IsNoVolumeResult(const absl::Status& s) { return s.GetPayload(kNoResultPayload).has_value(); }

absl::StatusOr<VolumeOperationResult> VolumeManager::Settle(const Operation& op) {
  VolumeOperationResult done;
  done.volume_id = op.volume_id;
  if (op.method == "CnsDeleteVolume") {
    CCM_ASSIGN_OR_RETURN(std::optional<Volume> now, Current(*this, op.volume_id));
    if (now) return StillUndone(op, "CNS still has the volume");
    return done;  // gone: what a deletion asks for
  }
  if (op.method == "CnsAttachVolume" || op.method == "CnsDetachVolume") {
    absl::StatusOr<std::string> disk = AttachedDiskUuid(op.vm, op.volume_id);
    const bool attach = op.method == "CnsAttachVolume";
    if (!attach && absl::IsNotFound(disk.status())) return done;  // no VM: nothing attached
    if (!disk.ok()) return disk.status();
    if (attach == disk->empty()) {
      return StillUndone(op, attach ? "the disk is not on the VM" : "the disk is still on the VM");
    }
    done.disk_uuid = *disk;
    return done;
  }
  if (op.method == "CnsExtendVolume" || op.method == "CnsUpdateVolumeMetadata") {
    CCM_ASSIGN_OR_RETURN(std::optional<Volume> now, Current(*this, op.volume_id));
    if (!now) {
      return absl::NotFoundError(
          absl::StrCat(op.what, ": CNS does not know volume ", op.volume_id));
    }
    const bool extended = op.method == "CnsExtendVolume" && now->capacity_mb >= op.capacity_mb;
    const bool updated =
        op.method == "CnsUpdateVolumeMetadata" && HasEntities(now->metadata, op.metadata);
    if (!extended && !updated) return StillUndone(op, "the volume does not show the change");
    return done;
  }
  if (op.method == "CnsCreateVolume") {
    QueryFilter f;
    f.names = {op.create.name};
    CCM_ASSIGN_OR_RETURN(QueryResult r, QueryVolume(f));
    if (r.volumes.empty()) return StillUndone(op, "CNS has no volume of that name");
    done.volume_id = r.volumes.front().volume_id;
    return done;
  }
  return absl::InternalError(absl::StrCat(op.what, ": CNS answered the task with no result"));
}

}  // namespace ccm::vsphere::cns
