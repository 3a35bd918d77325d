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

}  // namespace ccm::csi
