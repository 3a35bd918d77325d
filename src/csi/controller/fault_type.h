#pragma once
// The reference's faulttype label of vsphere_csi_volume_ops_histogram for a failed operation,
// and the answer of a Controller RPC that carries it to the metrics interceptor.

#include <grpcpp/server_context.h>
#include <grpcpp/support/status.h>

#include <string>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"

namespace ccm::csi {

// A node VM vCenter does not know: faulttype "csi.fault.nonstorage.VmNotFound".
absl::Status VmNotFound(absl::Status s);

// "vim.fault.<Fault>" for a failure vCenter reported (its SOAP or CNS fault type);
// "csi.fault.nonstorage.vim.fault.<Fault>" for the host faults the reference counts as not the
// storage's (InvalidHostState, HostNotConnected); "csi.fault.nonstorage.VmNotFound" for a node VM
// vCenter does not know; else DefaultFaultType of the code ("csi.fault.InvalidArgument",
// "csi.fault.NotFound", "csi.fault.Unimplemented", "csi.fault.Internal"). Empty for OK.
std::string FaultTypeOf(const absl::Status& s);

// `s` as the RPC's answer; a failure's faulttype goes to the metrics interceptor (trailing
// metadata it removes) when `ctx` is set.
grpc::Status Answer(grpc::ServerContext* ctx, const absl::Status& s);

// Runs a Controller RPC's work under its gRPC deadline (common/call_deadline.h: every vCenter
// call and task wait of the work ends by it) and answers its status as Answer does.
grpc::Status Serve(grpc::ServerContext* ctx, absl::FunctionRef<absl::Status()> work);

// A file volume's RPC: the metrics label it voltype="file" (kVolumeTypeMetadata).
void MarkFile(grpc::ServerContext* ctx, bool file);

}  // namespace ccm::csi
