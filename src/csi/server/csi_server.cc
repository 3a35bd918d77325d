#include "csi/server/csi_server.h"

#include <grpcpp/security/server_credentials.h>
#include <grpcpp/server_builder.h>
#include <unistd.h>

#include <chrono>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/logging.h"
#include "csi/server/endpoint.h"
#include "csi/server/rpc_metrics.h"

namespace ccm::csi {

CsiServer::CsiServer(CsiServerOptions options, CsiServices services)
    : options_(std::move(options)), services_(std::move(services)) {}

CsiServer::~CsiServer() { Stop(); }

absl::Status CsiServer::Start() {
  if (server_ != nullptr) return absl::FailedPreconditionError("CSI server already started");
  if (services_.identity == nullptr) {
    return absl::InvalidArgumentError("CSI server: the Identity service is required");
  }
  if (services_.controller == nullptr && services_.node == nullptr) {
    return absl::InvalidArgumentError(
        "CSI server: either a Controller or a Node service is required");
  }
  absl::StatusOr<Endpoint> endpoint = ParseEndpoint(options_.endpoint);
  if (!endpoint.ok()) return endpoint.status();
  if (absl::Status s = RemoveStaleSocket(endpoint->socket_path); !s.ok()) return s;

  grpc::ServerBuilder builder;
  builder.AddListeningPort(endpoint->grpc_address, grpc::InsecureServerCredentials());
  builder.RegisterService(services_.identity.get());
  if (services_.controller != nullptr) builder.RegisterService(services_.controller.get());
  if (services_.node != nullptr) builder.RegisterService(services_.node.get());
  std::vector<std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>> interceptors;
  interceptors.push_back(std::make_unique<RpcMetricsInterceptorFactory>(options_.registry));
  builder.experimental().SetInterceptorCreators(std::move(interceptors));
  server_ = builder.BuildAndStart();
  if (server_ == nullptr) {
    // gRPC logs the errno on its own; the usual causes are a missing directory or permissions.
    return absl::UnavailableError(absl::StrCat("cannot listen on CSI endpoint ", options_.endpoint,
                                               ": check that the directory of ",
                                               endpoint->socket_path, " exists and is writable"));
  }
  socket_path_ = endpoint->socket_path;
  LOG_INFO("CSI server listening on {} (identity{}{})", options_.endpoint,
           services_.controller != nullptr ? ", controller" : "",
           services_.node != nullptr ? ", node" : "");
  return absl::OkStatus();
}

void CsiServer::Stop() {
  if (server_ == nullptr) return;
  const auto deadline =
      std::chrono::system_clock::now() + absl::ToChronoMilliseconds(options_.shutdown_grace);
  server_->Shutdown(deadline);
  server_->Wait();
  server_.reset();
  // Our own socket: remove it so a restart does not find a stale file (and the sidecars see
  // the plugin as gone at once rather than on their next dial).
  if (!socket_path_.empty()) unlink(socket_path_.c_str());
  LOG_INFO("CSI server on {} stopped", options_.endpoint);
}

}  // namespace ccm::csi
