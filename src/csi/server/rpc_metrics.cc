#include "csi/server/rpc_metrics.h"

#include <map>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/logging.h"
#include "csi/server/grpc_status.h"

namespace ccm::csi {
namespace {

using grpc::experimental::InterceptionHookPoints;

// One per RPC: created when the call arrives, destroyed when it is done.
class RpcMetricsInterceptor : public grpc::experimental::Interceptor {
 public:
  RpcMetricsInterceptor(std::string method, metrics::Family* total, metrics::Family* duration,
                        metrics::Family* volume_ops)
      : method_(std::move(method)),
        total_(total),
        duration_(duration),
        volume_ops_(volume_ops),
        start_(absl::Now()) {}

  ~RpcMetricsInterceptor() override {
    // A call that ended without the server sending a status (the client went away first).
    if (!recorded_) Record(grpc::Status(grpc::StatusCode::CANCELLED, "client cancelled"), "");
  }

  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    if (methods->QueryInterceptionHookPoint(InterceptionHookPoints::PRE_SEND_STATUS)) {
      std::string fault_type, volume_type = "block";
      if (std::multimap<std::string, std::string>* trailing = methods->GetSendTrailingMetadata()) {
        for (auto [key, out] : {std::pair{kFaultTypeMetadata, &fault_type},
                                std::pair{kVolumeTypeMetadata, &volume_type}}) {
          auto it = trailing->find(key);
          if (it != trailing->end()) {
            *out = it->second;
            trailing->erase(it);  // ours only: not sent to the client
          }
        }
      }
      Record(methods->GetSendStatus(), fault_type, volume_type);
    }
    methods->Proceed();
  }

 private:
  void Record(const grpc::Status& status, const std::string& fault_type,
              const std::string& volume_type = "block") {
    recorded_ = true;
    const double seconds = absl::ToDoubleSeconds(absl::Now() - start_);
    const std::string code(GrpcCodeName(status.error_code()));
    if (total_ != nullptr) total_->Add({method_, code});
    if (duration_ != nullptr) duration_->Observe({method_}, seconds);
    if (absl::string_view op = ReferenceOpType(method_); volume_ops_ != nullptr && !op.empty()) {
      std::string fault;
      if (!status.ok()) {
        fault = fault_type.empty() ? DefaultFaultType(status.error_code()) : fault_type;
      }
      volume_ops_->Observe({volume_type, std::string(op), status.ok() ? "pass" : "fail", fault},
                           seconds);
    }
    if (status.ok()) {
      VLOG(4, "CSI {}: OK in {:.3f}s", method_, seconds);
    } else {
      VLOG(4, "CSI {}: {} in {:.3f}s: {}", method_, code, seconds, status.error_message());
    }
  }

  const std::string method_;
  metrics::Family* const total_;
  metrics::Family* const duration_;
  metrics::Family* const volume_ops_;
  const absl::Time start_;
  bool recorded_ = false;
};

}  // namespace

absl::string_view ReferenceOpType(absl::string_view method) {
  static const auto* const ops = new std::map<absl::string_view, absl::string_view>{
      {"CreateVolume", "create-volume"},
      {"DeleteVolume", "delete-volume"},
      {"ControllerPublishVolume", "attach-volume"},
      {"ControllerUnpublishVolume", "detach-volume"},
      {"ControllerExpandVolume", "expand-volume"},
      {"ListVolumes", "list-volume"},
      {"CreateSnapshot", "create-snapshot"},
      {"DeleteSnapshot", "delete-snapshot"},
      {"ListSnapshots", "list-snapshot"},
  };
  auto it = ops->find(method);
  return it == ops->end() ? absl::string_view() : it->second;
}

std::vector<double> ReferenceOpBuckets() { return {2, 5, 10, 15, 20, 25, 30, 60, 120, 180}; }

absl::string_view ShortMethodName(absl::string_view full_method) {
  auto slash = full_method.rfind('/');
  return slash == absl::string_view::npos ? full_method : full_method.substr(slash + 1);
}

RpcMetricsInterceptorFactory::RpcMetricsInterceptorFactory(metrics::Registry* registry) {
  if (registry == nullptr) return;
  // Registry returns the existing family for a name it has, so a second server on the same
  // registry (tests, an in-process restart) shares these.
  total_ = registry->Counter(kOperationsTotal, "CSI RPCs answered, by method and gRPC code.",
                             {"method", "code"});
  duration_ = registry->Histogram(kOperationDuration, "CSI RPC latency in seconds, by method.",
                                  {"method"}, metrics::LatencyBuckets());
  volume_ops_ =
      registry->Histogram(kVolumeOpsHistogram, "Histogram vector for CSI volume operations.",
                          {"voltype", "optype", "status", "faulttype"}, ReferenceOpBuckets());
}

grpc::experimental::Interceptor* RpcMetricsInterceptorFactory::CreateServerInterceptor(
    grpc::experimental::ServerRpcInfo* info) {
  return new RpcMetricsInterceptor(std::string(ShortMethodName(info->method())), total_, duration_,
                                   volume_ops_);
}

}  // namespace ccm::csi
