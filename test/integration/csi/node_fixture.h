#pragma once
// The test fixture the Node service tests share: a NodeEnv (started by SetUp with a 20 s device
// wait, or again by StartEnv with another) and one call per Node RPC on its socket.

#include <memory>
#include <string>

#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "integration/csi/node_env.h"

namespace ccm::csi::testing {

class NodeFixture : public ::testing::Test {
 protected:
  void SetUp() override { StartEnv(absl::Seconds(20)); }

  // Replaces the environment (its mounts and devices are cleaned up first).
  void StartEnv(absl::Duration wait) {
    env_.reset();
    auto env = NodeEnv::Start(wait);
    ASSERT_TRUE(env.ok()) << env.status();
    env_ = std::move(*env);
  }

  grpc::Status Stage(const ::csi::v1::NodeStageVolumeRequest& r) {
    grpc::ClientContext ctx;
    ::csi::v1::NodeStageVolumeResponse resp;
    return env_->node().NodeStageVolume(&ctx, r, &resp);
  }
  grpc::Status Publish(const ::csi::v1::NodePublishVolumeRequest& r) {
    grpc::ClientContext ctx;
    ::csi::v1::NodePublishVolumeResponse resp;
    return env_->node().NodePublishVolume(&ctx, r, &resp);
  }
  grpc::Status Unpublish(const std::string& volume, const std::string& target) {
    grpc::ClientContext ctx;
    ::csi::v1::NodeUnpublishVolumeResponse resp;
    return env_->node().NodeUnpublishVolume(&ctx, UnpublishReq(volume, target), &resp);
  }
  grpc::Status Unstage(const std::string& volume, const std::string& staging) {
    grpc::ClientContext ctx;
    ::csi::v1::NodeUnstageVolumeResponse resp;
    return env_->node().NodeUnstageVolume(&ctx, UnstageReq(volume, staging), &resp);
  }

  std::unique_ptr<NodeEnv> env_;  // destroyed last: unmounts what a failed test left
};

}  // namespace ccm::csi::testing
