// CsiServer over a real unix socket with real gRPC client channels: start-up checks, stale socket
// removal, per-method/per-code metrics, -v 4 logs, graceful stop.
#include "csi/server/csi_server.h"

#include <gmock/gmock.h>
#include <grpcpp/client_context.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <sstream>
#include <thread>

#include "absl/synchronization/notification.h"
#include "common/logging.h"
#include "csi/server/identity_service.h"
#include "csi/server/rpc_metrics.h"
#include "spdlog/sinks/ostream_sink.h"
#include "spdlog/sinks/stdout_sinks.h"
#include "testing/csi_socket.h"
#include "testing/eventually.h"

namespace ccm::csi {
namespace {

using ::testing::HasSubstr;

CsiServices NodeServices(std::function<absl::StatusOr<bool>()> ready = nullptr) {
  IdentityOptions o;
  o.name = "csi.vsphere.vmware.com";
  o.vendor_version = "test";
  o.ready = std::move(ready);
  auto identity = IdentityService::Create(std::move(o));
  EXPECT_TRUE(identity.ok());
  CsiServices s;
  s.identity = std::move(*identity);
  s.node = std::make_unique<::csi::v1::Node::Service>();
  return s;
}

grpc::Status Probe(const std::string& socket, ::csi::v1::ProbeResponse* resp = nullptr) {
  auto stub = ::csi::v1::Identity::NewStub(testing::UnixChannel(socket));
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
  ::csi::v1::ProbeResponse ignored;
  return stub->Probe(&ctx, {}, resp != nullptr ? resp : &ignored);
}

TEST(CsiServerTest, ServesOnAPlainPathAndRemovesTheSocketOnStop) {
  testing::TempDir dir;
  const std::string sock = dir.File("csi.sock");
  CsiServer server({.endpoint = sock}, NodeServices());
  ASSERT_TRUE(server.Start().ok());
  EXPECT_TRUE(server.serves_node());
  EXPECT_FALSE(server.serves_controller());
  EXPECT_TRUE(Probe(sock).ok());
  server.Stop();
  EXPECT_NE(access(sock.c_str(), F_OK), 0) << "socket file left behind";
  server.Stop();  // idempotent
}

TEST(CsiServerTest, RemovesAStaleSocketFromAPreviousRun) {
  testing::TempDir dir;
  const std::string sock = dir.File("csi.sock");
  testing::MakeSocketFile(sock, /*keep_listening=*/false);
  ASSERT_EQ(access(sock.c_str(), F_OK), 0);
  CsiServer server({.endpoint = "unix://" + sock}, NodeServices());
  absl::Status s = server.Start();
  ASSERT_TRUE(s.ok()) << s;
  ::csi::v1::ProbeResponse resp;
  ASSERT_TRUE(Probe(sock, &resp).ok());
  EXPECT_TRUE(resp.ready().value());
}

TEST(CsiServerTest, RefusesToTakeOverALiveSocket) {
  testing::TempDir dir;
  const std::string sock = dir.File("csi.sock");
  CsiServer first({.endpoint = sock}, NodeServices());
  ASSERT_TRUE(first.Start().ok());
  CsiServer second({.endpoint = sock}, NodeServices());
  absl::Status s = second.Start();
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(s.message()), HasSubstr("in use"));
  EXPECT_TRUE(Probe(sock).ok()) << "the first server must keep serving";
}

TEST(CsiServerTest, StartErrorsNameTheProblem) {
  testing::TempDir dir;
  {
    CsiServer tcp({.endpoint = "tcp://127.0.0.1:10000"}, NodeServices());
    absl::Status s = tcp.Start();
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(s.message()), HasSubstr("only unix sockets"));
  }
  {
    CsiServer missing_dir({.endpoint = dir.File("no/such/dir/csi.sock")}, NodeServices());
    absl::Status s = missing_dir.Start();
    EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable);
    EXPECT_THAT(std::string(s.message()), HasSubstr("cannot listen"));
  }
  {
    CsiServices no_identity;
    no_identity.node = std::make_unique<::csi::v1::Node::Service>();
    CsiServer server({.endpoint = dir.File("a.sock")}, std::move(no_identity));
    EXPECT_THAT(std::string(server.Start().message()), HasSubstr("Identity service is required"));
  }
  {
    CsiServices identity_only = NodeServices();
    identity_only.node.reset();
    CsiServer server({.endpoint = dir.File("b.sock")}, std::move(identity_only));
    EXPECT_THAT(std::string(server.Start().message()), HasSubstr("Controller or a Node"));
  }
}

