#include "vsphere/cns/cns_client.h"

#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/status_macros.h"
#include "vsphere/cns/wire.h"
#include "vsphere/property_collector.h"
#include "vsphere/soap.h"

namespace ccm::vsphere::cns {
namespace {

// Transport and session failures are "could not ask": Unavailable, keeping message and payloads
// (a NotAuthenticated that a new session did not cure, a failed re-login).
absl::Status Transport(const absl::Status& s, absl::string_view what) {
  if (s.code() != absl::StatusCode::kUnauthenticated) return Annotate(s, what);
  absl::Status out(absl::StatusCode::kUnavailable, absl::StrCat(what, ": ", s.message()));
  s.ForEachPayload(
      [&](absl::string_view url, const absl::Cord& payload) { out.SetPayload(url, payload); });
  return out;
}

}  // namespace

CnsClient::CnsClient(Client& vim, CnsClientOptions options)
    : vim_(vim), options_(std::move(options)) {}

Operation CreateOp(const CreateSpec& spec) {
  return {"CnsCreateVolume", CreateVolumeArgs({spec}),
          absl::StrCat("CNS create volume \"", spec.name, "\"")};
}

Operation DeleteOp(const std::string& volume_id, bool delete_disk) {
  return {"CnsDeleteVolume", DeleteVolumeArgs({volume_id}, delete_disk),
          absl::StrCat("CNS delete volume ", volume_id)};
}

Operation AttachOp(const std::string& volume_id, const Moref& vm) {
  return {"CnsAttachVolume", AttachVolumeArgs({{volume_id, vm}}),
          absl::StrCat("CNS attach volume ", volume_id, " to ", vm.ToString())};
}

Operation DetachOp(const std::string& volume_id, const Moref& vm) {
  return {"CnsDetachVolume", DetachVolumeArgs({{volume_id, vm}}),
          absl::StrCat("CNS detach volume ", volume_id, " from ", vm.ToString())};
}

Operation ExtendOp(const std::string& volume_id, int64_t capacity_mb) {
  return {"CnsExtendVolume", ExtendVolumeArgs({{volume_id, capacity_mb}}),
          absl::StrCat("CNS extend volume ", volume_id, " to ", capacity_mb, " MB")};
}

Operation UpdateMetadataOp(const std::string& volume_id, const VolumeMetadata& metadata) {
  return {"CnsUpdateVolumeMetadata", UpdateVolumeMetadataArgs({{volume_id, metadata}}),
          absl::StrCat("CNS update metadata of volume ", volume_id)};
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

absl::StatusOr<Moref> CnsClient::Start(const Operation& op) {
  absl::StatusOr<SoapResponse> r =
      vim_.Call(kCnsEndpoint, op.method, op.args_xml, CallKind::kChange);
  if (!r.ok()) return Transport(r.status(), op.what);
  const Moref task = ParseMoref(r->returnval());
  if (task.empty()) {
    return absl::InternalError(absl::StrCat(op.what, ": ", op.method, " returned no task"));
  }
  return task;
}

absl::StatusOr<VolumeOperationResult> CnsClient::Wait(const Moref& task, absl::string_view what) {
  absl::StatusOr<TaskInfo> info = WaitForTask(vim_, task, options_.task);
  if (!info.ok()) return Transport(info.status(), absl::StrCat(what, " (", task.value, ")"));
  if (info->state == "error") {
    return Annotate(FaultStatus(info->error_fault, info->error_message), what);
  }
  absl::StatusOr<std::vector<VolumeOperationResult>> results = ParseBatchResult(info->result);
  if (!results.ok()) return Annotate(results.status(), what);
  VolumeOperationResult& v = results->front();
  if (!v.fault_name.empty()) return Annotate(FaultStatus(v.fault_name, v.fault_message), what);
  return std::move(v);
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
  };
  auto it = ops->find(method);
  return it == ops->end() ? absl::string_view() : it->second;
}

void CnsClient::Report(const Operation& op, bool ok, absl::Duration elapsed) const {
  if (options_.observer) options_.observer(CnsOpType(op.method), ok, elapsed);
}

absl::StatusOr<VolumeOperationResult> CnsClient::Run(const Operation& op) {
  const absl::Time start = absl::Now();
  absl::StatusOr<VolumeOperationResult> r;
  if (absl::StatusOr<Moref> task = Start(op); task.ok()) {
    r = Wait(*task, op.what);
  } else {
    r = task.status();
  }
  Report(op, r.ok(), absl::Now() - start);
  return r;
}

absl::StatusOr<CreateResult> CnsClient::CreateVolume(const CreateSpec& spec) {
  const Operation op = CreateOp(spec);
  CCM_ASSIGN_OR_RETURN(VolumeOperationResult v, Run(op));
  return CreateResultOf(op, v);
}

absl::StatusOr<QueryResult> CnsClient::QueryVolume(const QueryFilter& filter) {
  const absl::Time start = absl::Now();
  absl::StatusOr<QueryResult> out = Query(filter);
  if (options_.observer) options_.observer("query-volume", out.ok(), absl::Now() - start);
  return out;
}

absl::StatusOr<QueryResult> CnsClient::Query(const QueryFilter& filter) {
  absl::StatusOr<SoapResponse> r =
      vim_.Call(kCnsEndpoint, "CnsQueryVolume", QueryVolumeArgs(filter), CallKind::kQuery);
  if (!r.ok()) return Transport(r.status(), "CNS query volumes");
  absl::StatusOr<QueryResult> q = ParseQueryResult(r->returnval());
  if (!q.ok()) return Annotate(q.status(), "CNS query volumes");
  return q;
}

absl::Status CnsClient::DeleteVolume(const std::string& volume_id, bool delete_disk) {
  return Run(DeleteOp(volume_id, delete_disk)).status();
}

absl::StatusOr<std::string> CnsClient::AttachVolume(const std::string& volume_id, const Moref& vm) {
  const Operation op = AttachOp(volume_id, vm);
  CCM_ASSIGN_OR_RETURN(VolumeOperationResult v, Run(op));
  return DiskUuidOf(op, v);
}

absl::Status CnsClient::DetachVolume(const std::string& volume_id, const Moref& vm) {
  return Run(DetachOp(volume_id, vm)).status();
}

absl::Status CnsClient::ExtendVolume(const std::string& volume_id, int64_t capacity_mb) {
  return Run(ExtendOp(volume_id, capacity_mb)).status();
}

absl::Status CnsClient::UpdateVolumeMetadata(const std::string& volume_id,
                                             const VolumeMetadata& metadata) {
  return Run(UpdateMetadataOp(volume_id, metadata)).status();
}

absl::StatusOr<std::string> CnsClient::AttachedDiskUuid(const Moref& vm,
                                                        const std::string& volume_id) {
  const std::string what = absl::StrCat("disks of ", vm.ToString());
  absl::StatusOr<RetrieveObjectsResult> r = RetrieveObjects(
      vim_, {vm}, {PropertySpec{"VirtualMachine", {"config.hardware.device"}, false}});
  if (!r.ok()) return Transport(r.status(), what);
  if (r->objects.empty()) {
    return absl::NotFoundError(absl::StrCat(what, ": the VM does not exist"));
  }
  pugi::xml_node devices = r->objects.front().Get("config.hardware.device");
  for (const pugi::xml_node& d : Children(devices, "VirtualDevice")) {
    if (XsiType(d) != "VirtualDisk") continue;
    if (ChildText(Child(d, "vDiskId"), "id") != volume_id) continue;
    return ChildText(Child(d, "backing"), "uuid");
  }
  return std::string();
}

}  // namespace ccm::vsphere::cns
