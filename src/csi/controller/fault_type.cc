#include "csi/controller/fault_type.h"

#include "absl/strings/str_cat.h"
#include "csi/server/grpc_status.h"
#include "vsphere/soap.h"

namespace ccm::csi {
namespace {

constexpr char kVmNotFoundPayload[] = "type.ccm/csi.VmNotFound";

}  // namespace

absl::Status VmNotFound(absl::Status s) {
  if (!s.ok()) s.SetPayload(kVmNotFoundPayload, absl::Cord("1"));
  return s;
}

std::string FaultTypeOf(const absl::Status& s) {
  if (s.ok()) return "";
  if (s.GetPayload(kVmNotFoundPayload)) return "csi.fault.nonstorage.VmNotFound";
  const std::string fault = vsphere::FaultName(s);
  if (!fault.empty() && fault != "UnknownFault") {
    const std::string vim = absl::StrCat("vim.fault.", fault);
    if (fault == "InvalidHostState" || fault == "HostNotConnected") {
      return absl::StrCat("csi.fault.nonstorage.", vim);
    }
    return vim;
  }
  return DefaultFaultType(static_cast<grpc::StatusCode>(s.code()));
}

grpc::Status Answer(grpc::ServerContext* ctx, const absl::Status& s) {
  if (!s.ok() && ctx != nullptr) ctx->AddTrailingMetadata(kFaultTypeMetadata, FaultTypeOf(s));
  return ToGrpcStatus(s);
}

}  // namespace ccm::csi