TEST(CsiServerTest, CountsEveryRpcByMethodAndCode) {
  testing::TempDir dir;
  const std::string sock = dir.File("csi.sock");
  metrics::Registry registry;
  std::atomic<bool> healthy{true};
  CsiServices services = NodeServices([&]() -> absl::StatusOr<bool> {
    if (!healthy) return absl::UnavailableError("down");
    return true;
  });
  // The base Controller service answers every RPC Unimplemented, like a controller that does
  // not implement snapshots.
  services.controller = std::make_unique<::csi::v1::Controller::Service>();
  CsiServer server({.endpoint = sock, .registry = &registry}, std::move(services));
  ASSERT_TRUE(server.Start().ok());

  ASSERT_TRUE(Probe(sock).ok());
  ASSERT_TRUE(Probe(sock).ok());
  healthy = false;
  ASSERT_EQ(Probe(sock).error_code(), grpc::StatusCode::UNAVAILABLE);
  {
    auto stub = ::csi::v1::Controller::NewStub(testing::UnixChannel(sock));
    grpc::ClientContext ctx;
    ::csi::v1::CreateSnapshotResponse resp;
    ASSERT_EQ(stub->CreateSnapshot(&ctx, {}, &resp).error_code(), grpc::StatusCode::UNIMPLEMENTED);
  }
  {
    auto stub = ::csi::v1::Identity::NewStub(testing::UnixChannel(sock));
    grpc::ClientContext ctx;
    ::csi::v1::GetPluginInfoResponse resp;
    ASSERT_TRUE(stub->GetPluginInfo(&ctx, {}, &resp).ok());
  }

  // The interceptor records before the status is sent, so the counts are final once the client
  // has its answer.
  metrics::Family* total = registry.Find(kOperationsTotal);
  metrics::Family* duration = registry.Find(kOperationDuration);
  ASSERT_NE(total, nullptr);
  ASSERT_NE(duration, nullptr);
  EXPECT_EQ(total->Value({"Probe", "OK"}), 2);
  EXPECT_EQ(total->Value({"Probe", "Unavailable"}), 1);
  EXPECT_EQ(total->Value({"CreateSnapshot", "Unimplemented"}), 1);
  EXPECT_EQ(total->Value({"GetPluginInfo", "OK"}), 1);
  EXPECT_EQ(total->Value({"GetPluginInfo", "Unavailable"}), 0);
  EXPECT_EQ(duration->Count({"Probe"}), 3u);
  EXPECT_EQ(duration->Count({"CreateSnapshot"}), 1u);
  const std::string text = registry.Render();
  EXPECT_THAT(text, HasSubstr("vsphere_csi_operations_total{method=\"Probe\",code=\"OK\"} 2"));
  EXPECT_THAT(text, HasSubstr("vsphere_csi_operation_duration_seconds_count{method=\"Probe\"} 3"));
}

TEST(CsiServerTest, LogsEachRpcAtVerbosityFour) {
  std::ostringstream logs;
  logging::SetSink(std::make_shared<spdlog::sinks::ostream_sink_mt>(logs));
  logging::SetVerbosity(4);
  testing::TempDir dir;
  const std::string sock = dir.File("csi.sock");
  CsiServer server({.endpoint = sock}, NodeServices([]() -> absl::StatusOr<bool> {
                     return absl::FailedPreconditionError("vCenter vc1 not ready");
                   }));
  ASSERT_TRUE(server.Start().ok());
  ASSERT_FALSE(Probe(sock).ok());
  server.Stop();
  logging::SetVerbosity(0);
  logging::SetSink(std::make_shared<spdlog::sinks::stderr_sink_mt>());  // `logs` dies here
  const std::string out = logs.str();
  EXPECT_THAT(out, HasSubstr("CSI Probe: FailedPrecondition in "));
  EXPECT_THAT(out, HasSubstr("vCenter vc1 not ready"));
  // klog header: severity letter, date, time, thread, file:line.
  EXPECT_THAT(out, ::testing::ContainsRegex(
                       R"(I[0-9]{4} [0-9:.]+ +[0-9]+ rpc_metrics\.cc:[0-9]+\] CSI Probe)"));
}

TEST(CsiServerTest, StopLetsAnRpcInFlightFinish) {
  testing::TempDir dir;
  const std::string sock = dir.File("csi.sock");
  absl::Notification entered, release;
  CsiServer server({.endpoint = sock, .shutdown_grace = absl::Seconds(30)},
                   NodeServices([&]() -> absl::StatusOr<bool> {
                     entered.Notify();
                     release.WaitForNotification();
                     return true;
                   }));
  ASSERT_TRUE(server.Start().ok());
  grpc::Status slow;
  ::csi::v1::ProbeResponse slow_resp;
  std::thread client([&] { slow = Probe(sock, &slow_resp); });
  entered.WaitForNotification();
  std::atomic<bool> stopped{false};
  std::thread stopper([&] {
    server.Stop();
    stopped = true;
  });
  // Once Stop has begun, new RPCs are refused while the one in flight still runs.
  auto info_ok = [&] {
    auto stub = ::csi::v1::Identity::NewStub(testing::UnixChannel(sock));
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(2));
    ::csi::v1::GetPluginInfoResponse resp;
    return stub->GetPluginInfo(&ctx, {}, &resp).ok();
  };
  ASSERT_TRUE(ccm::testing::Eventually([&] { return !info_ok(); }));
  EXPECT_FALSE(stopped.load()) << "Stop returned while an RPC was still in flight";
  release.Notify();
  client.join();
  stopper.join();
  EXPECT_TRUE(stopped.load());
  ASSERT_TRUE(slow.ok()) << slow.error_message();
  EXPECT_TRUE(slow_resp.ready().value());
}

}  // namespace
}  // namespace ccm::csi
