#include "csi/controller/fault_type.h"

#include "absl/strings/str_cat.h"
#include "common/call_deadline.h"
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

void MarkFile(grpc::ServerContext* ctx, bool file) {
  if (file && ctx != nullptr) ctx->AddTrailingMetadata(kVolumeTypeMetadata, "file");
}

grpc::Status Serve(grpc::ServerContext* ctx, absl::FunctionRef<absl::Status()> work) {
  absl::Time deadline = absl::InfiniteFuture();
  // gRPC's "no deadline" is the far future (gpr_inf_future), beyond what absl::Time converts.
  if (ctx != nullptr && ctx->raw_deadline().tv_sec != gpr_inf_future(GPR_CLOCK_REALTIME).tv_sec) {
    deadline = absl::FromChrono(ctx->deadline());
  }
  ScopedCallDeadline scope(deadline);
  return Answer(ctx, work());
}

}  // namespace ccm::csi
