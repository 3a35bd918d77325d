#pragma once
// Counts and times every CSI RPC the server answers, and logs each at -v 4, from one gRPC server
// interceptor, so no service has to remember to.
//
// Metric names:
//   vsphere_csi_volume_ops_histogram{voltype,optype,status,faulttype}  the reference's, same
//       name, labels and buckets (2 s to 180 s), for the volume operations it records:
//       optype create-volume, delete-volume, attach-volume, detach-volume, expand-volume,
//       list-volume; voltype "block"; status "pass" / "fail"; faulttype "" on success, else
//       "csi.fault.<gRPC code>" (csi.fault.Internal, csi.fault.NotFound, ...), so dashboards
//       built on the reference keep working;
// and two of ours, with the gRPC code spelled as the CSI sidecars' csi_sidecar_operations_seconds
// {grpc_status_code} spells it, so both sides of a call can be joined on method and code:
//   vsphere_csi_operations_total{method,code}        counter; method = "CreateVolume", ...
//   vsphere_csi_operation_duration_seconds{method}   histogram

#include <grpcpp/support/server_interceptor.h>

#include <memory>
#include <vector>

#include "absl/strings/string_view.h"
#include "common/metrics.h"

namespace ccm::csi {

inline constexpr const char* kOperationsTotal = "vsphere_csi_operations_total";
inline constexpr const char* kOperationDuration = "vsphere_csi_operation_duration_seconds";
inline constexpr const char* kVolumeOpsHistogram = "vsphere_csi_volume_ops_histogram";

// The reference's optype of a CSI method ("" for the ones it does not record).
absl::string_view ReferenceOpType(absl::string_view method);
// The buckets of the reference's operation histograms, seconds.
std::vector<double> ReferenceOpBuckets();

// "/csi.v1.Controller/CreateVolume" -> "CreateVolume" (CSI method names are unique across the
// services, so the short name is enough and matches the sidecars' method_name label).
absl::string_view ShortMethodName(absl::string_view full_method);

class RpcMetricsInterceptorFactory : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  // `registry` null: log only.
  explicit RpcMetricsInterceptorFactory(metrics::Registry* registry);
  grpc::experimental::Interceptor* CreateServerInterceptor(
      grpc::experimental::ServerRpcInfo* info) override;

 private:
  metrics::Family* total_ = nullptr;
  metrics::Family* duration_ = nullptr;
  metrics::Family* volume_ops_ = nullptr;
};

}  // namespace ccm::csi
