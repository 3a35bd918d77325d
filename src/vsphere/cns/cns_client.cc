#include "vsphere/cns/cns_client.h"

#include <utility>

#include "absl/strings/str_cat.h"
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

absl::StatusOr<VolumeOperationResult> CnsClient::RunTask(absl::string_view method,
                                                         absl::string_view args_xml,
                                                         absl::string_view what) {
  absl::StatusOr<SoapResponse> r = vim_.Call(kCnsEndpoint, method, args_xml, CallKind::kChange);
  if (!r.ok()) return Transport(r.status(), what);
  const Moref task = ParseMoref(r->returnval());
  if (task.empty()) {
    return absl::InternalError(absl::StrCat(what, ": ", method, " returned no task"));
  }
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

absl::StatusOr<CreateResult> CnsClient::CreateVolume(const CreateSpec& spec) {
  const std::string what = absl::StrCat("CNS create volume \"", spec.name, "\"");
  CCM_ASSIGN_OR_RETURN(VolumeOperationResult v,
                       RunTask("CnsCreateVolume", CreateVolumeArgs({spec}), what));
  if (v.volume_id.empty()) {
    return absl::InternalError(absl::StrCat(what, ": the result names no volume id"));
  }
  CreateResult out{v.volume_id, {}};
  if (!v.placement.empty()) out.datastore = v.placement.front();
  return out;
}

absl::StatusOr<QueryResult> CnsClient::QueryVolume(const QueryFilter& filter) {
  absl::StatusOr<SoapResponse> r =
      vim_.Call(kCnsEndpoint, "CnsQueryVolume", QueryVolumeArgs(filter), CallKind::kQuery);
  if (!r.ok()) return Transport(r.status(), "CNS query volumes");
  absl::StatusOr<QueryResult> q = ParseQueryResult(r->returnval());
  if (!q.ok()) return Annotate(q.status(), "CNS query volumes");
  return q;
}

absl::Status CnsClient::DeleteVolume(const std::string& volume_id, bool delete_disk) {
  return RunTask("CnsDeleteVolume", DeleteVolumeArgs({volume_id}, delete_disk),
                 absl::StrCat("CNS delete volume ", volume_id))
      .status();
}

absl::StatusOr<std::string> CnsClient::AttachVolume(const std::string& volume_id, const Moref& vm) {
  const std::string what = absl::StrCat("CNS attach volume ", volume_id, " to ", vm.ToString());
  CCM_ASSIGN_OR_RETURN(VolumeOperationResult v,
                       RunTask("CnsAttachVolume", AttachVolumeArgs({{volume_id, vm}}), what));
  if (v.disk_uuid.empty()) {
    return absl::InternalError(absl::StrCat(what, ": the result has no diskUUID"));
  }
  return v.disk_uuid;
}

absl::Status CnsClient::DetachVolume(const std::string& volume_id, const Moref& vm) {
  return RunTask("CnsDetachVolume", DetachVolumeArgs({{volume_id, vm}}),
                 absl::StrCat("CNS detach volume ", volume_id, " from ", vm.ToString()))
      .status();
}

absl::Status CnsClient::ExtendVolume(const std::string& volume_id, int64_t capacity_mb) {
  return RunTask("CnsExtendVolume", ExtendVolumeArgs({{volume_id, capacity_mb}}),
                 absl::StrCat("CNS extend volume ", volume_id, " to ", capacity_mb, " MB"))
      .status();
}

absl::Status CnsClient::UpdateVolumeMetadata(const std::string& volume_id,
                                             const VolumeMetadata& metadata) {
  return RunTask("CnsUpdateVolumeMetadata", UpdateVolumeMetadataArgs({{volume_id, metadata}}),
                 absl::StrCat("CNS update metadata of volume ", volume_id))
      .status();
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
