#include "vsphere/cns/cns_client.h"

#include <utility>

#include "absl/strings/match.h"
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
    : vim_(vim), options_(std::move(options)), tasks_(vim_, options_.task) {}

absl::StatusOr<bool> CnsClient::SnapshotsSupported() {
  if (snapshots_missing_.load()) return false;
  absl::StatusOr<ServiceContent> sc = vim_.GetServiceContent();
  if (!sc.ok()) return Transport(sc.status(), "vCenter API version");
  return HasSnapshotApi(sc->api_version);
}

absl::StatusOr<std::string> CnsClient::ApiVersion() {
  absl::StatusOr<ServiceContent> sc = vim_.GetServiceContent();
  if (!sc.ok()) return Transport(sc.status(), "vCenter API version");
  return sc->api_version;
}

absl::Status CnsClient::SnapshotCallError(const absl::Status& s, absl::string_view method,
                                          absl::string_view what) {
  if (!IsUnknownMethodFault(s)) return Transport(s, what);
  snapshots_missing_.store(true);
  return absl::UnimplementedError(
      absl::StrCat(what, ": this vCenter has no CNS snapshot API (", method,
                   " is unknown to it; vCenter 7.0U3 and later have it): ", s.message()));
}

absl::StatusOr<Moref> CnsClient::Start(const Operation& op) {
  if (op.method == "CnsDeleteVolume" && !op.volume_id.empty()) {
    return deletes_.Start(op, [this](const Operation& o) { return StartOne(o); });
  }
  return StartOne(op);
}

absl::StatusOr<Moref> CnsClient::StartOne(const Operation& op) {
  absl::StatusOr<SoapResponse> r =
      vim_.Call(kCnsEndpoint, op.method, op.args_xml, CallKind::kChange);
  if (!r.ok() && absl::StrContains(op.method, "Snapshots")) {
    return SnapshotCallError(r.status(), op.method, op.what);
  }
  if (!r.ok()) return Transport(r.status(), op.what);
  const Moref task = ParseMoref(r->returnval());
  if (task.empty()) {
    return absl::InternalError(absl::StrCat(op.what, ": ", op.method, " returned no task"));
  }
  return task;
}

absl::StatusOr<std::vector<VolumeOperationResult>> CnsClient::WaitAll(const Moref& task,
                                                                      absl::string_view what) {
  absl::StatusOr<TaskInfo> info = tasks_.Wait(task);
  if (!info.ok()) return Transport(info.status(), absl::StrCat(what, " (", task.value, ")"));
  if (info->state == "error") {
    return Annotate(FaultStatus(info->error_fault, info->error_message), what);
  }
  absl::StatusOr<std::vector<VolumeOperationResult>> results = ParseBatchResult(info->result);
  if (!results.ok()) return Annotate(results.status(), what);
  return results;
}

absl::StatusOr<VolumeOperationResult> CnsClient::Wait(const Moref& task, absl::string_view what) {
  CCM_ASSIGN_OR_RETURN(std::vector<VolumeOperationResult> results, WaitAll(task, what));
  if (results.empty()) return NoVolumeResult(what, task.value);
  VolumeOperationResult& v = results.front();
  if (!v.fault_name.empty()) return Annotate(ResultFaultStatus(v), what);
  return std::move(v);
}

void CnsClient::Report(const Operation& op, bool ok, absl::Duration elapsed) const {
  if (options_.observer) options_.observer(CnsOpType(op.method), ok, elapsed);
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

absl::StatusOr<SnapshotQueryResult> CnsClient::QuerySnapshots(const SnapshotQueryFilter& filter) {
  const absl::Time start = absl::Now();
  const std::string what = "CNS query snapshots";
  auto query = [&]() -> absl::StatusOr<SnapshotQueryResult> {
    absl::StatusOr<SoapResponse> r =
        vim_.Call(kCnsEndpoint, "CnsQuerySnapshots", QuerySnapshotsArgs(filter), CallKind::kQuery);
    if (!r.ok()) return SnapshotCallError(r.status(), "CnsQuerySnapshots", what);
    const Moref task = ParseMoref(r->returnval());
    if (task.empty()) return absl::InternalError(absl::StrCat(what, ": no task returned"));
    absl::StatusOr<TaskInfo> info = tasks_.Wait(task);
    if (!info.ok()) return Transport(info.status(), absl::StrCat(what, " (", task.value, ")"));
    if (info->state == "error") {
      return Annotate(FaultStatus(info->error_fault, info->error_message), what);
    }
    absl::StatusOr<SnapshotQueryResult> q = ParseSnapshotQueryResult(info->result);
    if (!q.ok()) return Annotate(q.status(), what);
    return q;
  };
  absl::StatusOr<SnapshotQueryResult> out = query();
  if (options_.observer) options_.observer("query-snapshots", out.ok(), absl::Now() - start);
  return out;
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

absl::Status CnsClient::KeepAfterVmDeletion(const std::string& volume_id, const Moref& datastore) {
  const std::string what = absl::StrCat("set keepAfterDeleteVm on disk ", volume_id);
  absl::StatusOr<ServiceContent> sc = vim_.GetServiceContent();
  if (!sc.ok()) return Transport(sc.status(), what);
  if (sc->vstorage_object_manager.empty()) {
    return absl::UnimplementedError(absl::StrCat(what, ": vCenter has no VStorageObjectManager"));
  }
  absl::StatusOr<SoapResponse> r = vim_.Call(
      kVim25Endpoint, "SetVStorageObjectControlFlags",
      SetControlFlagsArgs(sc->vstorage_object_manager, volume_id, datastore, {"keepAfterDeleteVm"}),
      CallKind::kChange);
  if (!r.ok()) return Transport(r.status(), what);
  return absl::OkStatus();
}

}  // namespace ccm::vsphere::cns
