#pragma once
// The CSI gRPC server: listens on the CSI endpoint (a unix socket), serves the Identity service
// plus the Controller and/or Node service it is given, counts and logs every RPC
// (rpc_metrics.h), and stops gracefully.
//
// Thread-safety: Start and Stop are called from one thread (main); the services are called on
// gRPC's threads and must be thread-safe themselves.

#include <grpcpp/server.h>

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "common/metrics.h"
#include "csi/proto/csi.grpc.pb.h"

namespace ccm::csi {

// What one process serves. The reference serves Identity always and Controller or Node by
// X_CSI_MODE; both at once is allowed here (a single-process test driver), neither is an error.
struct CsiServices {
  std::unique_ptr<::csi::v1::Identity::Service> identity;      // required
  std::unique_ptr<::csi::v1::Controller::Service> controller;  // optional
  std::unique_ptr<::csi::v1::Node::Service> node;              // optional
};

struct CsiServerOptions {
  std::string endpoint;  // unix:///csi/csi.sock or a plain path (endpoint.h)
  // How long Stop() lets RPCs in flight finish before cancelling them. The sidecars retry what
  // was cancelled, so this only needs to cover a typical CNS call, not the slowest.
  absl::Duration shutdown_grace = absl::Seconds(10);
  metrics::Registry* registry = nullptr;  // null: RPCs are logged but not counted
};

class CsiServer {
 public:
  CsiServer(CsiServerOptions options, CsiServices services);
  ~CsiServer();  // Stop()s
  CsiServer(const CsiServer&) = delete;
  CsiServer& operator=(const CsiServer&) = delete;

  // Removes a stale socket file, binds, registers the services and starts serving. Errors name
  // the endpoint and what is wrong with it.
  absl::Status Start();
  // Refuses new RPCs, gives those in flight `shutdown_grace`, cancels the rest, removes the
  // socket file. Idempotent.
  void Stop();

  const std::string& socket_path() const { return socket_path_; }
  bool serves_controller() const { return services_.controller != nullptr; }
  bool serves_node() const { return services_.node != nullptr; }

 private:
  const CsiServerOptions options_;
  CsiServices services_;
  std::string socket_path_;
  std::unique_ptr<grpc::Server> server_;
};

}  // namespace ccm::csi
