#pragma once
// absl::Status <-> grpc::Status. The canonical codes are the same numbers in both libraries, so
// the services can decide in absl::Status (src/csi/core) and answer in gRPC here.

#include <grpcpp/support/status.h>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace ccm::csi {

grpc::Status ToGrpcStatus(const absl::Status& s);
absl::Status FromGrpcStatus(const grpc::Status& s);

// The code as Go's codes.Code String() spells it ("OK", "InvalidArgument", ...): the label value
// grpc-go's and the CSI sidecars' metrics use, so dashboards can join them with ours.
absl::string_view GrpcCodeName(grpc::StatusCode code);

// The trailing-metadata key through which a service hands a failed RPC's faulttype (the
// reference's vsphere_csi_volume_ops_histogram label) to the metrics interceptor, which removes
// it before the answer goes out.
inline constexpr char kFaultTypeMetadata[] = "x-ccm-csi-faulttype";
// Set to "file" by the controller for a file volume's RPC: the voltype label of
// vsphere_csi_volume_ops_histogram ("block" otherwise); removed before the answer is sent.
inline constexpr char kVolumeTypeMetadata[] = "x-ccm-csi-voltype";

// The faulttype of a failure without a more precise one: "csi.fault.InvalidArgument",
// "csi.fault.NotFound", "csi.fault.Unimplemented", else "csi.fault.Internal", as the reference
// names them.
std::string DefaultFaultType(grpc::StatusCode code);

}  // namespace ccm::csi
