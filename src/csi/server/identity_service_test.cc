// The Identity service over a real unix socket and a real gRPC client channel.
#include "csi/server/identity_service.h"

#include <gmock/gmock.h>
#include <grpcpp/client_context.h>
#include <gtest/gtest.h>

#include <atomic>

#include "csi/server/csi_server.h"
#include "testing/csi_socket.h"

namespace ccm::csi {
namespace {

using ::csi::v1::PluginCapability;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Serves `identity` (plus an empty Node or Controller service, which the server requires) on a
// socket in a temp dir and hands out an Identity client stub.
class IdentityOverSocket {
 public:
  explicit IdentityOverSocket(IdentityOptions options, bool controller = false) {
    auto identity = IdentityService::Create(std::move(options));
    EXPECT_TRUE(identity.ok()) << identity.status();
    CsiServices services;
    services.identity = std::move(*identity);
    if (controller) {
      services.controller = std::make_unique<::csi::v1::Controller::Service>();
    } else {
      services.node = std::make_unique<::csi::v1::Node::Service>();
    }
    server_ = std::make_unique<CsiServer>(
        CsiServerOptions{.endpoint = "unix://" + dir_.File("csi.sock")}, std::move(services));
    absl::Status s = server_->Start();
    EXPECT_TRUE(s.ok()) << s;
    stub_ = ::csi::v1::Identity::NewStub(testing::UnixChannel(dir_.File("csi.sock")));
  }
  ::csi::v1::Identity::Stub& stub() { return *stub_; }

 private:
  testing::TempDir dir_;
  std::unique_ptr<CsiServer> server_;
  std::unique_ptr<::csi::v1::Identity::Stub> stub_;
};

IdentityOptions Base() {
  IdentityOptions o;
  o.name = "csi.vsphere.vmware.com";
  o.vendor_version = "1.2.3";
  return o;
}

std::vector<std::string> CapabilityNames(const ::csi::v1::GetPluginCapabilitiesResponse& r) {
  std::vector<std::string> out;
  for (const auto& c : r.capabilities()) {
    if (c.has_service()) {
      out.push_back(PluginCapability::Service::Type_Name(c.service().type()));
    } else {
      out.push_back("expansion:" +
                    PluginCapability::VolumeExpansion::Type_Name(c.volume_expansion().type()));
    }
  }
  return out;
}

TEST(IdentityServiceTest, GetPluginInfo) {
  IdentityOptions o = Base();
  o.manifest = {{"url", "https://example.test"}};
  IdentityOverSocket s(std::move(o));
  grpc::ClientContext ctx;
  ::csi::v1::GetPluginInfoResponse resp;
  grpc::Status st = s.stub().GetPluginInfo(&ctx, {}, &resp);
  ASSERT_TRUE(st.ok()) << st.error_message();
  EXPECT_EQ(resp.name(), "csi.vsphere.vmware.com");
  EXPECT_EQ(resp.vendor_version(), "1.2.3");
  EXPECT_EQ(resp.manifest().at("url"), "https://example.test");
}

TEST(IdentityServiceTest, ControllerPluginCapabilities) {
  IdentityOptions o = Base();
  o.controller_service = true;
  o.accessibility_constraints = true;
  IdentityOverSocket s(std::move(o), /*controller=*/true);
  grpc::ClientContext ctx;
  ::csi::v1::GetPluginCapabilitiesResponse resp;
  ASSERT_TRUE(s.stub().GetPluginCapabilities(&ctx, {}, &resp).ok());
  EXPECT_THAT(CapabilityNames(resp),
              ElementsAre("CONTROLLER_SERVICE", "VOLUME_ACCESSIBILITY_CONSTRAINTS"));
}

TEST(IdentityServiceTest, NodePluginDoesNotAnnounceTheControllerService) {
  IdentityOptions o = Base();
  o.accessibility_constraints = true;
  IdentityOverSocket s(std::move(o));
  grpc::ClientContext ctx;
  ::csi::v1::GetPluginCapabilitiesResponse resp;
  ASSERT_TRUE(s.stub().GetPluginCapabilities(&ctx, {}, &resp).ok());
  EXPECT_THAT(CapabilityNames(resp), ElementsAre("VOLUME_ACCESSIBILITY_CONSTRAINTS"));
}

TEST(IdentityServiceTest, VolumeExpansionOnlyAsConfigured) {
  IdentityOptions o = Base();
  o.controller_service = true;
  o.volume_expansion = {PluginCapability::VolumeExpansion::ONLINE,
                        PluginCapability::VolumeExpansion::OFFLINE};
  IdentityOverSocket s(std::move(o), /*controller=*/true);
  grpc::ClientContext ctx;
  ::csi::v1::GetPluginCapabilitiesResponse resp;
  ASSERT_TRUE(s.stub().GetPluginCapabilities(&ctx, {}, &resp).ok());
  EXPECT_THAT(CapabilityNames(resp),
              ElementsAre("CONTROLLER_SERVICE", "expansion:ONLINE", "expansion:OFFLINE"));
}

TEST(IdentityServiceTest, ProbeFollowsTheReadyCallback) {
  std::atomic<int> state{0};  // 0 starting, 1 ready, 2 unhealthy
  IdentityOptions o = Base();
  o.ready = [&]() -> absl::StatusOr<bool> {
    if (state == 2) return absl::UnavailableError("vCenter vc1: not logged in");
    return state == 1;
  };
  IdentityOverSocket s(std::move(o));
  auto probe = [&](::csi::v1::ProbeResponse* resp) {
    grpc::ClientContext ctx;
    return s.stub().Probe(&ctx, {}, resp);
  };

  ::csi::v1::ProbeResponse starting;
  ASSERT_TRUE(probe(&starting).ok());
  ASSERT_TRUE(starting.has_ready()) << "ready is always set explicitly";
  EXPECT_FALSE(starting.ready().value());

  state = 1;
  ::csi::v1::ProbeResponse ready;
  ASSERT_TRUE(probe(&ready).ok());
  EXPECT_TRUE(ready.ready().value());

  state = 2;
  ::csi::v1::ProbeResponse unhealthy;
  grpc::Status st = probe(&unhealthy);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_THAT(st.error_message(), HasSubstr("not logged in"));
}

TEST(IdentityServiceTest, ProbeWithoutCallbackIsReady) {
  IdentityOverSocket s(Base());
  grpc::ClientContext ctx;
  ::csi::v1::ProbeResponse resp;
  ASSERT_TRUE(s.stub().Probe(&ctx, {}, &resp).ok());
  EXPECT_TRUE(resp.ready().value());
}

TEST(IdentityServiceTest, NameAndVersionFollowTheSpec) {
  struct Case {
    std::string name;
    bool ok;
  };
  const Case cases[] = {
      {"csi.vsphere.vmware.com", true},
      {"a", true},
      {"a-b.c9", true},
      {std::string(63, 'x'), true},
      {"", false},
      {std::string(64, 'x'), false},
      {"-csi.vmware.com", false},
      {"csi.vmware.com.", false},
      {"csi_vsphere", false},
      {"csi vsphere", false},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(ValidatePluginName(c.name).ok(), c.ok);
    IdentityOptions o = Base();
    o.name = c.name;
    EXPECT_EQ(IdentityService::Create(std::move(o)).ok(), c.ok);
  }
  IdentityOptions no_version = Base();
  no_version.vendor_version.clear();
  auto s = IdentityService::Create(std::move(no_version));
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.status().message()), HasSubstr("vendor_version"));
}

}  // namespace
}  // namespace ccm::csi
