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
#include "integration/csi/controller_calls.h"
#include "integration/csi/controller_env.h"

namespace ccm::csi::testing {

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
    return CallCreate(c(), req, resp);
  }
  // Creates a volume and returns its ID ("" on failure, with a test failure).
  static std::string MustCreate(const std::string& name, int64_t bytes = kGiB) {
    ::csi::v1::CreateVolumeResponse resp;
    grpc::Status s = Create(CreateReq(name, bytes), &resp);
    EXPECT_TRUE(s.ok()) << name << ": " << s.error_message();
    return resp.volume().volume_id();
  }
  static grpc::Status Delete(const std::string& id) { return CallDelete(c(), id); }
  static grpc::Status Publish(const ::csi::v1::ControllerPublishVolumeRequest& req,
                              ::csi::v1::ControllerPublishVolumeResponse* resp = nullptr) {
    return CallPublish(c(), req, resp);
  }
  static grpc::Status Unpublish(const std::string& id, const std::string& node) {
    return CallUnpublish(c(), id, node);
  }
  static grpc::Status List(const std::string& token, int32_t max,
                           ::csi::v1::ListVolumesResponse* resp) {
    return CallList(c(), token, max, resp);
  }

 private:
  static inline std::unique_ptr<ControllerEnv> env_;
};

}  // namespace ccm::csi::testing
