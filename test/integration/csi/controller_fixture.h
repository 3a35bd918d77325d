#pragma once
// The fixture of the Controller service suites that share one ControllerEnv (simulator, backend,
// socket) per suite, as NodeFixture is the node tests': the environment from Derived::Spec()
// (ZonesSpec() when Derived has none), started once, and one call per Controller RPC on its
// socket. Suites that stop a vCenter or fill a datastore start their own ControllerEnv per test.
//
//   class FooTest : public ControllerFixture<FooTest> {};

#include <memory>
#include <string>

#include "csi/proto/csi.grpc.pb.h"
#include "gtest/gtest.h"
#include "integration/csi/controller_env.h"

namespace ccm::csi::testing {

inline constexpr int64_t kGiB = int64_t{1024} * 1024 * 1024;

template <class Derived>
class ControllerFixture : public ::testing::Test {
 public:
  static void SetUpTestSuite() {
    std::string spec;
    if constexpr (requires { Derived::Spec(); }) {
      spec = Derived::Spec();
    } else {
      spec = ZonesSpec();
    }
    auto env = ControllerEnv::Start(spec);
    ASSERT_TRUE(env.ok()) << env.status();
    env_ = *std::move(env);
  }
  static void TearDownTestSuite() { env_.reset(); }

 protected:
  void SetUp() override { ASSERT_NE(env_, nullptr) << "the suite's environment did not start"; }

  static ControllerEnv& env() { return *env_; }
  static ::csi::v1::Controller::Stub& c() { return env_->controller(); }

  static grpc::Status Create(const ::csi::v1::CreateVolumeRequest& req,
                             ::csi::v1::CreateVolumeResponse* resp = nullptr) {
    grpc::ClientContext ctx;
    ::csi::v1::CreateVolumeResponse ignored;
    return c().CreateVolume(&ctx, req, resp != nullptr ? resp : &ignored);
  }
  // Creates a volume and returns its ID ("" on failure, with a test failure).
  static std::string MustCreate(const std::string& name, int64_t bytes = kGiB) {
    ::csi::v1::CreateVolumeResponse resp;
    grpc::Status s = Create(CreateReq(name, bytes), &resp);
    EXPECT_TRUE(s.ok()) << name << ": " << s.error_message();
    return resp.volume().volume_id();
  }
  static grpc::Status Delete(const std::string& id) {
    grpc::ClientContext ctx;
    ::csi::v1::DeleteVolumeRequest req;
    req.set_volume_id(id);
    ::csi::v1::DeleteVolumeResponse resp;
    return c().DeleteVolume(&ctx, req, &resp);
  }
  static ::csi::v1::ControllerPublishVolumeRequest PubReq(const std::string& id,
                                                          const std::string& node) {
    ::csi::v1::ControllerPublishVolumeRequest req;
    req.set_volume_id(id);
    req.set_node_id(node);
    *req.mutable_volume_capability() = MountCap();
    return req;
  }
  static grpc::Status Publish(const ::csi::v1::ControllerPublishVolumeRequest& req,
                              ::csi::v1::ControllerPublishVolumeResponse* resp = nullptr) {
    grpc::ClientContext ctx;
    ::csi::v1::ControllerPublishVolumeResponse ignored;
    return c().ControllerPublishVolume(&ctx, req, resp != nullptr ? resp : &ignored);
  }
  static grpc::Status Unpublish(const std::string& id, const std::string& node) {
    grpc::ClientContext ctx;
    ::csi::v1::ControllerUnpublishVolumeRequest req;
    req.set_volume_id(id);
    req.set_node_id(node);
    ::csi::v1::ControllerUnpublishVolumeResponse resp;
    return c().ControllerUnpublishVolume(&ctx, req, &resp);
  }
  static grpc::Status List(const std::string& token, int32_t max,
                           ::csi::v1::ListVolumesResponse* resp) {
    grpc::ClientContext ctx;
    ::csi::v1::ListVolumesRequest req;
    req.set_starting_token(token);
    req.set_max_entries(max);
    return c().ListVolumes(&ctx, req, resp);
  }

 private:
  static inline std::unique_ptr<ControllerEnv> env_;
};

}  // namespace ccm::csi::testing
