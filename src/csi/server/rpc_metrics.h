#pragma once
// Counts and times every CSI RPC the server answers, and logs each at -v 4, from one gRPC server
// interceptor, so no service has to remember to.
//
// Metric names. The reference driver has no per-RPC metric: its vsphere_csi_volume_ops_histogram
// {voltype,optype,status,faulttype} is recorded by the controller code per volume operation
// (create-volume, attach-volume, ...); this driver does not record it (the interceptor cannot
// know voltype or faulttype), and vCenter/CNS requests are counted by the vCenter client's
// cloudprovider_vsphere_api_* metrics instead. These two are ours, named with the reference's
// `vsphere_` prefix like all its metrics (vsphere_csi_info, vsphere_cns_volume_ops_histogram,
// vsphere_request_ops_seconds), and with the gRPC code spelled as the CSI sidecars'
// csi_sidecar_operations_seconds{grpc_status_code} spells it, so both sides of a call can be
// joined on method and code:
//   vsphere_csi_operations_total{method,code}        counter; method = "CreateVolume", ...
//   vsphere_csi_operation_duration_seconds{method}   histogram

#include <grpcpp/support/server_interceptor.h>

#include <memory>

#include "absl/strings/string_view.h"
#include "common/metrics.h"

namespace ccm::csi {

inline constexpr const char* kOperationsTotal = "vsphere_csi_operations_total";
inline constexpr const char* kOperationDuration = "vsphere_csi_operation_duration_seconds";

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
};

}  // namespace ccm::csi
