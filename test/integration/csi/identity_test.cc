// The real vsphere-csi-driver binary, started as a child process: the node plugin answers Probe
// and GetPluginInfo over its socket and exits cleanly on SIGTERM; the controller serves /metrics;
// bad environments stop it at once with a message that says what to fix.
#include <gmock/gmock.h>
#include <grpcpp/client_context.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fstream>
#include <set>

#include "absl/strings/str_cat.h"
#include "csi/proto/csi.grpc.pb.h"
#include "httplib.h"
#include "integration/child_process.h"
#include "testing/csi_socket.h"
#include "testing/eventually.h"
#include "testing/free_port.h"

namespace ccm::integration {
namespace {

using ::testing::HasSubstr;

// argv for the driver with `env` set (through env(1), so the test's own environment stays as it
// is; exec keeps the pid, so signals reach the driver).
std::vector<std::string> Driver(const std::vector<std::string>& env,
                                const std::vector<std::string>& flags = {}) {
  std::vector<std::string> argv = {"/usr/bin/env", "-i"};
  argv.insert(argv.end(), env.begin(), env.end());
  argv.push_back(CSI_DRIVER_BINARY);
  argv.insert(argv.end(), flags.begin(), flags.end());
  return argv;
}

grpc::Status Probe(const std::string& sock, ::csi::v1::ProbeResponse* resp) {
  auto stub = ::csi::v1::Identity::NewStub(csi::testing::UnixChannel(sock));
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(2));
  return stub->Probe(&ctx, {}, resp);
}

TEST(CsiDriverBinaryTest, NodePluginServesIdentityAndStopsOnSigterm) {
  csi::testing::TempDir dir;
  const std::string sock = dir.File("csi.sock");
  // A socket left by a crashed run: the driver removes it and binds anew.
  csi::testing::MakeSocketFile(sock, /*keep_listening=*/false);
  auto p = ChildProcess::Start(
      Driver({"X_CSI_MODE=node", "CSI_ENDPOINT=unix://" + sock, "NODE_NAME=worker-1"}, {"--v=4"}),
      dir.File("driver"));
  ASSERT_TRUE(p.ok()) << p.status();

  ::csi::v1::ProbeResponse probe;
  ASSERT_TRUE(ccm::testing::Eventually([&] { return Probe(sock, &probe).ok(); })) << (*p)->Stderr();
  EXPECT_TRUE(probe.ready().value());

  auto stub = ::csi::v1::Identity::NewStub(csi::testing::UnixChannel(sock));
  {
    grpc::ClientContext ctx;
    ::csi::v1::GetPluginInfoResponse info;
    grpc::Status st = stub->GetPluginInfo(&ctx, {}, &info);
    ASSERT_TRUE(st.ok()) << st.error_message();
    EXPECT_EQ(info.name(), "csi.vsphere.vmware.com");
    EXPECT_FALSE(info.vendor_version().empty());
  }
  {
    // The spec: every instance of the plugin reports the same plugin capabilities, so the node
    // plugin announces CONTROLLER_SERVICE too. Without topology in a csi-vsphere.conf, no
    // VOLUME_ACCESSIBILITY_CONSTRAINTS (the external-provisioner v5 would then fail every
    // Immediate claim: no node registers topology keys).
    grpc::ClientContext ctx;
    ::csi::v1::GetPluginCapabilitiesResponse caps;
    ASSERT_TRUE(stub->GetPluginCapabilities(&ctx, {}, &caps).ok());
    std::set<int> services;
    for (const auto& c : caps.capabilities()) services.insert(c.service().type());
    EXPECT_TRUE(services.contains(::csi::v1::PluginCapability::Service::CONTROLLER_SERVICE));
    EXPECT_FALSE(
        services.contains(::csi::v1::PluginCapability::Service::VOLUME_ACCESSIBILITY_CONSTRAINTS));
  }
  {
    // Not served by the node plugin: Unimplemented, never a hang.
    auto controller = ::csi::v1::Controller::NewStub(csi::testing::UnixChannel(sock));
    grpc::ClientContext ctx;
    ::csi::v1::ControllerGetCapabilitiesResponse resp;
    EXPECT_EQ(controller->ControllerGetCapabilities(&ctx, {}, &resp).error_code(),
              grpc::StatusCode::UNIMPLEMENTED);
  }

  // Close our connection first: with an idle C++ client connected from another process, gRPC's
  // graceful shutdown waits about 5 s for the connection to go (measured; the client does not
  // poll its socket between calls). The sidecars and the kubelet are Go clients that always
  // read, so they do not hold a shutdown up.
  stub.reset();
  (*p)->Signal(SIGTERM);
  std::optional<int> code = (*p)->WaitExit(absl::Seconds(20));
  ASSERT_TRUE(code.has_value()) << "still running 20 s after SIGTERM";
  EXPECT_EQ(*code, 0) << (*p)->Stderr();
  EXPECT_NE(access(sock.c_str(), F_OK), 0) << "socket left behind";
  const std::string err = (*p)->Stderr();
  EXPECT_THAT(err, HasSubstr("starting in node mode"));
  EXPECT_THAT(err, HasSubstr("CSI Probe: OK"));  // -v 4 logs every RPC
  EXPECT_THAT(err, HasSubstr("CSI GetPluginInfo: OK"));
  EXPECT_THAT(err, HasSubstr("received signal 15"));
  EXPECT_THAT(err,
              ::testing::ContainsRegex(R"(^I[0-9]{4} [0-9:.]+ +[0-9]+ [a-z_]+\.cc:[0-9]+\] )"));
}

TEST(CsiDriverBinaryTest, ControllerServesMetricsOnItsPort) {
  csi::testing::TempDir dir;
  const std::string sock = dir.File("csi.sock");
  const std::string conf = dir.File("csi-vsphere.conf");
  std::ofstream(conf) << "[Global]\ncluster-id = \"cluster-1\"\nuser = \"u\"\npassword = \"p\"\n"
                         "[VirtualCenter \"127.0.0.1\"]\ndatacenters = \"dc1\"\n"
                         "[Labels]\nzone = \"k8s-zone\"\nregion = \"k8s-region\"\n";
  const int port = ccm::testing::FreePort();
  auto p = ChildProcess::Start(
      Driver({"X_CSI_MODE=controller", "CSI_ENDPOINT=" + sock, "VSPHERE_CSI_CONFIG=" + conf},
             {"--metrics-bind-address=127.0.0.1", absl::StrCat("--metrics-port=", port)}),
      dir.File("driver"));
  ASSERT_TRUE(p.ok()) << p.status();
  ::csi::v1::ProbeResponse probe;
  ASSERT_TRUE(ccm::testing::Eventually([&] { return Probe(sock, &probe).ok(); })) << (*p)->Stderr();

  httplib::Client http("127.0.0.1", port);
  std::string metrics;
  ASSERT_TRUE(ccm::testing::Eventually([&] {
    auto r = http.Get("/metrics");
    if (!r || r->status != 200) return false;
    metrics = r->body;
    // The vCenter requests (here the failed connection attempts) are counted like the CCM's.
    return metrics.find("cloudprovider_vsphere_api_requests_total{vcenter=\"127.0.0.1\"") !=
           std::string::npos;
  })) << (*p)->Stderr()
      << metrics;
  EXPECT_THAT(metrics, HasSubstr("vsphere_csi_info{version="));
  EXPECT_THAT(metrics, HasSubstr("vsphere_csi_operations_total{method=\"Probe\",code=\"OK\"}"));
  EXPECT_THAT(metrics, HasSubstr("vsphere_csi_vcenter_ready{vcenter=\"127.0.0.1\"} 0"));
  // Probe is the process's own health: ready although the configured vCenter (nothing listens
  // on 127.0.0.1:443) cannot be logged in to; /healthz names the vCenter, /livez does not care.
  EXPECT_TRUE(probe.ready().value());
  auto health = http.Get("/healthz?verbose");
  ASSERT_TRUE(health);
  EXPECT_NE(health->status, 200);
  EXPECT_THAT(health->body, HasSubstr("[-]vcenter-127.0.0.1 failed"));
  EXPECT_THAT(health->body, HasSubstr("[+]csi-probe ok"));
  auto live = http.Get("/livez");
  ASSERT_TRUE(live);
  EXPECT_EQ(live->status, 200);
  {
    // Topology in csi-vsphere.conf: VOLUME_ACCESSIBILITY_CONSTRAINTS announced, and the
    // Controller service.
    auto stub = ::csi::v1::Identity::NewStub(csi::testing::UnixChannel(sock));
    grpc::ClientContext ctx;
    ::csi::v1::GetPluginCapabilitiesResponse caps;
    ASSERT_TRUE(stub->GetPluginCapabilities(&ctx, {}, &caps).ok());
    std::set<int> services;
    for (const auto& c : caps.capabilities()) services.insert(c.service().type());
    EXPECT_TRUE(services.contains(::csi::v1::PluginCapability::Service::CONTROLLER_SERVICE));
    EXPECT_TRUE(
        services.contains(::csi::v1::PluginCapability::Service::VOLUME_ACCESSIBILITY_CONSTRAINTS));
  }

  (*p)->Signal(SIGTERM);
  std::optional<int> code = (*p)->WaitExit(absl::Seconds(20));
  ASSERT_TRUE(code.has_value());
  EXPECT_EQ(*code, 0) << (*p)->Stderr();
}

struct BadStart {
  std::string name;
  std::vector<std::string> env;  // CSI_ENDPOINT is added unless the case sets NO_ENDPOINT
  int want_code;
  std::vector<std::string> want_stderr;
};

class CsiDriverBadStartTest : public ::testing::TestWithParam<BadStart> {};

TEST_P(CsiDriverBadStartTest, ExitsAtOnceNamingTheProblem) {
  const BadStart& c = GetParam();
  csi::testing::TempDir dir;
  std::vector<std::string> env = c.env;
  if (std::find(env.begin(), env.end(), "NO_ENDPOINT=1") == env.end()) {
    env.push_back("CSI_ENDPOINT=unix://" + dir.File("csi.sock"));
  }
  auto p = ChildProcess::Start(Driver(env), dir.File("driver"));
  ASSERT_TRUE(p.ok()) << p.status();
  std::optional<int> code = (*p)->WaitExit(absl::Seconds(20));
  ASSERT_TRUE(code.has_value()) << "still running";
  const std::string err = (*p)->Stderr();
  EXPECT_EQ(*code, c.want_code) << err;
  for (const auto& w : c.want_stderr) EXPECT_THAT(err, HasSubstr(w));
}

INSTANTIATE_TEST_SUITE_P(
    Cases, CsiDriverBadStartTest,
    ::testing::Values(
        BadStart{"bad_mode",
                 {"X_CSI_MODE=both"},
                 2,
                 {"invalid value \"both\" specified for X_CSI_MODE, expecting 'node' or "
                  "'controller'",
                  "Usage: vsphere-csi-driver"}},
        BadStart{"no_mode", {}, 2, {"specified for X_CSI_MODE"}},
        BadStart{"no_endpoint",
                 {"X_CSI_MODE=node", "NO_ENDPOINT=1"},
                 2,
                 {"CSI endpoint cannot be empty: set CSI_ENDPOINT"}},
        BadStart{"unreadable_config",
                 {"X_CSI_MODE=controller", "VSPHERE_CSI_CONFIG=/nonexistent/csi-vsphere.conf"},
                 1,
                 {"cannot read CSI config /nonexistent/csi-vsphere.conf"}}),
    [](const ::testing::TestParamInfo<BadStart>& i) { return i.param.name; });

}  // namespace
}  // namespace ccm::integration
