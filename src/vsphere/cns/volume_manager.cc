#include "vsphere/cns/volume_manager.h"

#include <algorithm>
#include <map>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "common/status_macros.h"
#include "vsphere/cns/wire.h"

namespace ccm::vsphere::cns {

Operation CreateOp(const CreateSpec& spec) {
  Operation op{"CnsCreateVolume", CreateVolumeArgs({spec}),
               absl::StrCat("CNS create volume \"", spec.name, "\"")};
  op.create = spec;
  return op;
}

Operation DeleteOp(const std::string& volume_id, bool delete_disk) {
  Operation op{"CnsDeleteVolume", DeleteVolumeArgs({volume_id}, delete_disk),
               absl::StrCat("CNS delete volume ", volume_id)};
  op.volume_id = volume_id;
  op.delete_disk = delete_disk;
  return op;
}

Operation DeleteOp(const std::vector<std::string>& volume_ids, bool delete_disk) {
  if (volume_ids.size() == 1) return DeleteOp(volume_ids.front(), delete_disk);
  Operation op{"CnsDeleteVolume", DeleteVolumeArgs(volume_ids, delete_disk),
               absl::StrCat("CNS delete volumes ", absl::StrJoin(volume_ids, ", "))};
  op.delete_disk = delete_disk;
  return op;
}

Operation AttachOp(const std::string& volume_id, const Moref& vm) {
  Operation op{"CnsAttachVolume", AttachVolumeArgs({{volume_id, vm}}),
               absl::StrCat("CNS attach volume ", volume_id, " to ", vm.ToString())};
  op.volume_id = volume_id;
  op.vm = vm;
  return op;
}

Operation DetachOp(const std::string& volume_id, const Moref& vm) {
  Operation op{"CnsDetachVolume", DetachVolumeArgs({{volume_id, vm}}),
               absl::StrCat("CNS detach volume ", volume_id, " from ", vm.ToString())};
  op.volume_id = volume_id;
  op.vm = vm;
  return op;
}

Operation ExtendOp(const std::string& volume_id, int64_t capacity_mb) {
  Operation op{"CnsExtendVolume", ExtendVolumeArgs({{volume_id, capacity_mb}}),
               absl::StrCat("CNS extend volume ", volume_id, " to ", capacity_mb, " MB")};
  op.volume_id = volume_id;
  op.capacity_mb = capacity_mb;
  return op;
}

Operation UpdateMetadataOp(const std::string& volume_id, const VolumeMetadata& metadata) {
  Operation op{"CnsUpdateVolumeMetadata", UpdateVolumeMetadataArgs({{volume_id, metadata}}),
               absl::StrCat("CNS update metadata of volume ", volume_id)};
  op.volume_id = volume_id;
  op.metadata = metadata;
  return op;
}

Operation CreateSnapshotOp(const std::string& volume_id, const std::string& description) {
  Operation op{"CnsCreateSnapshots", CreateSnapshotsArgs({{volume_id, "", description}}),
               absl::StrCat("CNS create snapshot \"", description, "\" of volume ", volume_id)};
  op.volume_id = volume_id;
  op.description = description;
  return op;
}

Operation DeleteSnapshotOp(const std::string& volume_id, const std::string& snapshot_id) {
  Operation op{"CnsDeleteSnapshots", DeleteSnapshotsArgs({{volume_id, snapshot_id, ""}}),
               absl::StrCat("CNS delete snapshot ", snapshot_id, " of volume ", volume_id)};
  op.volume_id = volume_id;
  op.snapshot_id = snapshot_id;
  return op;
}

Operation QueryVolumeInfoOp(const std::string& volume_id) {
  Operation op{"CnsQueryVolumeInfo", QueryVolumeInfoArgs({volume_id}),
               absl::StrCat("CNS query volume info of ", volume_id)};
  op.volume_id = volume_id;
  return op;
}

absl::StatusOr<CreateResult> CreateResultOf(const Operation& op, const VolumeOperationResult& r) {
  if (r.volume_id.empty()) {
    return absl::InternalError(absl::StrCat(op.what, ": the result names no volume id"));
  }
  CreateResult out{r.volume_id, {}};
  if (!r.placement.empty()) out.datastore = r.placement.front();
  return out;
}

absl::StatusOr<std::string> DiskUuidOf(const Operation& op, const VolumeOperationResult& r) {
  if (r.disk_uuid.empty()) {
    return absl::InternalError(absl::StrCat(op.what, ": the result has no diskUUID"));
  }
  return r.disk_uuid;
}

absl::StatusOr<Snapshot> SnapshotOf(const Operation& op, const VolumeOperationResult& r) {
  if (r.snapshot.snapshot_id.empty()) {
    return absl::InternalError(absl::StrCat(op.what, ": the result names no snapshot"));
  }
  return r.snapshot;
}

absl::StatusOr<DiskBacking> DiskBackingOf(const Operation& op, const VolumeOperationResult& r) {
  if (r.backing.file_path.empty()) {
    return absl::InternalError(absl::StrCat(op.what, ": the result names no disk file"));
  }
  return r.backing;
}

namespace {
// Whether `api_version` is at least major.minor.patch (an unreadable one: no).
bool ApiVersionAtLeast(absl::string_view api_version, const int (&since)[3]) {
  std::vector<absl::string_view> parts = absl::StrSplit(api_version, '.');
  for (size_t i = 0; i < 3; ++i) {
    int got = 0;
    if (i < parts.size() && !absl::SimpleAtoi(parts[i], &got)) return false;
    if (got != since[i]) return got > since[i];
  }
  return true;
}
}  // namespace

bool HasSnapshotApi(absl::string_view api_version) {
  return ApiVersionAtLeast(api_version, {7, 0, 3});
}

bool HasOnlineExtend(absl::string_view api_version) {
  return ApiVersionAtLeast(api_version, {7, 0, 2});
}

bool HasTransactions(absl::string_view api_version) {
  return ApiVersionAtLeast(api_version, {9, 1, 0});
}

absl::string_view CnsOpType(absl::string_view method) {
  static const auto* const ops = new std::map<absl::string_view, absl::string_view>{
      {"CnsCreateVolume", "create-volume"},
      {"CnsDeleteVolume", "delete-volume"},
      {"CnsAttachVolume", "attach-volume"},
      {"CnsDetachVolume", "detach-volume"},
      {"CnsExtendVolume", "expand-volume"},
      {"CnsUpdateVolumeMetadata", "update-volume-metadata"},
      {"CnsQueryVolume", "query-volume"},
      {"CnsQueryAllVolume", "query-all-volume"},
      {"CnsCreateSnapshots", "create-snapshot"},
      {"CnsDeleteSnapshots", "delete-snapshot"},
      {"CnsQuerySnapshots", "query-snapshots"},
      {"CnsQueryVolumeInfo", "query-volume-info"},
  };
  auto it = ops->find(method);
  return it == ops->end() ? absl::string_view() : it->second;
}

absl::StatusOr<VolumeOperationResult> VolumeManager::Run(const Operation& op) {
  const absl::Time start = absl::Now();
  absl::StatusOr<VolumeOperationResult> r;
  if (absl::StatusOr<Moref> task = Start(op); task.ok()) {
    r = WaitOwn(*task, op);
    if (IsNoVolumeResult(r.status())) r = Settle(op);
  } else {
    r = task.status();
  }
  Report(op, r.ok(), absl::Now() - start);
  return r;
}

absl::StatusOr<CreateResult> VolumeManager::CreateVolume(const CreateSpec& spec) {
  const Operation op = CreateOp(spec);
  CCM_ASSIGN_OR_RETURN(VolumeOperationResult v, Run(op));
  return CreateResultOf(op, v);
}

absl::Status VolumeManager::DeleteVolume(const std::string& volume_id, bool delete_disk) {
  return Run(DeleteOp(volume_id, delete_disk)).status();
}

absl::StatusOr<std::string> VolumeManager::AttachVolume(const std::string& volume_id,
                                                        const Moref& vm) {
  const Operation op = AttachOp(volume_id, vm);
  CCM_ASSIGN_OR_RETURN(VolumeOperationResult v, Run(op));
  return DiskUuidOf(op, v);
}

absl::Status VolumeManager::DetachVolume(const std::string& volume_id, const Moref& vm) {
  return Run(DetachOp(volume_id, vm)).status();
}

absl::Status VolumeManager::ExtendVolume(const std::string& volume_id, int64_t capacity_mb) {
  return Run(ExtendOp(volume_id, capacity_mb)).status();
}

absl::StatusOr<VolumeOperationResult> VolumeManager::WaitOwn(const Moref& task,
                                                             const Operation& op) {
  if (op.method != "CnsDeleteVolume") return Wait(task, op.what);  // never shared
  CCM_ASSIGN_OR_RETURN(std::vector<VolumeOperationResult> results, WaitAll(task, op.what));
  // The result that names its volume; a single result that names none is this delete's (the
  // reference's reading of a task of one volume).
  auto own = std::find_if(results.begin(), results.end(), [&](const VolumeOperationResult& r) {
    return r.volume_id == op.volume_id;
  });
  if (own == results.end() && results.size() == 1 && results.front().volume_id.empty()) {
    own = results.begin();
  }
  if (own == results.end()) return NoVolumeResult(op.what, task.value);
  if (!own->fault_name.empty()) return Annotate(ResultFaultStatus(*own), op.what);
  return std::move(*own);
}

absl::StatusOr<std::vector<VolumeOperationResult>> VolumeManager::WaitAll(const Moref& task,
                                                                          absl::string_view what) {
  CCM_ASSIGN_OR_RETURN(VolumeOperationResult v, Wait(task, what));
  return std::vector<VolumeOperationResult>{std::move(v)};
}

absl::StatusOr<std::vector<absl::Status>> VolumeManager::UpdateVolumesMetadata(
    const std::vector<MetadataUpdate>& updates) {
  Operation op{"CnsUpdateVolumeMetadata", UpdateVolumeMetadataArgs(updates),
               absl::StrCat("CNS update metadata of ", updates.size(), " volumes")};
  const absl::Time start = absl::Now();
  absl::StatusOr<std::vector<VolumeOperationResult>> results;
  if (absl::StatusOr<Moref> task = Start(op); task.ok()) {
    results = WaitAll(*task, op.what);
  } else {
    results = task.status();
  }
  Report(op, results.ok(), absl::Now() - start);
  if (!results.ok()) return results.status();
  std::vector<absl::Status> out;
  for (const MetadataUpdate& u : updates) {
    auto it = std::find_if(results->begin(), results->end(), [&](const VolumeOperationResult& r) {
      return r.volume_id == u.volume_id;
    });
    const std::string what = absl::StrCat("CNS update metadata of volume ", u.volume_id);
    if (it == results->end()) {
      // No result named for it: decided from the volume as CNS has it now.
      Operation one = UpdateMetadataOp(u.volume_id, u.metadata);
      one.what = what;
      out.push_back(Settle(one).status());
    } else if (!it->fault_name.empty()) {
      out.push_back(Annotate(FaultStatus(it->fault_name, it->fault_message), what));
    } else {
      out.push_back(absl::OkStatus());
    }
  }
  return out;
}

absl::StatusOr<Snapshot> VolumeManager::CreateSnapshot(const std::string& volume_id,
                                                       const std::string& description) {
  const Operation op = CreateSnapshotOp(volume_id, description);
  CCM_ASSIGN_OR_RETURN(VolumeOperationResult v, Run(op));
  return SnapshotOf(op, v);
}

absl::Status VolumeManager::DeleteSnapshot(const std::string& volume_id,
                                           const std::string& snapshot_id) {
  return Run(DeleteSnapshotOp(volume_id, snapshot_id)).status();
}

absl::StatusOr<DiskBacking> VolumeManager::VolumeInfo(const std::string& volume_id) {
  const Operation op = QueryVolumeInfoOp(volume_id);
  CCM_ASSIGN_OR_RETURN(VolumeOperationResult v, Run(op));
  return DiskBackingOf(op, v);
}

absl::StatusOr<std::vector<Snapshot>> VolumeManager::SnapshotsOf(const std::string& volume_id) {
  return snapshot_batch_.Of(volume_id,
                            [this](const SnapshotQueryFilter& f) { return QuerySnapshots(f); });
}

absl::Status VolumeManager::UpdateVolumeMetadata(const std::string& volume_id,
                                                 const VolumeMetadata& metadata) {
  return Run(UpdateMetadataOp(volume_id, metadata)).status();
}

}  // namespace ccm::vsphere::cns
